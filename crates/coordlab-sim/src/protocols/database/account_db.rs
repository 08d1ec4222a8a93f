//! A small database holding one account row and a lock manager.
//!
//! The lock manager is bookkeeping: who holds row 42 exclusively and who waits, first come
//! first served. Writes inside a transaction are staged and become visible at COMMIT; the
//! lock (if any) is released in the same step. The database owns every connection, so when a
//! worker crashes it rolls that transaction back and frees its lock — the free "automatic
//! release" a distributed lock has to rebuild by hand.

use super::sql::{SqlMsg, SqlReply, SqlRequest};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, NoTimer, Participant};
use crate::presentation::narration::database::account_db::AccountDbSaw;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccountRow {
    pub balance: i64,
    pub version: u64,
}

/// What survives a crash: the committed row and how many debits were committed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbDurable {
    pub row: AccountRow,
    pub committed_debits: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTxn {
    pub staged_balance: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccountDb {
    pub durable: DbDurable,
    /// Open transactions by connection (worker).
    pub txns: VecMap<NodeId, OpenTxn>,
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
    /// What a fresh database holds: the row at version 1 and no debits.
    pub fn initial(balance: i64) -> DbDurable {
        DbDurable {
            row: AccountRow { balance, version: 1 },
            committed_debits: 0,
        }
    }

    /// Handles one statement from the connection of `from`.
    pub fn handle(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, request: SqlRequest) {
        let who = ctx.name(from);
        match request {
            SqlRequest::Select { for_update: false } => {
                self.txns
                    .get_or_insert_with(from, || OpenTxn { staged_balance: None });
                ctx.note(AccountDbSaw::PlainSelect {
                    balance: self.durable.row.balance,
                    who,
                });
                ctx.send(from, self.row_reply());
            }
            SqlRequest::Select { for_update: true } => {
                self.txns
                    .get_or_insert_with(from, || OpenTxn { staged_balance: None });
                match self.lock_holder {
                    None => {
                        self.lock_holder = Some(from);
                        ctx.note(AccountDbSaw::LockGranted {
                            who,
                            balance: self.durable.row.balance,
                        });
                        ctx.send(from, self.row_reply());
                    }
                    Some(holder) if holder == from => ctx.send(from, self.row_reply()),
                    Some(holder) => {
                        self.lock_waiters.push(from);
                        self.lock_waits += 1;
                        ctx.note(AccountDbSaw::LockQueued {
                            holder: ctx.name(holder),
                            who,
                        });
                    }
                }
            }
            SqlRequest::Update { balance } => {
                if let Some(txn) = self.txns.get_mut(&from) {
                    txn.staged_balance = Some(balance);
                }
                ctx.note(AccountDbSaw::WriteStaged {
                    who,
                    balance,
                    committed: self.durable.row.balance,
                });
                ctx.send(from, SqlMsg::Reply(SqlReply::Updated));
            }
            SqlRequest::UpdateIfVersion {
                balance,
                expected_version,
            } => {
                if self.durable.row.version == expected_version {
                    let before = self.commit_balance(ctx, balance);
                    ctx.note(AccountDbSaw::VersionMatched {
                        expected_version,
                        before,
                        balance,
                    });
                    ctx.send(from, SqlMsg::Reply(SqlReply::VersionChecked { rows: 1 }));
                } else {
                    self.version_conflicts += 1;
                    ctx.note(AccountDbSaw::VersionConflict {
                        who,
                        expected_version,
                        version: self.durable.row.version,
                    });
                    ctx.send(from, SqlMsg::Reply(SqlReply::VersionChecked { rows: 0 }));
                }
            }
            SqlRequest::Commit => {
                let staged = self.txns.remove(&from).and_then(|t| t.staged_balance);
                if let Some(balance) = staged {
                    let before = self.commit_balance(ctx, balance);
                    ctx.note(AccountDbSaw::Committed { who, balance, before });
                    if balance == before {
                        ctx.note(AccountDbSaw::LostUpdate {
                            debits: self.durable.committed_debits,
                            who,
                        });
                    }
                }
                ctx.send(from, SqlMsg::Reply(SqlReply::Committed));
                self.release_lock(ctx, from);
            }
        }
    }

    /// Commits `balance` as the row's next version, on disk; answers the balance before.
    fn commit_balance(&mut self, ctx: &mut Ctx<'_, Self>, balance: i64) -> i64 {
        let before = self.durable.row.balance;
        let version = self.durable.row.version + 1;
        self.durable.row = AccountRow { balance, version };
        self.durable.committed_debits += 1;
        ctx.persist(self.durable.clone());
        before
    }

    fn release_lock(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId) {
        if self.lock_holder != Some(from) {
            return;
        }
        self.lock_holder = None;
        if self.lock_waiters.is_empty() {
            ctx.note(AccountDbSaw::LockReleased);
            return;
        }
        let next = self.lock_waiters.remove(0);
        self.lock_holder = Some(next);
        ctx.note(AccountDbSaw::LockPasses {
            next: ctx.name(next),
            balance: self.durable.row.balance,
        });
        ctx.send(next, self.row_reply());
    }

    fn row_reply(&self) -> SqlMsg {
        SqlMsg::Reply(SqlReply::Row {
            balance: self.durable.row.balance,
            version: self.durable.row.version,
        })
    }
}

impl Participant for AccountDb {
    type Msg = SqlMsg;
    type Timer = NoTimer;
    type Durable = DbDurable;
    type Config = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(AccountDbSaw::Up {
            balance: self.durable.row.balance,
        });
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: SqlMsg) {
        if let SqlMsg::Request(request) = msg {
            self.handle(ctx, from, request);
        }
    }

    /// The connection to `peer` dropped: roll its transaction back and free its lock.
    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        let had_txn = self.txns.remove(&peer).is_some();
        self.lock_waiters.retain(|w| *w != peer);
        if had_txn {
            ctx.note(AccountDbSaw::RolledBack { who: ctx.name(peer) });
        }
        self.release_lock(ctx, peer);
    }

    fn watches(&self, peer: NodeId) -> bool {
        self.txns.contains_key(&peer) || self.lock_waiters.contains(&peer)
    }

    fn recover(_config: &(), _id: NodeId, durable: &DbDurable) -> Self {
        AccountDb {
            durable: durable.clone(),
            ..AccountDb::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{persisted, sent, Harness};

    const W1: NodeId = NodeId(1);
    const W2: NodeId = NodeId(2);

    fn db() -> Harness<AccountDb> {
        Harness::new(
            NodeId(0),
            AccountDb::recover(&(), NodeId(0), &AccountDb::initial(100)),
            &["db", "w1", "w2"],
        )
    }

    /// Feeds one statement; returns what was sent and what was persisted.
    fn feed(
        db: &mut Harness<AccountDb>,
        from: NodeId,
        req: SqlRequest,
    ) -> (Vec<(NodeId, SqlMsg)>, Vec<DbDurable>) {
        let effects = db.call(|d, ctx| d.handle(ctx, from, req));
        (sent(&effects), persisted(&effects).into_iter().cloned().collect())
    }

    fn row(balance: i64, version: u64) -> SqlMsg {
        SqlMsg::Reply(SqlReply::Row { balance, version })
    }

    fn account_row(balance: i64, version: u64) -> AccountRow {
        AccountRow { balance, version }
    }

    fn select(for_update: bool) -> SqlRequest {
        SqlRequest::Select { for_update }
    }

    fn update_if_version_1() -> SqlRequest {
        SqlRequest::UpdateIfVersion {
            balance: 70,
            expected_version: 1,
        }
    }

    fn version_checked(w: NodeId, rows: u32) -> Vec<(NodeId, SqlMsg)> {
        vec![(w, SqlMsg::Reply(SqlReply::VersionChecked { rows }))]
    }

    #[test]
    fn a_plain_select_answers_everyone_and_locks_nothing() {
        let mut d = db();
        assert_eq!(feed(&mut d, W1, select(false)).0, vec![(W1, row(100, 1))]);
        assert_eq!(feed(&mut d, W2, select(false)).0, vec![(W2, row(100, 1))]);
        assert_eq!(d.node.lock_holder, None);
    }

    #[test]
    fn select_for_update_queues_the_second_caller_until_the_holder_commits() {
        let mut d = db();
        assert_eq!(feed(&mut d, W1, select(true)).0, vec![(W1, row(100, 1))]);
        assert_eq!(feed(&mut d, W2, select(true)).0, vec![], "w2 must wait");
        assert_eq!(d.node.lock_waiters, vec![W2]);
        feed(&mut d, W1, SqlRequest::Update { balance: 70 });
        let (sent, persisted) = feed(&mut d, W1, SqlRequest::Commit);
        assert_eq!(
            sent,
            vec![(W1, SqlMsg::Reply(SqlReply::Committed)), (W2, row(70, 2))]
        );
        assert_eq!(persisted.last().unwrap().row, account_row(70, 2));
        assert_eq!(d.node.lock_holder, Some(W2));
    }

    #[test]
    fn staged_writes_are_invisible_until_commit() {
        let mut d = db();
        feed(&mut d, W1, select(false));
        let (_, persisted) = feed(&mut d, W1, SqlRequest::Update { balance: 70 });
        assert!(persisted.is_empty());
        assert_eq!(feed(&mut d, W2, select(false)).0, vec![(W2, row(100, 1))]);
    }

    #[test]
    fn a_version_checked_update_with_a_stale_version_changes_nothing() {
        let mut d = db();
        let (sent, persisted) = feed(&mut d, W1, update_if_version_1());
        assert_eq!(sent, version_checked(W1, 1));
        assert_eq!(persisted.len(), 1);
        let (sent, persisted) = feed(&mut d, W2, update_if_version_1());
        assert_eq!(sent, version_checked(W2, 0));
        assert!(persisted.is_empty());
        assert_eq!(d.node.durable.row, account_row(70, 2));
        assert_eq!(d.node.version_conflicts, 1);
    }

    #[test]
    fn a_dropped_connection_rolls_back_and_hands_the_lock_on() {
        let mut d = db();
        feed(&mut d, W1, select(true));
        feed(&mut d, W1, SqlRequest::Update { balance: 70 });
        feed(&mut d, W2, select(true));
        assert!(d.node.watches(W1) && d.node.watches(W2));
        let effects = d.peer_down(W1);
        let (sent, persisted): (Vec<(NodeId, SqlMsg)>, Vec<&DbDurable>) =
            (sent(&effects), persisted(&effects));
        assert_eq!(
            sent,
            vec![(W2, row(100, 1))],
            "w1's staged ₹70 is gone; w2 reads the committed ₹100"
        );
        assert!(persisted.is_empty());
        assert_eq!(d.node.lock_holder, Some(W2));
        assert!(!d.node.watches(W1));
    }
}
