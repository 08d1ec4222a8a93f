//! The Redis family's narration, one module per participant kind in `protocols::redis_locks`.

pub mod redis;
pub mod redis_job;
pub mod redis_sentinel;
pub mod redis_worker;
pub mod redlock_client;
