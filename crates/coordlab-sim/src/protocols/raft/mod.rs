//! A Raft server and a small client, as pure state machines (Ongaro & Ousterhout, "In Search
//! of an Understandable Consensus Algorithm", 2014).
//!
//! The server follows the paper's Figure 2: roles follower / candidate / leader; terms only
//! grow; a message carrying a higher term makes the receiver adopt it and step down *before*
//! it handles the message; a message with a stale term is refused. Current term, vote and log
//! are persisted ([`ServerDurable`]); role, commit index, applied state and the leader's
//! per-follower progress are volatile and rebuilt after a restart.
//!
//! Three switches in [`RaftBug`] plant well-known mistakes so the safety checker can be seen
//! failing. With [`RaftBug::None`] the server is meant to be correct.
//!
//! Every server and client draws randomness only from its own stream (`ctx.rng`) and reads
//! only its own clock (`ctx.local_now_us`).
//!
//! - [`types`]: terms, log indexes, entries, commands, roles, planted bugs.
//! - [`msg`]: the wire messages and their labels.
//! - [`server`]: [`RaftServer`] (election and replication in its submodules).
//! - [`client`]: [`RaftClient`], the write workload.
//! - [`cells`]: the log as a node's card draws it.

pub mod cells;
pub mod client;
pub mod msg;
pub mod server;
pub mod types;

pub use client::{next_server, ClientConfig, ClientTimer, RaftClient};
pub use msg::{ClientAnswer, RaftMsg};
pub use server::{RaftServer, RaftTimer, ServerConfig, ServerDurable};
pub use types::{Command, Entry, LogIndex, RaftBug, Role, Term, MAX_SERVERS};
