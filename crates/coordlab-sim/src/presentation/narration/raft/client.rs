//! What the Raft client saw as it wrote to the cluster, and the sentences it reads as.

use crate::protocols::raft::{LogIndex, RaftClient};

/// One thing the client saw; `id` is a write's request id (its command follows from it).
pub enum RaftClientSaw<'a> {
    StopsRetrying,
    /// Asked for one more write while write `busy` is in flight.
    OneMoreWriteQueued {
        busy: u32,
    },
    /// Asked for a write while idle, and sent it to `guess`.
    SentExtraWrite {
        id: u32,
        guess: &'a str,
    },
    Committed {
        id: u32,
        index: LogIndex,
        by: &'a str,
    },
}

impl From<RaftClientSaw<'_>> for String {
    fn from(saw: RaftClientSaw<'_>) -> String {
        match saw {
            RaftClientSaw::StopsRetrying => "The demo is over; the client stops retrying.".into(),
            RaftClientSaw::OneMoreWriteQueued { busy } => format!(
                "The client is asked for one more write; it sends it once write {busy} is done."
            ),
            RaftClientSaw::SentExtraWrite { id, guess } => format!(
                "The client is asked for a write and sends request {id} ({}) to {guess}, the leader as far as it knows.",
                RaftClient::command(id)
            ),
            RaftClientSaw::Committed { id, index, by } => {
                format!("The client's write {id} is committed at {index}, confirmed by {by}.")
            }
        }
    }
}
