//! The Raft family's narration, one module per participant kind in `protocols::raft`.

pub mod client;
pub mod server;
