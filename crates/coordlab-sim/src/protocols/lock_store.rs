//! The lock state machine a Raft cluster replicates, in the manner of etcd's leases: keys
//! held by an owner under a lease with a TTL. Every operation is a log entry and takes
//! effect only when applied, in log order, on every server alike.
//!
//! A grant's *revision* is the log index of the entry that granted it. Log indexes are
//! cluster-wide and only grow, and a committed entry is never lost, so the revision is a
//! fencing token no later holder can ever be handed again — failovers included.
//!
//! Time is not part of the state machine (servers' clocks differ): the leader decides by its
//! own clock that a lease ran out and proposes an [`LockOp::Expire`] entry; the lock is free
//! only once that entry commits.

use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LockOp {
    /// Take `key` if it is free; if `owner` already holds it, answer with its revision.
    /// (`owner_name` only makes the log readable.)
    Acquire {
        key: String,
        owner: NodeId,
        owner_name: String,
        ttl_ms: u64,
    },
    /// The holder asks for its lease to be counted afresh.
    KeepAlive {
        key: String,
        owner: NodeId,
        revision: u64,
    },
    Release {
        key: String,
        owner: NodeId,
        revision: u64,
    },
    /// The leader's verdict that the lease of `revision` ran out. It applies only if no
    /// keep-alive for it was applied after `renewed_at` (the leader's last look), so a
    /// renewal that commits first wins.
    Expire {
        key: String,
        revision: u64,
        renewed_at: u64,
    },
    /// An empty entry a new leader commits in its own term, to learn what is committed.
    Barrier,
}

impl fmt::Display for LockOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockOp::Acquire {
                key,
                owner_name,
                ttl_ms,
                ..
            } => write!(
                f,
                "acquire {key} for {owner_name}, ttl {}",
                super::lease_msg::seconds(*ttl_ms)
            ),
            LockOp::KeepAlive { key, revision, .. } => write!(f, "keep-alive {key} rev {revision}"),
            LockOp::Release { key, revision, .. } => write!(f, "release {key} rev {revision}"),
            LockOp::Expire { key, revision, .. } => write!(f, "expire {key} rev {revision}"),
            LockOp::Barrier => write!(f, "no-op (new leader)"),
        }
    }
}

/// What applying an operation did; the leader sends it back to the client that asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LockResult {
    Granted {
        revision: u64,
    },
    /// The owner asked again for a lock it already holds (a retried request).
    AlreadyYours {
        revision: u64,
    },
    Held {
        owner: NodeId,
        owner_name: String,
        revision: u64,
    },
    Renewed {
        revision: u64,
    },
    /// A keep-alive or release for a grant that is no longer the owner's.
    NotHeld,
    Released {
        revision: u64,
    },
    Expired {
        owner: NodeId,
        revision: u64,
    },
    /// An expiry overtaken by a keep-alive that committed first.
    ExpiryOvertaken,
    Done,
}

impl fmt::Display for LockResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockResult::Granted { revision } => write!(f, "granted, revision {revision}"),
            LockResult::AlreadyYours { revision } => write!(f, "already yours, revision {revision}"),
            LockResult::Held {
                owner_name, revision, ..
            } => write!(f, "held by {owner_name} (revision {revision})"),
            LockResult::Renewed { revision } => write!(f, "renewed, revision {revision}"),
            LockResult::NotHeld => write!(f, "not yours any more"),
            LockResult::Released { revision } => write!(f, "released revision {revision}"),
            LockResult::Expired { revision, .. } => write!(f, "revision {revision} expired"),
            LockResult::ExpiryOvertaken => write!(f, "expiry overtaken by a keep-alive"),
            LockResult::Done => write!(f, "ok"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockRecord {
    pub owner: NodeId,
    pub owner_name: String,
    pub revision: u64,
    pub ttl_ms: u64,
    /// Log index of the last keep-alive applied (the grant's own index at first).
    pub renewed_at: u64,
}

/// A grant or its end, as applied: what the world watches to follow holders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    Granted {
        key: String,
        owner: NodeId,
        revision: u64,
    },
    /// `expired`: by the leader's expiry entry, not the holder's release.
    Ended {
        key: String,
        revision: u64,
        expired: bool,
    },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockTable {
    pub locks: VecMap<String, LockRecord>,
    /// Grants and ends in the order they were applied (rebuilt after a restart by
    /// re-applying the log).
    pub history: Vec<LockEvent>,
}

impl LockTable {
    /// Applies the entry at log index `index`.
    pub fn apply(&mut self, index: u64, op: &LockOp) -> LockResult {
        match op {
            LockOp::Acquire {
                key,
                owner,
                owner_name,
                ttl_ms,
            } => match self.locks.get(key) {
                Some(r) if r.owner == *owner => LockResult::AlreadyYours { revision: r.revision },
                Some(r) => LockResult::Held {
                    owner: r.owner,
                    owner_name: r.owner_name.clone(),
                    revision: r.revision,
                },
                None => {
                    self.locks.insert(
                        key.clone(),
                        LockRecord {
                            owner: *owner,
                            owner_name: owner_name.clone(),
                            revision: index,
                            ttl_ms: *ttl_ms,
                            renewed_at: index,
                        },
                    );
                    self.history.push(LockEvent::Granted {
                        key: key.clone(),
                        owner: *owner,
                        revision: index,
                    });
                    LockResult::Granted { revision: index }
                }
            },
            LockOp::KeepAlive { key, owner, revision } => match self.locks.get_mut(key) {
                Some(r) if r.owner == *owner && r.revision == *revision => {
                    r.renewed_at = index;
                    LockResult::Renewed { revision: r.revision }
                }
                _ => LockResult::NotHeld,
            },
            LockOp::Release { key, owner, revision } => match self.locks.get(key) {
                Some(r) if r.owner == *owner && r.revision == *revision => {
                    self.end(key, false);
                    LockResult::Released { revision: *revision }
                }
                _ => LockResult::NotHeld,
            },
            LockOp::Expire {
                key,
                revision,
                renewed_at,
            } => match self.locks.get(key) {
                Some(r) if r.revision == *revision && r.renewed_at <= *renewed_at => {
                    let owner = r.owner;
                    self.end(key, true);
                    LockResult::Expired {
                        owner,
                        revision: *revision,
                    }
                }
                Some(r) if r.revision == *revision => LockResult::ExpiryOvertaken,
                _ => LockResult::NotHeld,
            },
            LockOp::Barrier => LockResult::Done,
        }
    }

    fn end(&mut self, key: &str, expired: bool) {
        if let Some(r) = self.locks.remove(key) {
            self.history.push(LockEvent::Ended {
                key: key.to_string(),
                revision: r.revision,
                expired,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acquire(owner: u32) -> LockOp {
        LockOp::Acquire {
            key: "lock".into(),
            owner: NodeId(owner),
            owner_name: format!("w{owner}"),
            ttl_ms: 1_000,
        }
    }

    #[test]
    fn a_held_lock_is_refused_to_others_and_repeated_to_its_owner() {
        let mut t = LockTable::default();
        assert_eq!(t.apply(3, &acquire(1)), LockResult::Granted { revision: 3 });
        assert_eq!(
            t.apply(4, &acquire(2)),
            LockResult::Held {
                owner: NodeId(1),
                owner_name: "w1".into(),
                revision: 3
            }
        );
        assert_eq!(t.apply(5, &acquire(1)), LockResult::AlreadyYours { revision: 3 });
    }

    #[test]
    fn an_expiry_loses_to_a_keep_alive_that_committed_first() {
        let mut t = LockTable::default();
        t.apply(1, &acquire(1));
        let keep = LockOp::KeepAlive {
            key: "lock".into(),
            owner: NodeId(1),
            revision: 1,
        };
        assert_eq!(t.apply(2, &keep), LockResult::Renewed { revision: 1 });
        let stale = LockOp::Expire {
            key: "lock".into(),
            revision: 1,
            renewed_at: 1,
        };
        assert_eq!(t.apply(3, &stale), LockResult::ExpiryOvertaken);
        let due = LockOp::Expire {
            key: "lock".into(),
            revision: 1,
            renewed_at: 2,
        };
        assert!(matches!(
            t.apply(4, &due),
            LockResult::Expired { revision: 1, .. }
        ));
        // The next grant takes the index of its own entry: higher than anything before.
        assert_eq!(t.apply(5, &acquire(2)), LockResult::Granted { revision: 5 });
    }

    #[test]
    fn only_the_owner_of_that_revision_can_release() {
        let mut t = LockTable::default();
        t.apply(1, &acquire(1));
        let wrong = LockOp::Release {
            key: "lock".into(),
            owner: NodeId(2),
            revision: 1,
        };
        assert_eq!(t.apply(2, &wrong), LockResult::NotHeld);
        let right = LockOp::Release {
            key: "lock".into(),
            owner: NodeId(1),
            revision: 1,
        };
        assert_eq!(t.apply(3, &right), LockResult::Released { revision: 1 });
        assert!(t.locks.is_empty());
    }
}
