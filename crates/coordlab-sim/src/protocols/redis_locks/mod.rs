//! The Redis family (chapter 6): a Redis node with `SET NX PX`, expiry by its own clock and
//! asynchronous replication (`redis`), three Sentinels that agree the primary is down and
//! elect one of them to promote a replica (`redis_sentinel`), the single-primary lock client (`redis_worker`) and the
//! Redlock client across independent masters (`redlock_client`), with what the two share
//! (`redis_job`) and the wire vocabulary (`redis_msg`).

pub mod redis;
pub mod redis_job;
pub mod redis_msg;
pub mod redis_sentinel;
pub mod redis_worker;
pub mod redlock_client;
