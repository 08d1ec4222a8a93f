//! Chapter 4, fencing tokens: the resource, not the worker, refuses a stale holder's write
//! because its token is older than one it has seen. The stories show what a fence guards and
//! what it does not (a resource that cannot check a token), the mistakes that open it again,
//! and where tokens come from in real stores.

/// The chapter of the course this folder's scenarios belong to (the registry gives it to each;
/// the course walks chapters in order).
pub const CHAPTER: u8 = 4;

pub mod fence_mistakes;
pub mod token_sources;
pub mod unfenceable_resource;
