//! Chapter 3, a holder that is alive but late: a paused process, a clock that runs fast or is
//! stepped back, waiters retrying in lockstep, and a lock held across a slow call. The worker
//! still believes it holds a lease the store has already given away; the runs measure how
//! long two holders overlap. `call_world` checks the lock-across-a-call story.

/// The chapter of the course this folder's scenarios belong to (the registry gives it to each;
/// the course walks chapters in order).
pub const CHAPTER: u8 = 3;

pub mod call_world;
pub mod clock_skew;
mod clock_skew_beats;
pub mod lease_stampede;
pub mod lock_across_call;
pub mod zombie_worker;
mod zombie_worker_beats;
