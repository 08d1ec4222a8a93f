//! How [`RaftMsg`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::raft::msg::{ClientAnswer, RaftMsg};

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
