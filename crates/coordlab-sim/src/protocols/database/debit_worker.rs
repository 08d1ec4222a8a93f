//! A worker that debits the account once, using one of three strategies:
//! read-then-write with no lock, read under `SELECT … FOR UPDATE`, or a version-checked
//! write that retries when the row changed underneath it.

use super::set_timer_within;
use super::sql::{SqlMsg, SqlReply, SqlRequest};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::presentation::narration::database::debit_worker::DebitWorkerSaw;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebitStrategy {
    /// Plain SELECT, compute, UPDATE, COMMIT.
    ReadThenWrite,
    /// SELECT … FOR UPDATE, compute, UPDATE, COMMIT: the row is locked from read to commit.
    RowLock,
    /// Read the version, compute, `UPDATE … WHERE version = :read`; on zero rows read again.
    VersionCheck,
}

/// A worker's plan, fixed by the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DebitPlan {
    pub strategy: DebitStrategy,
    pub amount: i64,
    pub db: NodeId,
    pub start_delay_us: (u64, u64),
    pub think_us: (u64, u64),
    pub max_attempts: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Reading,
    Computing { read_balance: i64, read_version: u64 },
    Writing { new_balance: i64 },
    Committing { new_balance: i64 },
    Done,
    GaveUp,
}

/// Survives a crash: whether its debit is known to be committed. (Its plan is its
/// configuration, kept by the engine.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerDurable {
    pub done: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerTimer {
    Begin,
    FinishComputing,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebitWorker {
    pub plan: DebitPlan,
    pub phase: Phase,
    pub attempts: u32,
    pub done: bool,
}

impl DebitWorker {
    pub fn start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.done {
            ctx.note(DebitWorkerSaw::AlreadyDone { me: ctx.me() });
            self.phase = Phase::Done;
            return;
        }
        set_timer_within(ctx, WorkerTimer::Begin, self.plan.start_delay_us);
    }

    fn read(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.attempts += 1;
        self.phase = Phase::Reading;
        let for_update = self.plan.strategy == DebitStrategy::RowLock;
        ctx.send(self.plan.db, SqlMsg::Request(SqlRequest::Select { for_update }));
    }

    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::Done;
        self.done = true;
        ctx.persist(WorkerDurable { done: true });
        ctx.note(DebitWorkerSaw::Committed { me: ctx.me() });
    }
}

impl Participant for DebitWorker {
    type Msg = SqlMsg;
    type Timer = WorkerTimer;
    type Durable = WorkerDurable;
    type Config = DebitPlan;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if !self.done {
            ctx.note(DebitWorkerSaw::Scheduled {
                me: ctx.me(),
                amount: self.plan.amount,
            });
        }
        self.start(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: SqlMsg) {
        if from != self.plan.db {
            return;
        }
        let SqlMsg::Reply(reply) = msg else { return };
        match (reply, self.phase.clone()) {
            (SqlReply::Row { balance, version }, Phase::Reading) => {
                self.phase = Phase::Computing {
                    read_balance: balance,
                    read_version: version,
                };
                ctx.note(DebitWorkerSaw::Believes {
                    me: ctx.me(),
                    balance,
                    amount: self.plan.amount,
                });
                set_timer_within(ctx, WorkerTimer::FinishComputing, self.plan.think_us);
            }
            (SqlReply::Updated, Phase::Writing { new_balance }) => {
                self.phase = Phase::Committing { new_balance };
                ctx.send(self.plan.db, SqlMsg::Request(SqlRequest::Commit));
            }
            (SqlReply::Committed, Phase::Committing { .. }) => self.finish(ctx),
            (SqlReply::VersionChecked { rows: 1 }, Phase::Writing { .. }) => self.finish(ctx),
            (SqlReply::VersionChecked { .. }, Phase::Writing { .. }) => {
                if self.attempts >= self.plan.max_attempts {
                    self.phase = Phase::GaveUp;
                    ctx.note(DebitWorkerSaw::GivesUp {
                        me: ctx.me(),
                        attempts: self.attempts,
                    });
                } else {
                    ctx.note(DebitWorkerSaw::ReadWasStale { me: ctx.me() });
                    self.read(ctx);
                }
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: WorkerTimer) {
        match (timer, self.phase.clone()) {
            (WorkerTimer::Begin, Phase::Idle) => {
                ctx.note(DebitWorkerSaw::Reads {
                    me: ctx.me(),
                    strategy: self.plan.strategy,
                    amount: self.plan.amount,
                });
                self.read(ctx);
            }
            (
                WorkerTimer::FinishComputing,
                Phase::Computing {
                    read_balance,
                    read_version,
                },
            ) => {
                let new_balance = read_balance - self.plan.amount;
                self.phase = Phase::Writing { new_balance };
                match self.plan.strategy {
                    DebitStrategy::ReadThenWrite | DebitStrategy::RowLock => {
                        ctx.note(DebitWorkerSaw::WritesBlind {
                            me: ctx.me(),
                            balance: new_balance,
                        });
                        ctx.send(
                            self.plan.db,
                            SqlMsg::Request(SqlRequest::Update { balance: new_balance }),
                        );
                    }
                    DebitStrategy::VersionCheck => {
                        ctx.note(DebitWorkerSaw::WritesIfVersion {
                            me: ctx.me(),
                            balance: new_balance,
                            version: read_version,
                        });
                        ctx.send(
                            self.plan.db,
                            SqlMsg::Request(SqlRequest::UpdateIfVersion {
                                balance: new_balance,
                                expected_version: read_version,
                            }),
                        );
                    }
                }
            }
            // A timer that no longer fits the phase (e.g. after a restart) is ignored.
            _ => {}
        }
    }

    fn recover(plan: &DebitPlan, _id: NodeId, durable: &WorkerDurable) -> Self {
        DebitWorker {
            plan: *plan,
            phase: Phase::Idle,
            attempts: 0,
            done: durable.done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::participant::Effect;
    use crate::kernel::testing::{sent, timers_set, Harness};

    const DB: NodeId = NodeId(0);

    fn plan(strategy: DebitStrategy) -> DebitPlan {
        DebitPlan {
            strategy,
            amount: 30,
            db: DB,
            start_delay_us: (0, 0),
            think_us: (5, 5),
            max_attempts: 2,
        }
    }

    /// A worker with `strategy` whose disk says its debit is `done`, or not.
    fn worker(strategy: DebitStrategy, done: bool) -> Harness<DebitWorker> {
        let w = DebitWorker::recover(&plan(strategy), NodeId(1), &WorkerDurable { done });
        Harness::new(NodeId(1), w, &["db", "w"])
    }

    fn requests(effects: &[Effect<DebitWorker>]) -> Vec<SqlRequest> {
        sent::<_, SqlMsg>(effects)
            .into_iter()
            .filter_map(|(to, m)| match m {
                SqlMsg::Request(r) if to == DB => Some(r),
                _ => None,
            })
            .collect()
    }

    fn row(balance: i64, version: u64) -> SqlMsg {
        SqlMsg::Reply(SqlReply::Row { balance, version })
    }

    #[test]
    fn the_row_lock_strategy_reads_for_update() {
        let mut w = worker(DebitStrategy::RowLock, false);
        assert_eq!(
            requests(&w.fire(WorkerTimer::Begin)),
            vec![SqlRequest::Select { for_update: true }]
        );
        let mut plain = worker(DebitStrategy::ReadThenWrite, false);
        assert_eq!(
            requests(&plain.fire(WorkerTimer::Begin)),
            vec![SqlRequest::Select { for_update: false }]
        );
    }

    #[test]
    fn the_write_is_computed_from_the_value_read() {
        let mut w = worker(DebitStrategy::ReadThenWrite, false);
        w.fire(WorkerTimer::Begin);
        let fx = w.deliver(DB, row(100, 1));
        assert_eq!(timers_set(&fx), vec![(WorkerTimer::FinishComputing, 5)]);
        assert_eq!(
            requests(&w.fire(WorkerTimer::FinishComputing)),
            vec![SqlRequest::Update { balance: 70 }]
        );
        assert_eq!(
            requests(&w.deliver(DB, SqlMsg::Reply(SqlReply::Updated))),
            vec![SqlRequest::Commit]
        );
        let fx = w.deliver(DB, SqlMsg::Reply(SqlReply::Committed));
        assert!(fx.iter().any(|e| matches!(e, Effect::Persist(d) if d.done)));
        assert_eq!(w.node.phase, Phase::Done);
    }

    #[test]
    fn a_refused_version_check_reads_again_then_gives_up() {
        let mut w = worker(DebitStrategy::VersionCheck, false);
        w.fire(WorkerTimer::Begin);
        w.deliver(DB, row(100, 1));
        assert_eq!(
            requests(&w.fire(WorkerTimer::FinishComputing)),
            vec![SqlRequest::UpdateIfVersion {
                balance: 70,
                expected_version: 1
            }]
        );
        assert_eq!(
            requests(&w.deliver(DB, SqlMsg::Reply(SqlReply::VersionChecked { rows: 0 }))),
            vec![SqlRequest::Select { for_update: false }],
            "stale read: read again"
        );
        w.deliver(DB, row(70, 2));
        w.fire(WorkerTimer::FinishComputing);
        let fx = w.deliver(DB, SqlMsg::Reply(SqlReply::VersionChecked { rows: 0 }));
        assert!(requests(&fx).is_empty());
        assert_eq!(w.node.phase, Phase::GaveUp, "max_attempts is 2");
    }

    #[test]
    fn a_worker_whose_debit_is_done_stays_idle_after_restart() {
        let mut w = worker(DebitStrategy::RowLock, true);
        let fx = w.start();
        assert!(timers_set(&fx).is_empty());
        assert_eq!(w.node.phase, Phase::Done);
    }

    #[test]
    fn replies_from_anyone_but_the_database_are_ignored() {
        let mut w = worker(DebitStrategy::ReadThenWrite, false);
        w.fire(WorkerTimer::Begin);
        let fx = w.deliver(NodeId(2), row(5, 9));
        assert!(fx.is_empty());
        assert_eq!(w.node.phase, Phase::Reading);
    }
}
