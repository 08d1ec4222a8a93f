//! What Raft puts on the wire: the server-to-server RPCs of the paper's Figure 2 and the
//! client protocol, with the one-line labels the trace shows.

use super::types::{Command, Entry, LogIndex, Term};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Label;
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

impl Label for RaftMsg {
    fn label(&self) -> String {
        match self {
            RaftMsg::RequestVote {
                term,
                last_log_index,
                last_log_term,
            } => format!("RequestVote term {term} (last log {last_log_index} term {last_log_term})"),
            RaftMsg::Vote { term, granted: true } => format!("vote granted · term {term}"),
            RaftMsg::Vote { term, granted: false } => format!("vote refused · term {term}"),
            RaftMsg::AppendEntries {
                term,
                prev_log_index,
                prev_log_term,
                entries,
                leader_commit,
            } => {
                if entries.is_empty() {
                    format!(
                        "heartbeat term {term} (prev {prev_log_index}/t{prev_log_term}, commit {leader_commit})"
                    )
                } else {
                    format!(
                        "AppendEntries term {term} +{} after {prev_log_index}/t{prev_log_term} (commit {leader_commit})",
                        entries.len()
                    )
                }
            }
            RaftMsg::AppendReply {
                term,
                success: true,
                index,
            } => format!("append ok · term {term} · matches up to {index}"),
            RaftMsg::AppendReply {
                term,
                success: false,
                index,
            } => format!("append refused · term {term} · my log ends at {index}"),
            RaftMsg::ClientRequest { id, command } => format!("request {id}: {command}"),
            RaftMsg::ClientReply {
                id,
                answer: ClientAnswer::Committed { index },
            } => format!("reply {id}: committed at {index}"),
            RaftMsg::ClientReply {
                id,
                answer: ClientAnswer::Locked { index, result },
            } => format!("reply {id}: {result} (entry {index})"),
            RaftMsg::ClientReply {
                id,
                answer: ClientAnswer::NotLeader { leader: Some(l) },
            } => format!("reply {id}: not the leader, try S{}", l.0 + 1),
            RaftMsg::ClientReply {
                id,
                answer: ClientAnswer::NotLeader { leader: None },
            } => format!("reply {id}: not the leader, leader unknown"),
        }
    }
}
