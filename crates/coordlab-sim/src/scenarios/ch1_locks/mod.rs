//! Chapter 1, locks and lost updates: everything happens inside one database. Two workers
//! that read, change and write the same row lose an update; row locks (`FOR UPDATE`, its
//! modes, `SKIP LOCKED` queues), advisory locks, the size of what is locked and a deadlock
//! show what one lock manager gives for free: it sees every holder, and a holder's connection
//! dying releases its locks. `db_common` builds the database and its workers for the chapter.

/// The chapter of the course this folder's scenarios belong to (the registry gives it to each;
/// the course walks chapters in order).
pub const CHAPTER: u8 = 1;

pub mod advisory_locks;
pub mod db_common;
pub mod deadlock;
pub mod lock_granularity;
pub mod lost_update;
pub mod row_lock_modes;
pub mod skip_locked_queue;
