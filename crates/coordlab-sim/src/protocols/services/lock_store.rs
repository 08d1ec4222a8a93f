//! The store a Raft cluster replicates for the consensus lock, modelled on etcd: keys, leases,
//! and one cluster-wide *revision*.
//!
//! The revision counts changes to keys, nothing else: a write that puts or deletes keys raises
//! it by one (a lease revoke that deletes keys is one such write). A lease grant, a read, a
//! keep-alive, a retried transaction that changes nothing: none of them moves it. A fresh store
//! is at revision 1, so the first key ever put is created at revision 2. Each key remembers
//! the revision that created it (its *create revision*).
//!
//! The lock is etcd's `concurrency.Mutex`. Each contender puts its own key,
//! `<prefix>/<lease id>`, in one transaction: `Txn(If(CreateRevision(key) == 0),
//! Then(Put(key, me, lease)))`. The key with the lowest create revision under the prefix holds
//! the lock, and that revision is the holder's fencing token: the cluster assigned it, a
//! majority committed it, and no later key can have a lower one.
//!
//! Only what changes the store goes through the log: lease grant, the acquire transaction,
//! lease revoke. Time is not part of it (servers' clocks differ): the leader counts leases down
//! by its own clock and proposes a revoke when one runs out (see `lock_service`).

use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use serde::{Deserialize, Serialize};

/// A lease's id, shown in hex as etcd shows it. The store picks it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LeaseId(pub u64);

crate::display_ids!(LeaseId => "{:x}");

/// The id of the first lease a store grants (the next ones count up).
const FIRST_LEASE: u64 = 0x7a01;

/// The key a contender puts under the lock's prefix: one per session, named by its lease.
pub fn lock_key(prefix: &str, lease: LeaseId) -> String {
    format!("{prefix}/{lease}")
}

/// The prefix of a lock key (everything before its last `/`).
fn prefix_of(key: &str) -> &str {
    key.rsplit_once('/').map_or("", |(p, _)| p)
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LockOp {
    /// `LeaseGrant(ttl)`. (`owner` only makes the log readable.)
    LeaseGrant {
        ttl_ms: u64,
        owner: NodeId,
        owner_name: String,
    },
    /// The mutex's acquire, for key `<prefix>/<lease>`:
    /// `Txn(If(CreateRevision(key) == 0), Then(Put(key, me, lease)))`, and in either branch
    /// a read of the key and of the prefix's first-created key, as etcd's mutex does.
    Acquire {
        prefix: String,
        lease: LeaseId,
        owner: NodeId,
        owner_name: String,
    },
    /// `LeaseRevoke(lease)`: the lease ends and every key attached to it is deleted, in one
    /// write. `expired`: the leader proposed it because the lease ran out (otherwise its
    /// holder closed its session).
    LeaseRevoke { lease: LeaseId, expired: bool },
    /// An empty entry a new leader commits in its own term, to learn what is committed.
    Barrier,
}

/// What applying an operation did; the leader sends it back to the client that asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LockResult {
    /// `header`: the store's revision, unchanged by the grant.
    LeaseGranted {
        lease: LeaseId,
        ttl_ms: u64,
        header: u64,
    },
    /// The acquire transaction's answer.
    Acquired {
        /// Whether the compare held and the put ran (false: the key already existed, as when
        /// a request is retried).
        put: bool,
        key: String,
        /// The key's create revision: its place in line, and its fencing token once it holds.
        create_revision: u64,
        /// The key with the lowest create revision under the prefix: the holder.
        first_key: String,
        first_revision: u64,
        /// The store's revision after the transaction (the response header).
        header: u64,
    },
    LeaseNotFound {
        lease: LeaseId,
    },
    Revoked {
        lease: LeaseId,
        deleted: Vec<String>,
        header: u64,
    },
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    /// Who put it (the `me` of the put).
    pub owner: NodeId,
    pub create_revision: u64,
    pub lease: LeaseId,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRecord {
    pub ttl_ms: u64,
    pub owner: NodeId,
    /// Log index of the entry that granted it (a new leader uses its term).
    pub granted_at: u64,
}

/// A change of the lock's holder, as applied: what the world watches to follow holders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    /// `owner`'s key became the first in line under `prefix`; `revision` is its create
    /// revision.
    Granted {
        prefix: String,
        owner: NodeId,
        revision: u64,
    },
    /// The holder's key was deleted. `expired`: by the leader's revoke of a lease that ran
    /// out, not the holder's release.
    Ended {
        prefix: String,
        revision: u64,
        expired: bool,
    },
}

/// A deletion, kept so a watch can start from a past revision and miss nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deletion {
    pub revision: u64,
    pub key: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockTable {
    /// The store's revision: 1 when empty, one more for every write that changed a key.
    pub revision: u64,
    next_lease: u64,
    pub leases: VecMap<LeaseId, LeaseRecord>,
    pub keys: VecMap<String, KeyValue>,
    /// Every deletion, in revision order (watches replay from it).
    pub deletions: Vec<Deletion>,
    /// Changes of holder in the order they were applied (rebuilt after a restart by
    /// re-applying the log).
    pub history: Vec<LockEvent>,
}

impl Default for LockTable {
    fn default() -> LockTable {
        LockTable {
            revision: 1,
            next_lease: FIRST_LEASE,
            leases: VecMap::new(),
            keys: VecMap::new(),
            deletions: Vec::new(),
            history: Vec::new(),
        }
    }
}

impl LockTable {
    /// The keys under `prefix`, first created first.
    pub fn line(&self, prefix: &str) -> Vec<(&String, &KeyValue)> {
        let mut line: Vec<(&String, &KeyValue)> =
            self.keys.iter().filter(|(k, _)| prefix_of(k) == prefix).collect();
        crate::kernel::collections::sort_by_key(&mut line, |(_, kv)| kv.create_revision);
        line
    }

    /// The key under `prefix` with the lowest create revision: the holder.
    pub fn first(&self, prefix: &str) -> Option<(&String, &KeyValue)> {
        self.line(prefix).first().copied()
    }

    /// The key under `prefix` created last before revision `below`: the one a waiter whose
    /// key was created at `below` watches.
    pub fn last_before(&self, prefix: &str, below: u64) -> Option<(&String, &KeyValue)> {
        self.line(prefix)
            .into_iter()
            .rev()
            .find(|(_, kv)| kv.create_revision < below)
    }

    /// Applies the entry at log index `index`.
    pub fn apply(&mut self, index: u64, op: &LockOp) -> LockResult {
        match op {
            LockOp::LeaseGrant { ttl_ms, owner, .. } => {
                let lease = LeaseId(self.next_lease);
                self.next_lease += 1;
                self.leases.insert(
                    lease,
                    LeaseRecord {
                        ttl_ms: *ttl_ms,
                        owner: *owner,
                        granted_at: index,
                    },
                );
                LockResult::LeaseGranted {
                    lease,
                    ttl_ms: *ttl_ms,
                    header: self.revision,
                }
            }
            LockOp::Acquire {
                prefix, lease, owner, ..
            } => {
                let key = lock_key(prefix, *lease);
                let put = !self.keys.contains_key(&key);
                if put {
                    // etcd refuses a put under a lease it does not have: nothing changes.
                    if !self.leases.contains_key(lease) {
                        return LockResult::LeaseNotFound { lease: *lease };
                    }
                    let before = self.holder(prefix);
                    self.revision += 1;
                    self.keys.insert(
                        key.clone(),
                        KeyValue {
                            owner: *owner,
                            create_revision: self.revision,
                            lease: *lease,
                        },
                    );
                    self.note_holder(prefix, before, false);
                }
                let create_revision = self.keys[&key].create_revision;
                let (first_key, first) = self.first(prefix).expect("the key was just read");
                LockResult::Acquired {
                    put,
                    key,
                    create_revision,
                    first_key: first_key.clone(),
                    first_revision: first.create_revision,
                    header: self.revision,
                }
            }
            LockOp::LeaseRevoke { lease, expired } => {
                if self.leases.remove(lease).is_none() {
                    return LockResult::LeaseNotFound { lease: *lease };
                }
                let deleted: Vec<String> = self
                    .keys
                    .iter()
                    .filter(|(_, kv)| kv.lease == *lease)
                    .map(|(k, _)| k.clone())
                    .collect();
                if !deleted.is_empty() {
                    // One write: every key of the lease is deleted at the same revision.
                    self.revision += 1;
                }
                for key in &deleted {
                    let prefix = prefix_of(key).to_string();
                    let before = self.holder(&prefix);
                    self.keys.remove(key);
                    self.deletions.push(Deletion {
                        revision: self.revision,
                        key: key.clone(),
                    });
                    self.note_holder(&prefix, before, *expired);
                }
                LockResult::Revoked {
                    lease: *lease,
                    deleted,
                    header: self.revision,
                }
            }
            LockOp::Barrier => LockResult::Done,
        }
    }

    /// The holder under `prefix`: its owner and its key's create revision.
    fn holder(&self, prefix: &str) -> Option<(NodeId, u64)> {
        self.first(prefix).map(|(_, kv)| (kv.owner, kv.create_revision))
    }

    /// Records a change of holder under `prefix` since `before`.
    fn note_holder(&mut self, prefix: &str, before: Option<(NodeId, u64)>, expired: bool) {
        let after = self.holder(prefix);
        if after == before {
            return;
        }
        if let Some((_, revision)) = before {
            self.history.push(LockEvent::Ended {
                prefix: prefix.to_string(),
                revision,
                expired,
            });
        }
        if let Some((owner, revision)) = after {
            self.history.push(LockEvent::Granted {
                prefix: prefix.to_string(),
                owner,
                revision,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: &str = "/lock/x";

    fn grant(owner: u32) -> LockOp {
        LockOp::LeaseGrant {
            ttl_ms: 1_000,
            owner: NodeId(owner),
            owner_name: format!("w{owner}"),
        }
    }

    fn acquire(owner: u32, lease: LeaseId) -> LockOp {
        LockOp::Acquire {
            prefix: PREFIX.into(),
            lease,
            owner: NodeId(owner),
            owner_name: format!("w{owner}"),
        }
    }

    fn granted(r: LockResult) -> LeaseId {
        match r {
            LockResult::LeaseGranted { lease, .. } => lease,
            other => panic!("{other:?}"),
        }
    }

    fn revisions(r: &LockResult) -> (bool, u64, u64, u64) {
        match r {
            LockResult::Acquired {
                put,
                create_revision,
                first_revision,
                header,
                ..
            } => (*put, *create_revision, *first_revision, *header),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_revision_counts_key_changes_only() {
        let mut t = LockTable::default();
        assert_eq!(t.revision, 1, "a fresh store is at revision 1");
        // A lease grant changes no key.
        let a = granted(t.apply(1, &grant(1)));
        let b = granted(t.apply(2, &grant(2)));
        assert_eq!((a, b), (LeaseId(0x7a01), LeaseId(0x7a02)));
        assert_eq!(t.revision, 1);
        // The first put creates its key at revision 2; the next contender's at 3.
        assert_eq!(revisions(&t.apply(3, &acquire(1, a))), (true, 2, 2, 2));
        assert_eq!(revisions(&t.apply(4, &acquire(2, b))), (true, 3, 2, 3));
        // A retried acquire finds its key: the compare fails, nothing changes.
        assert_eq!(revisions(&t.apply(9, &acquire(2, b))), (false, 3, 2, 3));
        assert_eq!(t.apply(10, &LockOp::Barrier), LockResult::Done);
        assert_eq!(t.revision, 3);
        // Revoking a's lease deletes its key: one write, revision 4; b is first in line now.
        assert_eq!(
            t.apply(
                11,
                &LockOp::LeaseRevoke {
                    lease: a,
                    expired: true
                }
            ),
            LockResult::Revoked {
                lease: a,
                deleted: vec!["/lock/x/7a01".into()],
                header: 4
            }
        );
        assert_eq!(
            t.history,
            vec![
                LockEvent::Granted {
                    prefix: PREFIX.into(),
                    owner: NodeId(1),
                    revision: 2
                },
                LockEvent::Ended {
                    prefix: PREFIX.into(),
                    revision: 2,
                    expired: true
                },
                LockEvent::Granted {
                    prefix: PREFIX.into(),
                    owner: NodeId(2),
                    revision: 3
                },
            ]
        );
        assert_eq!(
            t.deletions,
            vec![Deletion {
                revision: 4,
                key: "/lock/x/7a01".into()
            }]
        );
    }

    #[test]
    fn a_revoke_without_keys_and_a_put_under_a_dead_lease_change_nothing() {
        let mut t = LockTable::default();
        let a = granted(t.apply(1, &grant(1)));
        let revoke = LockOp::LeaseRevoke {
            lease: a,
            expired: false,
        };
        assert_eq!(
            t.apply(2, &revoke),
            LockResult::Revoked {
                lease: a,
                deleted: vec![],
                header: 1
            }
        );
        assert_eq!(t.apply(3, &acquire(1, a)), LockResult::LeaseNotFound { lease: a });
        assert_eq!(t.apply(4, &revoke), LockResult::LeaseNotFound { lease: a });
        assert_eq!(t.revision, 1);
        assert!(t.keys.is_empty() && t.history.is_empty());
    }

    #[test]
    fn a_waiter_watches_the_key_created_just_before_its_own() {
        let mut t = LockTable::default();
        let leases: Vec<LeaseId> = (1..=3).map(|w| granted(t.apply(w, &grant(w as u32)))).collect();
        for (i, lease) in leases.iter().enumerate() {
            t.apply(10 + i as u64, &acquire(i as u32 + 1, *lease));
        }
        // Keys at revisions 2, 3, 4: the third waits on the second, not on the holder.
        let (key, kv) = t.last_before(PREFIX, 4).unwrap();
        assert_eq!((key.as_str(), kv.create_revision), ("/lock/x/7a02", 3));
        assert!(t.last_before(PREFIX, 2).is_none());
        assert_eq!(t.first(PREFIX).unwrap().1.create_revision, 2);
    }
}
