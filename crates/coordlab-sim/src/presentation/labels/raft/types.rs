//! How a Raft command ([`Command`]) and a server's role ([`Role`]) read on its card and in the
//! event log.

use crate::protocols::raft::types::{keeps_kv, Command, Role};
use std::fmt;

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Set { key, value } if keeps_kv() => write!(f, "set {key}={value}"),
            // No writer of this build sends one (`KV_WRITERS`).
            Command::Set { .. } => Ok(()),
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
