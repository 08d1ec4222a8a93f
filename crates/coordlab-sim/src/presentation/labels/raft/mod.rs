//! The labels of Raft's messages and timers.

mod client;
mod msg;
mod server;
mod types;
