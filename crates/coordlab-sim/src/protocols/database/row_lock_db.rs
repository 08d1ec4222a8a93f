//! A database whose statements take row locks through a [`RowLockManager`]: the database of
//! the chapter-1 lock scenarios (`skip-locked-queue`, `deadlock`, `row-lock-modes`,
//! `lock-granularity`).
//!
//! Each client connection runs one transaction at a time; its first statement opens it.
//! Writes are staged and become visible at COMMIT, which also ends the transaction's locks
//! and lets the oldest compatible waiters in. A statement that has to wait is kept and run
//! again from the start when its lock is granted, so a claim re-checks `status` and a scan
//! goes on from where it stopped (the rows it locked before are still its own).
//!
//! Deadlock detection works as PostgreSQL's does: a transaction that has waited
//! `deadlock_timeout` looks for a cycle in the wait-for graph through itself; if there is
//! one it is aborted with SQLSTATE 40P01 and its locks are released. (Which transaction a real
//! server aborts is not predictable; here it is always the one whose check ran.)
//!
//! The `users` statements of `lock-granularity` run as MySQL's InnoDB would when the config
//! says so ([`innodb`]): that scenario is about InnoDB's scan locking, which PostgreSQL does
//! not do.

use super::db_sql::{
    account_row, customer_row, job_row, ClaimLock, DbMsg, DbReply, DbRequest, RowAccess, DEADLOCK_DETECTED,
    LOCK_NOT_AVAILABLE, NO_CONNECTION,
};
use super::row_locks::{Acquire, LockMode, RowKey, RowLockManager, WaitPolicy};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::presentation::narration::database::row_lock_db::{Blocker, LockDbSaw};

pub mod innodb;

/// The database's rules, fixed by the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockDbConfig {
    /// How long a waiter waits before it looks for a deadlock (PostgreSQL default: 1 s).
    pub deadlock_timeout_us: u64,
    /// Whether `users.email` has a unique index: without one, an update by e-mail scans the
    /// whole table.
    pub email_index: bool,
    /// Run the `users` statements as InnoDB at this isolation level (`lock-granularity`);
    /// `None`: as PostgreSQL, which locks only the rows that match.
    pub innodb: Option<innodb::Isolation>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobRow {
    pub done: bool,
    /// How many times a worker's `UPDATE … runs=runs+1` committed for it.
    pub runs: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccountRow {
    pub balance: i64,
    pub version: u64,
}

/// The committed tables: what survives a crash.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockDbDurable {
    pub jobs: VecMap<u32, JobRow>,
    pub accounts: VecMap<u32, AccountRow>,
    pub users: VecMap<u32, &'static str>,
    /// Customer 1's name (the `row-lock-modes` parent row).
    pub customer_name: &'static str,
    /// Rows of `orders` referencing customer 1.
    pub orders: u32,
    /// Committed transfers (each `deadlock` transaction counts one).
    pub commits: u32,
}

/// A staged write, applied at COMMIT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    JobDone(u32),
    Balance { account: u32, delta: i64 },
    CustomerName,
    Order,
    UserPlan { id: u32, plan: &'static str },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Txn {
    pub writes: Vec<Write>,
    /// Failed (NOWAIT refusal or deadlock victim): only ROLLBACK is accepted.
    pub aborted: bool,
}

/// A statement blocked on a row lock, run again when the lock is granted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub request: DbRequest,
    pub since_us: u64,
}

/// Counters for the outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockStats {
    /// Statements that had to wait for a row lock.
    pub lock_waits: u32,
    /// Total time statements spent waiting, by the database's clock.
    pub wait_us: u64,
    /// NOWAIT refusals (SQLSTATE 55P03).
    pub nowait_errors: u32,
    /// Transactions aborted by deadlock detection (SQLSTATE 40P01).
    pub deadlocks: u32,
    /// Rows passed over by SKIP LOCKED.
    pub skipped: u32,
    /// When the last transaction that changed something committed, by the database's clock.
    pub last_write_commit_us: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbTimer {
    /// The transaction has waited `deadlock_timeout`: look for a cycle through it.
    DeadlockCheck(NodeId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockDb {
    pub config: LockDbConfig,
    pub durable: LockDbDurable,
    pub locks: RowLockManager,
    pub txns: VecMap<NodeId, Txn>,
    pub pending: VecMap<NodeId, Pending>,
    pub stats: LockStats,
    /// The last cycle deadlock detection broke, victim first.
    pub last_deadlock: Option<Vec<NodeId>>,
    /// InnoDB's name for a lock a transaction holds or waits for ("X next-key"), where the
    /// statement ran as InnoDB; other locks are named by their PostgreSQL mode.
    pub innodb_names: VecMap<(NodeId, RowKey), &'static str>,
}

/// What running a statement came to.
pub(crate) enum Ran {
    Reply(DbReply),
    Wait,
}

impl LockDb {
    /// The lock `txn` holds or wants on `row`, in the database's own words: InnoDB's name if
    /// the statement ran as InnoDB, else the PostgreSQL mode.
    pub fn lock_name(&self, txn: NodeId, row: RowKey, mode: LockMode) -> &'static str {
        self.innodb_names.get(&(txn, row)).copied().unwrap_or(mode.sql())
    }

    /// Handles one statement from the connection of `from`.
    pub fn handle(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, request: DbRequest) {
        match request {
            DbRequest::Begin => {
                if self.txns.contains_key(&from) {
                    ctx.note(LockDbSaw::NewConnectionRollsBack { who: ctx.name(from) });
                    self.txns.remove(&from);
                    self.release(ctx, from);
                }
                self.txns.insert(from, Txn::default());
                ctx.send(from, DbMsg::Reply(DbReply::Begun));
            }
            DbRequest::Commit => self.end(ctx, from, true),
            DbRequest::Rollback => self.end(ctx, from, false),
            request => {
                if self.txns.get(&from).is_some_and(|t| t.aborted) {
                    // PostgreSQL: 25P02, commands ignored until end of transaction block.
                    ctx.send(from, DbMsg::Reply(DbReply::Error { sqlstate: "25P02" }));
                    return;
                }
                if !self.txns.contains_key(&from) {
                    // A statement from a connection this database does not have (sent before
                    // it restarted): PostgreSQL would never see it; the client learns it is gone.
                    ctx.send(
                        from,
                        DbMsg::Reply(DbReply::Error {
                            sqlstate: NO_CONNECTION,
                        }),
                    );
                    return;
                }
                if self.pending.remove(&from).is_some() {
                    // The client moved on (its connection was reset): drop the old wait.
                    self.locks.cancel_wait(from);
                    ctx.cancel_timer(DbTimer::DeadlockCheck(from));
                }
                self.run(ctx, from, request);
            }
        }
    }

    /// Runs (or runs again, after a grant) one statement and answers it, unless it waits.
    fn run(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, request: DbRequest) {
        match self.execute(ctx, from, &request) {
            Ran::Reply(reply) => {
                if let DbReply::Error { .. } = reply {
                    self.abort(from);
                }
                ctx.send(from, DbMsg::Reply(reply));
            }
            Ran::Wait => {
                let (row, mode) = self.locks.waiting(from).expect("it waits");
                let holders = self
                    .locks
                    .blockers(from, row, mode)
                    .into_iter()
                    .map(|h| {
                        let held = self.locks.held(h, row).unwrap_or(mode);
                        Blocker {
                            who: ctx.name(h),
                            lock: self.lock_name(h, row, held),
                        }
                    })
                    .collect();
                ctx.note(LockDbSaw::Waits {
                    row,
                    holders,
                    who: ctx.name(from),
                    want: self.lock_name(from, row, mode),
                    // Say why the statement wants that lock, where the mode name does not.
                    gloss: (!self.innodb_names.contains_key(&(from, row))).then(|| mode.gloss()),
                });
                if !self.pending.contains_key(&from) {
                    self.stats.lock_waits += 1;
                    self.pending.insert(
                        from,
                        Pending {
                            request,
                            since_us: ctx.local_now_us,
                        },
                    );
                } else if let Some(p) = self.pending.get_mut(&from) {
                    p.request = request;
                }
                ctx.set_timer(DbTimer::DeadlockCheck(from), self.config.deadlock_timeout_us);
            }
        }
    }

    pub(crate) fn stage(&mut self, from: NodeId, write: Write) {
        if let Some(txn) = self.txns.get_mut(&from) {
            if !txn.writes.contains(&write) || matches!(write, Write::Balance { .. } | Write::Order) {
                txn.writes.push(write);
            }
        }
    }

    fn execute(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, request: &DbRequest) -> Ran {
        let who = ctx.name(from);
        match *request {
            DbRequest::ClaimJob { lock } => {
                let policy = match lock {
                    ClaimLock::None => None,
                    ClaimLock::ForUpdate => Some(WaitPolicy::Block),
                    ClaimLock::NoWait => Some(WaitPolicy::NoWait),
                    ClaimLock::SkipLocked => Some(WaitPolicy::SkipLocked),
                };
                let pending: Vec<u32> = self
                    .durable
                    .jobs
                    .iter()
                    .filter(|(_, j)| !j.done)
                    .map(|(id, _)| *id)
                    .collect();
                let mut skipped = Vec::new();
                for id in pending {
                    let Some(policy) = policy else {
                        ctx.note(LockDbSaw::PlainClaim { id, who });
                        return Ran::Reply(DbReply::Job(Some(id)));
                    };
                    match self.locks.acquire(from, job_row(id), LockMode::Update, policy) {
                        Acquire::Granted => {
                            ctx.note(LockDbSaw::ClaimLocked {
                                who,
                                id,
                                skipped: &skipped,
                            });
                            return Ran::Reply(DbReply::Job(Some(id)));
                        }
                        Acquire::Waiting => return Ran::Wait,
                        Acquire::Refused => {
                            self.stats.nowait_errors += 1;
                            ctx.note(LockDbSaw::NoWaitRefused { id, who });
                            return Ran::Reply(DbReply::Error {
                                sqlstate: LOCK_NOT_AVAILABLE,
                            });
                        }
                        Acquire::Skipped => {
                            self.stats.skipped += 1;
                            skipped.push(id);
                        }
                    }
                }
                ctx.note(LockDbSaw::NoJobLeft {
                    who,
                    skipped_any: !skipped.is_empty(),
                });
                Ran::Reply(DbReply::Job(None))
            }
            DbRequest::FinishJob { id } => {
                match self
                    .locks
                    .acquire(from, job_row(id), LockMode::NoKeyUpdate, WaitPolicy::Block)
                {
                    Acquire::Granted => {
                        self.stage(from, Write::JobDone(id));
                        Ran::Reply(DbReply::Rows(1))
                    }
                    _ => Ran::Wait,
                }
            }
            DbRequest::AddToBalance { account, delta } => {
                match self.locks.acquire(
                    from,
                    account_row(account),
                    LockMode::NoKeyUpdate,
                    WaitPolicy::Block,
                ) {
                    Acquire::Granted => {
                        ctx.note(LockDbSaw::BalanceStaged { who, account, delta });
                        self.stage(from, Write::Balance { account, delta });
                        Ran::Reply(DbReply::Rows(1))
                    }
                    _ => Ran::Wait,
                }
            }
            DbRequest::Customer { access } => {
                let Some(mode) = access.lock() else {
                    ctx.note(LockDbSaw::PlainSelectCustomer { who });
                    return Ran::Reply(DbReply::Rows(1));
                };
                match self.locks.acquire(from, customer_row(), mode, WaitPolicy::Block) {
                    Acquire::Granted => {
                        ctx.note(LockDbSaw::HoldsCustomer { who, mode, access });
                        match access {
                            RowAccess::UpdateName => self.stage(from, Write::CustomerName),
                            RowAccess::InsertChild => self.stage(from, Write::Order),
                            _ => {}
                        }
                        Ran::Reply(DbReply::Rows(1))
                    }
                    _ => Ran::Wait,
                }
            }
            DbRequest::UpdateUserByEmail { .. }
            | DbRequest::UpdateUserById { .. }
            | DbRequest::InsertUser { .. } => self.execute_users(ctx, from, request),
            DbRequest::Begin | DbRequest::Commit | DbRequest::Rollback => unreachable!("handled in handle"),
        }
    }

    /// Marks `from`'s transaction failed: its staged writes are gone. Its locks stay until it
    /// rolls back (PostgreSQL keeps them until the transaction block ends).
    fn abort(&mut self, from: NodeId) {
        if let Some(txn) = self.txns.get_mut(&from) {
            txn.writes.clear();
            txn.aborted = true;
        }
    }

    /// COMMIT (`commit`) or ROLLBACK of `from`'s transaction.
    fn end(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, commit: bool) {
        let txn = self.txns.remove(&from).unwrap_or_default();
        let applied = commit && !txn.aborted;
        if applied {
            for write in &txn.writes {
                self.apply(*write);
            }
            if txn.writes.iter().any(|w| matches!(w, Write::Balance { .. })) {
                self.durable.commits += 1;
            }
            if !txn.writes.is_empty() {
                self.stats.last_write_commit_us = ctx.local_now_us;
                ctx.persist(self.durable.clone());
            }
        }
        let reply = if applied {
            DbReply::Committed
        } else {
            DbReply::RolledBack
        };
        ctx.send(from, DbMsg::Reply(reply));
        self.release(ctx, from);
    }

    fn apply(&mut self, write: Write) {
        let d = &mut self.durable;
        match write {
            Write::JobDone(id) => {
                if let Some(job) = d.jobs.get_mut(&id) {
                    job.done = true;
                    job.runs += 1;
                }
            }
            Write::Balance { account, delta } => {
                if let Some(a) = d.accounts.get_mut(&account) {
                    a.balance += delta;
                    a.version += 1;
                }
            }
            Write::CustomerName => d.customer_name = "Asha K.",
            Write::Order => d.orders += 1,
            Write::UserPlan { id, plan } => {
                d.users.insert(id, plan);
            }
        }
    }

    /// Ends `from`'s locks and its wait, and runs the statements of those now granted.
    fn release(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId) {
        if self.pending.remove(&from).is_some() {
            ctx.cancel_timer(DbTimer::DeadlockCheck(from));
        }
        let held = self.locks.holdings(from);
        let granted = self.locks.release_all(from);
        self.innodb_names.retain(|(t, _), _| *t != from);
        if !held.is_empty() {
            ctx.note(LockDbSaw::TxnOver {
                who: ctx.name(from),
                held: &held,
            });
        }
        for (waiter, row, mode) in granted {
            let Some(p) = self.pending.remove(&waiter) else {
                continue;
            };
            ctx.cancel_timer(DbTimer::DeadlockCheck(waiter));
            let waited_us = ctx.local_now_us.saturating_sub(p.since_us);
            self.stats.wait_us += waited_us;
            ctx.note(LockDbSaw::GetsLock {
                who: ctx.name(waiter),
                row,
                lock: self.lock_name(waiter, row, mode),
                waited_us,
            });
            self.run(ctx, waiter, p.request);
        }
    }

    /// `deadlock_timeout` has passed for `txn`: look for a cycle through it.
    pub fn deadlock_check(&mut self, ctx: &mut Ctx<'_, Self>, txn: NodeId) {
        if self.locks.waiting(txn).is_none() {
            return;
        }
        let Some(cycle) = self.locks.cycle_through(txn) else {
            ctx.note(LockDbSaw::NoCycle { who: ctx.name(txn) });
            return;
        };
        self.stats.deadlocks += 1;
        let names: Vec<&str> = cycle.iter().map(|t| ctx.name(*t)).collect();
        ctx.note(LockDbSaw::Deadlock { cycle: &names });
        self.last_deadlock = Some(cycle);
        if let Some(p) = self.pending.remove(&txn) {
            self.stats.wait_us += ctx.local_now_us.saturating_sub(p.since_us);
        }
        self.abort(txn);
        ctx.send(
            txn,
            DbMsg::Reply(DbReply::Error {
                sqlstate: DEADLOCK_DETECTED,
            }),
        );
        // The victim's locks go at once (PostgreSQL ends its wait and rolls it back).
        self.txns.remove(&txn);
        self.release(ctx, txn);
    }
}

impl Participant for LockDb {
    type Msg = DbMsg;
    type Timer = DbTimer;
    type Durable = LockDbDurable;
    type Config = LockDbConfig;

    fn on_start(&mut self, _ctx: &mut Ctx<'_, Self>) {}

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: DbMsg) {
        if let DbMsg::Request(request) = msg {
            self.handle(ctx, from, request);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: DbTimer) {
        let DbTimer::DeadlockCheck(txn) = timer;
        self.deadlock_check(ctx, txn);
    }

    /// The connection to `peer` dropped: roll its transaction back.
    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        if self.txns.remove(&peer).is_some() {
            ctx.note(LockDbSaw::ConnectionGone { who: ctx.name(peer) });
        }
        self.release(ctx, peer);
    }

    fn watches(&self, peer: NodeId) -> bool {
        self.txns.contains_key(&peer)
    }

    fn recover(config: &LockDbConfig, _id: NodeId, durable: &LockDbDurable) -> Self {
        LockDb {
            config: *config,
            durable: durable.clone(),
            locks: RowLockManager::default(),
            txns: VecMap::new(),
            pending: VecMap::new(),
            stats: LockStats::default(),
            last_deadlock: None,
            innodb_names: VecMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{sent, timers_set, Harness};
    use crate::protocols::database::db_sql::user_row;

    const W1: NodeId = NodeId(1);
    const W2: NodeId = NodeId(2);

    fn db(email_index: bool) -> Harness<LockDb> {
        innodb_db(email_index, innodb::Isolation::RepeatableRead)
    }

    fn innodb_db(email_index: bool, isolation: innodb::Isolation) -> Harness<LockDb> {
        let mut durable = LockDbDurable {
            customer_name: "Asha",
            ..LockDbDurable::default()
        };
        for id in 1..=3 {
            durable.jobs.insert(id, JobRow { done: false, runs: 0 });
            durable.users.insert(id, "free");
        }
        for id in 1..=2 {
            let account = AccountRow {
                balance: 100,
                version: 1,
            };
            durable.accounts.insert(id, account);
        }
        let config = LockDbConfig {
            deadlock_timeout_us: 1_000_000,
            email_index,
            innodb: Some(isolation),
        };
        Harness::new(
            NodeId(0),
            LockDb::recover(&config, NodeId(0), &durable),
            &["db", "w1", "w2"],
        )
    }

    fn feed(d: &mut Harness<LockDb>, from: NodeId, req: DbRequest) -> Vec<(NodeId, DbReply)> {
        let ends = matches!(req, DbRequest::Begin | DbRequest::Commit | DbRequest::Rollback);
        if !ends && !d.node.txns.contains_key(&from) {
            d.call(|db, ctx| db.handle(ctx, from, DbRequest::Begin));
        }
        let fx = d.call(|db, ctx| db.handle(ctx, from, req));
        sent::<_, DbMsg>(&fx)
            .into_iter()
            .filter_map(|(to, m)| match m {
                DbMsg::Reply(r) => Some((to, r)),
                DbMsg::Request(_) => None,
            })
            .collect()
    }

    fn claim(lock: ClaimLock) -> DbRequest {
        DbRequest::ClaimJob { lock }
    }

    /// The database's answer when worker `w`'s claim gets job `id` at once.
    fn handed_job(w: NodeId, id: u32) -> Vec<(NodeId, DbReply)> {
        vec![(w, DbReply::Job(Some(id)))]
    }

    fn add(account: u32, delta: i64) -> DbRequest {
        DbRequest::AddToBalance { account, delta }
    }

    fn customer(access: RowAccess) -> DbRequest {
        DbRequest::Customer { access }
    }

    fn by_id(id: u32) -> DbRequest {
        DbRequest::UpdateUserById { id, plan: "team" }
    }

    #[test]
    fn skip_locked_hands_each_worker_a_different_job() {
        let mut d = db(false);
        assert_eq!(feed(&mut d, W1, claim(ClaimLock::SkipLocked)), handed_job(W1, 1));
        assert_eq!(feed(&mut d, W2, claim(ClaimLock::SkipLocked)), handed_job(W2, 2));
        assert_eq!(d.node.stats.skipped, 1);
    }

    #[test]
    fn for_update_waits_and_then_rechecks_the_status() {
        let mut d = db(false);
        feed(&mut d, W1, claim(ClaimLock::ForUpdate));
        assert_eq!(
            feed(&mut d, W2, claim(ClaimLock::ForUpdate)),
            vec![],
            "w2 waits for job 1"
        );
        feed(&mut d, W1, DbRequest::FinishJob { id: 1 });
        d.now_us = 5_000;
        assert_eq!(
            feed(&mut d, W1, DbRequest::Commit),
            vec![(W1, DbReply::Committed), (W2, DbReply::Job(Some(2)))],
            "job 1 is done now: w2's claim moves on to job 2"
        );
        assert_eq!(d.node.stats.lock_waits, 1);
        assert_eq!(d.node.stats.wait_us, 5_000);
        assert_eq!(d.node.durable.jobs[&1], JobRow { done: true, runs: 1 });
    }

    #[test]
    fn nowait_fails_at_once_and_the_transaction_must_roll_back() {
        let mut d = db(false);
        feed(&mut d, W1, claim(ClaimLock::NoWait));
        let error = |sqlstate| vec![(W2, DbReply::Error { sqlstate })];
        assert_eq!(
            feed(&mut d, W2, claim(ClaimLock::NoWait)),
            error(LOCK_NOT_AVAILABLE)
        );
        assert_eq!(feed(&mut d, W2, claim(ClaimLock::NoWait)), error("25P02"));
        assert_eq!(
            feed(&mut d, W2, DbRequest::Rollback),
            vec![(W2, DbReply::RolledBack)]
        );
        assert_eq!(d.node.stats.nowait_errors, 1);
    }

    #[test]
    fn a_plain_select_lets_two_workers_do_the_same_job() {
        let mut d = db(false);
        assert_eq!(feed(&mut d, W1, claim(ClaimLock::None)), handed_job(W1, 1));
        assert_eq!(feed(&mut d, W2, claim(ClaimLock::None)), handed_job(W2, 1));
        for w in [W1, W2] {
            feed(&mut d, w, DbRequest::FinishJob { id: 1 });
            feed(&mut d, w, DbRequest::Commit);
        }
        // W2's update waited for W1's commit, then went ahead: the job ran twice.
        assert_eq!(d.node.durable.jobs[&1].runs, 2);
    }

    #[test]
    fn opposite_orders_deadlock_after_the_timeout_and_the_victim_is_aborted() {
        let mut d = db(false);
        feed(&mut d, W1, add(1, -10));
        feed(&mut d, W2, add(2, -20));
        let fx = d.call(|db, ctx| db.handle(ctx, W1, add(2, 10)));
        assert_eq!(timers_set(&fx), vec![(DbTimer::DeadlockCheck(W1), 1_000_000)]);
        feed(&mut d, W2, add(1, 20));
        let fx = d.fire(DbTimer::DeadlockCheck(W1));
        let replies: Vec<(NodeId, DbMsg)> = sent(&fx);
        assert_eq!(
            replies,
            vec![
                (
                    W1,
                    DbMsg::Reply(DbReply::Error {
                        sqlstate: DEADLOCK_DETECTED
                    })
                ),
                (W2, DbMsg::Reply(DbReply::Rows(1)))
            ],
            "w1 is the victim; w2 gets account 1"
        );
        assert_eq!(d.node.stats.deadlocks, 1);
        assert_eq!(d.node.last_deadlock, Some(vec![W1, W2]));
        assert_eq!(
            feed(&mut d, W2, DbRequest::Commit),
            vec![(W2, DbReply::Committed)]
        );
        assert_eq!(d.node.durable.accounts[&1].balance, 120);
        assert_eq!(d.node.durable.accounts[&2].balance, 80);
        // A late check for w2 (no longer waiting) does nothing.
        assert!(sent::<_, DbMsg>(&d.fire(DbTimer::DeadlockCheck(W2))).is_empty());
    }

    #[test]
    fn without_an_index_the_update_locks_every_row_it_scans() {
        let mut d = db(false);
        feed(&mut d, W1, by_email(1));
        assert_eq!(
            d.node.locks.holdings(W1).len(),
            4,
            "3 rows and the gap after them"
        );
        assert_eq!(feed(&mut d, W2, by_id(3)), vec![]);
        let mut d = db(true);
        feed(&mut d, W1, by_email(1));
        assert_eq!(d.node.locks.holdings(W1).len(), 1);
        assert_eq!(feed(&mut d, W2, by_id(3)), vec![(W2, DbReply::Rows(1))]);
    }

    fn insert(id: u32) -> DbRequest {
        DbRequest::InsertUser { id, plan: "team" }
    }

    fn by_email(target: u32) -> DbRequest {
        DbRequest::UpdateUserByEmail { target, plan: "pro" }
    }

    #[test]
    fn at_read_committed_the_scan_keeps_only_the_matching_row() {
        let mut d = innodb_db(false, innodb::Isolation::ReadCommitted);
        feed(&mut d, W1, by_email(1));
        assert_eq!(d.node.locks.holdings(W1), vec![(user_row(1), LockMode::Update)]);
        assert_eq!(
            d.node.lock_name(W1, user_row(1), LockMode::Update),
            innodb::RECORD
        );
        assert_eq!(feed(&mut d, W2, by_id(3)), vec![(W2, DbReply::Rows(1))]);
        assert_eq!(feed(&mut d, W2, insert(4)), vec![(W2, DbReply::Rows(1))]);
    }

    #[test]
    fn at_repeatable_read_a_full_scan_locks_the_gap_and_an_insert_waits_for_it() {
        let mut d = db(false);
        feed(&mut d, W1, by_email(1));
        let gap = innodb::users_supremum();
        assert_eq!(d.node.lock_name(W1, gap, LockMode::Update), innodb::NEXT_KEY);
        assert_eq!(
            feed(&mut d, W2, insert(4)),
            vec![],
            "the insert waits for the gap"
        );
        assert_eq!(d.node.locks.waiting(W2).map(|(r, _)| r), Some(gap));
        assert_eq!(
            d.node.lock_name(W2, gap, LockMode::Update),
            innodb::INSERT_INTENTION
        );
        assert_eq!(
            feed(&mut d, W1, DbRequest::Commit),
            vec![(W1, DbReply::Committed), (W2, DbReply::Rows(1))]
        );
        feed(&mut d, W2, DbRequest::Commit);
        assert_eq!(d.node.durable.users.get(&4), Some(&"team"));
    }

    #[test]
    fn a_unique_index_takes_a_record_lock_and_no_gap() {
        let mut d = db(true);
        feed(&mut d, W1, by_email(1));
        assert_eq!(d.node.locks.holdings(W1).len(), 1);
        assert_eq!(feed(&mut d, W2, insert(4)), vec![(W2, DbReply::Rows(1))]);
    }

    #[test]
    fn as_postgresql_the_update_by_email_locks_only_the_matching_row() {
        let mut d = db(false);
        d.node.config.innodb = None;
        feed(&mut d, W1, by_email(1));
        assert_eq!(
            d.node.locks.holdings(W1),
            vec![(user_row(1), LockMode::NoKeyUpdate)]
        );
        assert_eq!(feed(&mut d, W2, insert(4)), vec![(W2, DbReply::Rows(1))]);
    }

    #[test]
    fn a_foreign_key_insert_passes_a_no_key_update_but_not_a_for_update() {
        let mut d = db(false);
        feed(&mut d, W1, customer(RowAccess::UpdateName));
        assert_eq!(
            feed(&mut d, W2, customer(RowAccess::InsertChild)),
            vec![(W2, DbReply::Rows(1))]
        );
        let mut d = db(false);
        feed(&mut d, W1, customer(RowAccess::SelectFor(LockMode::Update)));
        assert_eq!(feed(&mut d, W2, customer(RowAccess::InsertChild)), vec![]);
        assert_eq!(
            feed(&mut d, W2, DbRequest::Rollback),
            vec![(W2, DbReply::RolledBack)],
            "a waiting client that gives up rolls back"
        );
    }

    #[test]
    fn a_dropped_connection_rolls_back_and_hands_the_lock_on() {
        let mut d = db(false);
        feed(&mut d, W1, claim(ClaimLock::ForUpdate));
        feed(&mut d, W2, claim(ClaimLock::ForUpdate));
        let fx = d.peer_down(W1);
        assert_eq!(
            sent::<_, DbMsg>(&fx),
            vec![(W2, DbMsg::Reply(DbReply::Job(Some(1))))]
        );
    }
}
