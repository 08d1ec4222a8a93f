//! How a Raft command ([`Command`]) and a server's role ([`Role`]) read on its card and in the
//! event log.

use crate::protocols::raft::types::{Command, Role};
use std::fmt;

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Set { key, value } => write!(f, "set {key}={value}"),
            Command::Lock(op) => write!(f, "{op}"),
        }
    }
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Follower => "FOLLOWER",
            Role::Candidate => "CANDIDATE",
            Role::Leader => "LEADER",
        }
    }
}
