//! What Raft puts on the wire: the server-to-server RPCs of the paper's Figure 2 and the
//! client protocol, with the one-line labels the trace shows.

use super::types::{Command, Entry, LogIndex, Term};
use crate::kernel::ids::NodeId;
use crate::protocols::services::lock_store::LockResult;

/// What a server answers a client. (Labels name servers `S1`, `S2`, … by id + 1, as the
/// Raft scenarios do.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientAnswer {
    /// Not the leader; the last leader this server heard from, if any.
    NotLeader { leader: Option<NodeId> },
    /// The command is committed and applied at this index.
    Committed { index: LogIndex },
    /// A lock operation is committed and applied at this index, with this result.
    Locked { index: LogIndex, result: LockResult },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaftMsg {
    RequestVote {
        term: Term,
        last_log_index: LogIndex,
        last_log_term: Term,
    },
    Vote {
        term: Term,
        granted: bool,
    },
    AppendEntries {
        term: Term,
        prev_log_index: LogIndex,
        prev_log_term: Term,
        entries: Vec<Entry>,
        leader_commit: LogIndex,
    },
    AppendReply {
        term: Term,
        success: bool,
        /// On success the last index the follower now matches; on failure its last index
        /// (a hint so the leader need not step back one entry at a time past the end).
        index: LogIndex,
    },
    ClientRequest {
        id: u32,
        command: Command,
    },
    ClientReply {
        id: u32,
        answer: ClientAnswer,
    },
}

crate::inbox!(RaftMsg);

impl RaftMsg {
    /// The term a server-to-server message carries.
    pub fn term(&self) -> Option<Term> {
        match self {
            RaftMsg::RequestVote { term, .. }
            | RaftMsg::Vote { term, .. }
            | RaftMsg::AppendEntries { term, .. }
            | RaftMsg::AppendReply { term, .. } => Some(*term),
            RaftMsg::ClientRequest { .. } | RaftMsg::ClientReply { .. } => None,
        }
    }
}
