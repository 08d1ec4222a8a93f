//! What a server of the etcd-style lock service (a Raft group keeping a lock table) saw,
//! and the sentences it reads as.

use crate::presentation::durations::seconds;
use crate::protocols::raft::{LogIndex, Term};
use crate::protocols::services::lock_store::LeaseId;

/// A lease a new leader found in its store, granted in an earlier term.
pub struct InheritedLease<'a> {
    pub id: LeaseId,
    pub owner: &'a str,
    /// The create revision of the lease's key, if it has one.
    pub key_revision: Option<u64>,
}

/// One thing a lock server saw; `me` is the server's own name.
pub enum LockServiceSaw<'a> {
    CommitsBarrier {
        me: &'a str,
    },
    InheritsLeases {
        me: &'a str,
        leases: Vec<InheritedLease<'a>>,
    },
    RevokeApplied {
        me: &'a str,
        lease: LeaseId,
    },
    ReadIndex {
        me: &'a str,
        commit_index: LogIndex,
        term: Term,
    },
    KeepAliveRestarts {
        me: &'a str,
        lease: LeaseId,
        ttl_ms: u64,
        revision: u64,
    },
    /// The leader's clock says the lease ran out; the revoke deletes `keys` (name and
    /// create revision).
    RevokeProposed {
        me: &'a str,
        owner: &'a str,
        lease: LeaseId,
        keys: Vec<(&'a str, u64)>,
    },
}

impl From<LockServiceSaw<'_>> for String {
    fn from(saw: LockServiceSaw<'_>) -> String {
        use LockServiceSaw::*;
        match saw {
            CommitsBarrier { me } => format!(
                "{me} commits an empty entry of its own term first: once it is applied, every earlier entry is, and its store is up to date."
            ),
            InheritsLeases { me, leases } => {
                let inherited: Vec<String> = leases
                    .iter()
                    .map(|l| match l.key_revision {
                        Some(rev) => format!("{} ({}, its key at rev {rev})", l.id, l.owner),
                        None => format!("{} ({})", l.id, l.owner),
                    })
                    .collect();
                format!(
                    "{me} now leads and its store holds lease{} {}. It cannot know how far the previous leader had counted them down, so it starts each afresh at its full TTL: a lease may outlive a failover, it must never end early because of one.",
                    if inherited.len() == 1 { "" } else { "s" },
                    inherited.join(" and ")
                )
            }
            RevokeApplied { me, lease } => format!(
                "{me} applies the revoke of lease {lease}: it is committed on a majority, so the lease's key is deleted and no later leader can bring it back. Its holder is not told — a worker that stopped sending keep-alives may not be listening."
            ),
            ReadIndex {
                me,
                commit_index,
                term,
            } => format!(
                "A read needs no log entry, but {me} must not answer from a stale store: it notes its commit index ({commit_index}) and asks the others whether it still leads term {term} (etcd's ReadIndex)."
            ),
            KeepAliveRestarts {
                me,
                lease,
                ttl_ms,
                revision,
            } => format!(
                "{me} restarts lease {lease}'s count at {} in its own memory and answers. A keep-alive is no log entry and changes no key: the store's revision stays {revision}.",
                seconds(ttl_ms)
            ),
            RevokeProposed {
                me,
                owner,
                lease,
                keys,
            } => {
                let deletes = if keys.is_empty() {
                    String::new()
                } else {
                    let keys: Vec<String> =
                        keys.iter().map(|(k, rev)| format!("{k} (rev {rev})")).collect();
                    format!(", which deletes {}", keys.join(", "))
                };
                format!(
                    "By {me}'s own clock, {owner}'s lease {lease} has run out with no keep-alive. The leader proposes a revoke{deletes}; nothing is deleted until a majority has committed it."
                )
            }
        }
    }
}
