//! The cards of the Redis family's participants.

mod redis;
mod redis_job;
mod redis_sentinel;
mod redis_worker;
mod redlock_client;
