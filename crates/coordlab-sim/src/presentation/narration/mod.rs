//! The narration: for each participant kind, the typed observations its handlers emit and
//! the sentences they read as (`impl From<Observation> for String`, so a handler writes
//! `ctx.note(LeaseStoreSaw::Expired { .. })`). Every family's handlers narrate this way.

pub mod database;
pub mod lease;
pub mod raft;
pub mod redis_locks;
pub mod services;
pub mod zookeeper_locks;
