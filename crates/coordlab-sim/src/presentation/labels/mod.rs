//! The one-line labels of each family's messages and timers, as the picture's arrows and the
//! event log show them.

mod database;
pub mod job;
mod lease;
mod raft;
mod redis_locks;
mod services;
mod zookeeper_locks;
