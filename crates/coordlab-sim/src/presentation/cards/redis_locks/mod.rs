//! The cards of the Redis family's participants.

mod redis;
mod redis_sentinel;
