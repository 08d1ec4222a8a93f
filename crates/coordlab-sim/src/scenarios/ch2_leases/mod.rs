//! Chapter 2, leases: across machines no connection dies with the holder, so a lock carries
//! an expiry. A scheduled job runs twice without one; a lease row goes through its whole life
//! (grant, renew, expire, take over); a careless release frees another worker's lease; a
//! lease kept on a lagging replica or in a table per node gives two holders; and some jobs
//! need no lease at all (a unique key, a conditional update, partitioning). The
//! stories are built on the lease family's shared plan (`lease_setup`) and world (`lease_world`).

/// The chapter of the course this folder's scenarios belong to (the registry gives it to each;
/// the course walks chapters in order).
pub const CHAPTER: u8 = 2;

pub mod duplicate_job;
pub mod lease_lifecycle;
pub mod lease_placement;
pub mod lock_alternatives;
pub mod wrong_release;
