//! What a reader sees of each protocol, kept apart from the protocol logic in
//! [`crate::protocols`], which decides what happens and says it in typed values only.
//! Each part mirrors the protocol families (`database`, `lease`, `redis_locks`, `raft`,
//! `zookeeper_locks`, `services`):
//! - `cards`: what a node's card shows, live and while it is down (its one-word state,
//!   badges, details, gauge and log), the seam the picture draws from;
//! - `durations`: times as the labels and narration write them;
//! - `labels`: the one-line labels of messages and timers on the arrows and in the log;
//! - `narration`: the sentences the story panel shows for what a handler observed.

pub mod amounts;
pub mod cards;
pub mod durations;
pub mod labels;
pub mod narration;
