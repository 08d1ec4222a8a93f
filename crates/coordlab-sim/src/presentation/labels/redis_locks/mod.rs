//! The labels of the Redis family's messages and timers.

mod redis;
mod redis_msg;
mod redis_sentinel;
mod redis_worker;
mod redlock_client;
