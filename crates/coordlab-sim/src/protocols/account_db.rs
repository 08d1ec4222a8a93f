//! A small database holding one account row and a lock manager.
//!
//! The lock manager is bookkeeping: who holds row 42 exclusively and who waits, first come
//! first served. Writes inside a transaction are staged and become visible at COMMIT; the
//! lock (if any) is released in the same step. The database owns every connection, so when a
//! worker crashes it rolls that transaction back and frees its lock — the free "automatic
//! release" a distributed lock has to rebuild by hand.

use super::sql::{rupees, SqlMsg, SqlReply, SqlRequest, ACCOUNT_ID};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    pub balance: i64,
    pub version: u64,
}

/// What survives a crash: the committed row and how many debits were committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbDurable {
    pub row: AccountRow,
    pub committed_debits: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTxn {
    pub staged_balance: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountDb {
    pub names: Vec<String>,
    pub durable: DbDurable,
    /// Open transactions by connection (worker).
    pub txns: BTreeMap<NodeId, OpenTxn>,
    /// Exclusive holder of row 42, if any.
    pub lock_holder: Option<NodeId>,
    /// Connections blocked in `SELECT … FOR UPDATE`, oldest first.
    pub lock_waiters: Vec<NodeId>,
    /// How many statements had to wait for the lock.
    pub lock_waits: u32,
    /// How many version-checked updates found the version had moved on.
    pub version_conflicts: u32,
}

impl AccountDb {
    /// `names` are the participants' display names, for narration.
    pub fn new(balance: i64, names: Vec<String>) -> AccountDb {
        AccountDb::recover(
            &DbDurable {
                row: AccountRow {
                    balance,
                    version: 1,
                },
                committed_debits: 0,
            },
            names,
        )
    }

    pub fn recover(durable: &DbDurable, names: Vec<String>) -> AccountDb {
        AccountDb {
            names,
            durable: durable.clone(),
            txns: BTreeMap::new(),
            lock_holder: None,
            lock_waiters: Vec::new(),
            lock_waits: 0,
            version_conflicts: 0,
        }
    }

    pub fn watches(&self, peer: NodeId) -> bool {
        self.txns.contains_key(&peer) || self.lock_waiters.contains(&peer)
    }

    fn name(&self, id: NodeId) -> String {
        self.names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// Handles one statement from the connection of `from`.
    pub fn handle<P>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, request: SqlRequest)
    where
        P: Participant<Msg = SqlMsg>,
        P::Durable: From<DbDurable>,
    {
        let who = self.name(from);
        match request {
            SqlRequest::Select { for_update: false } => {
                self.txns.entry(from).or_insert(OpenTxn {
                    staged_balance: None,
                });
                ctx.note(format!(
                    "The database returns {} to {who}. A plain SELECT takes no lock, so nothing stops another worker reading the same value right now.",
                    rupees(self.durable.row.balance)
                ));
                ctx.send(from, self.row_reply());
            }
            SqlRequest::Select { for_update: true } => {
                self.txns.entry(from).or_insert(OpenTxn {
                    staged_balance: None,
                });
                match self.lock_holder {
                    None => {
                        self.lock_holder = Some(from);
                        ctx.note(format!(
                            "The lock manager writes down \"row {ACCOUNT_ID}: held exclusively by {who}\" and returns the balance, {}.",
                            rupees(self.durable.row.balance)
                        ));
                        ctx.send(from, self.row_reply());
                    }
                    Some(holder) if holder == from => ctx.send(from, self.row_reply()),
                    Some(holder) => {
                        self.lock_waiters.push(from);
                        self.lock_waits += 1;
                        ctx.note(format!(
                            "Row {ACCOUNT_ID} is locked by {}. {who}'s SELECT … FOR UPDATE does not return: it queues in the lock manager until the holder commits.",
                            self.name(holder)
                        ));
                    }
                }
            }
            SqlRequest::Update { balance } => {
                if let Some(txn) = self.txns.get_mut(&from) {
                    txn.staged_balance = Some(balance);
                }
                ctx.note(format!(
                    "{who}'s write of {} is staged inside its transaction; everyone else still sees the committed {}.",
                    rupees(balance),
                    rupees(self.durable.row.balance)
                ));
                ctx.send(from, SqlMsg::Reply(SqlReply::Updated));
            }
            SqlRequest::UpdateIfVersion {
                balance,
                expected_version,
            } => {
                if self.durable.row.version == expected_version {
                    let before = self.durable.row.balance;
                    self.durable.row = AccountRow {
                        balance,
                        version: expected_version + 1,
                    };
                    self.durable.committed_debits += 1;
                    ctx.persist(self.durable.clone().into());
                    ctx.note(format!(
                        "The row is still at version {expected_version}, so the check and the write happen as one step: {} becomes {}, version {}.",
                        rupees(before),
                        rupees(balance),
                        expected_version + 1
                    ));
                    ctx.send(from, SqlMsg::Reply(SqlReply::VersionChecked { rows: 1 }));
                } else {
                    self.version_conflicts += 1;
                    ctx.note(format!(
                        "{who} expected version {expected_version}, but the row is at version {}: someone changed it after {who} read it. Zero rows updated — the stale write is refused.",
                        self.durable.row.version
                    ));
                    ctx.send(from, SqlMsg::Reply(SqlReply::VersionChecked { rows: 0 }));
                }
            }
            SqlRequest::Commit => {
                let staged = self.txns.remove(&from).and_then(|t| t.staged_balance);
                if let Some(balance) = staged {
                    let before = self.durable.row.balance;
                    self.durable.row = AccountRow {
                        balance,
                        version: self.durable.row.version + 1,
                    };
                    self.durable.committed_debits += 1;
                    ctx.persist(self.durable.clone().into());
                    let expected = self.durable.committed_debits;
                    ctx.note(format!(
                        "COMMIT: {who}'s {} replaces {} as the balance.",
                        rupees(balance),
                        rupees(before)
                    ));
                    if balance == before {
                        ctx.note(format!(
                            "{expected} debits are now committed, yet the balance only moved once: {who} overwrote the other debit with a value computed from a stale read. A lost update."
                        ));
                    }
                }
                ctx.send(from, SqlMsg::Reply(SqlReply::Committed));
                self.release_lock(ctx, from);
            }
        }
    }

    /// The connection to `peer` dropped: roll its transaction back and free its lock.
    pub fn connection_lost<P: Participant<Msg = SqlMsg>>(
        &mut self,
        ctx: &mut Ctx<'_, P>,
        peer: NodeId,
    ) {
        let had_txn = self.txns.remove(&peer).is_some();
        self.lock_waiters.retain(|w| *w != peer);
        if had_txn {
            ctx.note(format!(
                "The database owns {}'s connection, so it knows the client is gone: it rolls the transaction back without being asked.",
                self.name(peer)
            ));
        }
        self.release_lock(ctx, peer);
    }

    fn release_lock<P: Participant<Msg = SqlMsg>>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId) {
        if self.lock_holder != Some(from) {
            return;
        }
        self.lock_holder = None;
        if self.lock_waiters.is_empty() {
            ctx.note(format!("The lock on row {ACCOUNT_ID} is released."));
            return;
        }
        let next = self.lock_waiters.remove(0);
        self.lock_holder = Some(next);
        ctx.note(format!(
            "The lock on row {ACCOUNT_ID} passes to {}, whose waiting SELECT now returns the committed {}.",
            self.name(next),
            rupees(self.durable.row.balance)
        ));
        ctx.send(next, self.row_reply());
    }

    fn row_reply(&self) -> SqlMsg {
        SqlMsg::Reply(SqlReply::Row {
            balance: self.durable.row.balance,
            version: self.durable.row.version,
        })
    }

    pub fn summary(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "balance {} · v{}",
            rupees(self.durable.row.balance),
            self.durable.row.version
        )];
        if let Some(h) = self.lock_holder {
            lines.push(format!(
                "row lock: {} (+{} waiting)",
                self.name(h),
                self.lock_waiters.len()
            ));
        }
        lines
    }
}
