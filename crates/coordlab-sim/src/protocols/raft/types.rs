//! The vocabulary of Raft: terms, log positions, entries and the commands they carry, a
//! server's role, and the planted mistakes.

use crate::bundles::{spoken_in, Spoken};
use crate::protocols::services::lock_store::LockOp;
use serde::{Deserialize, Serialize};

/// Most servers one Raft cluster may have.
pub const MAX_SERVERS: u32 = 7;

/// An election term. Terms only grow on every server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Term(pub u64);

/// A position in the log; the first entry has index 1, index 0 means "before the log".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LogIndex(pub u64);

impl LogIndex {
    pub fn next(self) -> LogIndex {
        LogIndex(self.0 + 1)
    }
    pub fn prev(self) -> LogIndex {
        LogIndex(self.0.saturating_sub(1))
    }
}

crate::display_ids!(Term => "{}", LogIndex => "#{}");

/// A command for the replicated state machine: `set key=value` on the key-value map, or an
/// operation on the lock table (the consensus-backed lock service).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    Set { key: String, value: u32 },
    Lock(LockOp),
}

/// The bundles with a writer of [`Command::Set`]: the Raft chapter's client (`raft`, `quorum`)
/// and the throughput experiment (`choosing`). A lock service's servers replicate lock
/// operations only, so consensus-lock's bundle leaves the key-value map out: applying a
/// `set`, its label and the pairs on a server's card.
pub const KV_WRITERS: Spoken = spoken_in!("raft", "quorum", "choosing");

/// Whether this build applies [`Command::Set`]: the guard on the code that handles one. In
/// tests it also records that one was handled, for the check (in `crate::bundles`) that only
/// the bundles in [`KV_WRITERS`] write any.
#[inline(always)]
pub fn keeps_kv() -> bool {
    #[cfg(test)]
    crate::bundles::tests::used("set".to_string(), KV_WRITERS);
    KV_WRITERS.here
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub term: Term,
    pub command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
}

/// A planted mistake, for showing that the checker can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaftBug {
    None,
    /// Voters grant votes without comparing logs (breaks §5.4.1).
    SkipUpToDateCheck,
    /// Leaders commit any entry stored on a majority, even from older terms (breaks §5.4.2).
    CommitOldTermByCount,
    /// A restarted server forgets whom it voted for in its current term (breaks §5.2's
    /// "at most one vote per term" across crashes).
    ForgetVoteOnRestart,
}

impl RaftBug {
    pub const VALUES: [&'static str; 4] = [
        "none",
        "skip-up-to-date-check",
        "commit-old-term-by-count",
        "forget-vote-on-restart",
    ];

    pub fn parse(text: &str) -> Option<RaftBug> {
        match text {
            "none" => Some(RaftBug::None),
            "skip-up-to-date-check" => Some(RaftBug::SkipUpToDateCheck),
            "commit-old-term-by-count" => Some(RaftBug::CommitOldTermByCount),
            "forget-vote-on-restart" => Some(RaftBug::ForgetVoteOnRestart),
            _ => None,
        }
    }
}
