//! The cards of the Raft family's participants.

mod client;
mod server;
