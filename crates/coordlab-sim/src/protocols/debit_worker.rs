//! A worker that debits the account once, using one of three strategies:
//! read-then-write with no lock, read under `SELECT … FOR UPDATE`, or a version-checked
//! write that retries when the row changed underneath it.

use super::sql::{rupees, SqlMsg, SqlReply, SqlRequest};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Label, Participant};
use crate::kernel::rng::between_us;

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

/// Survives a crash: the worker's configuration (its program and settings on disk) and
/// whether its debit is known to be committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerDurable {
    pub name: String,
    pub plan: DebitPlan,
    pub done: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerTimer {
    Begin,
    FinishComputing,
}

impl Label for WorkerTimer {
    fn label(&self) -> String {
        match self {
            WorkerTimer::Begin => "the debit job fires".to_string(),
            WorkerTimer::FinishComputing => "finishes computing the new balance".to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebitWorker {
    pub name: String,
    pub plan: DebitPlan,
    pub phase: Phase,
    pub attempts: u32,
    pub done: bool,
}

impl DebitWorker {
    pub fn recover(durable: &WorkerDurable) -> DebitWorker {
        DebitWorker {
            name: durable.name.clone(),
            plan: durable.plan,
            phase: Phase::Idle,
            attempts: 0,
            done: durable.done,
        }
    }

    pub fn start<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = SqlMsg, Timer = WorkerTimer>,
    {
        if self.done {
            ctx.note(format!(
                "{} finds its debit already recorded as done and stays idle.",
                self.name
            ));
            self.phase = Phase::Done;
            return;
        }
        let (lo, hi) = self.plan.start_delay_us;
        let delay_us = between_us(ctx.rng, lo, hi);
        ctx.set_timer(WorkerTimer::Begin, delay_us);
    }

    pub fn timer<P>(&mut self, ctx: &mut Ctx<'_, P>, timer: WorkerTimer)
    where
        P: Participant<Msg = SqlMsg, Timer = WorkerTimer>,
    {
        match (timer, self.phase.clone()) {
            (WorkerTimer::Begin, Phase::Idle) => {
                ctx.note(match self.plan.strategy {
                    DebitStrategy::ReadThenWrite => format!(
                        "{} opens a transaction and reads the balance with a plain SELECT, intending to subtract {}.",
                        self.name,
                        rupees(self.plan.amount)
                    ),
                    DebitStrategy::RowLock => format!(
                        "{} reads with SELECT … FOR UPDATE: the row comes back only together with an exclusive lock.",
                        self.name
                    ),
                    DebitStrategy::VersionCheck => format!(
                        "{} reads the balance and the row's version number. It takes no lock; it will prove nothing changed when it writes.",
                        self.name
                    ),
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
                        ctx.note(format!(
                            "{} writes the number it computed, {}. It does not look at the row again first.",
                            self.name,
                            rupees(new_balance)
                        ));
                        ctx.send(
                            self.plan.db,
                            SqlMsg::Request(SqlRequest::Update { balance: new_balance }),
                        );
                    }
                    DebitStrategy::VersionCheck => {
                        ctx.note(format!(
                            "{} writes {} only if the row is still at version {read_version}: check and write travel as one statement.",
                            self.name,
                            rupees(new_balance)
                        ));
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

    fn read<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = SqlMsg, Timer = WorkerTimer>,
    {
        self.attempts += 1;
        self.phase = Phase::Reading;
        let for_update = self.plan.strategy == DebitStrategy::RowLock;
        ctx.send(self.plan.db, SqlMsg::Request(SqlRequest::Select { for_update }));
    }

    pub fn reply<P>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, msg: SqlMsg)
    where
        P: Participant<Msg = SqlMsg, Timer = WorkerTimer>,
        P::Durable: From<WorkerDurable>,
    {
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
                ctx.note(format!(
                    "{} now believes the balance is {} and spends a moment working out {} − {}.",
                    self.name,
                    rupees(balance),
                    rupees(balance),
                    rupees(self.plan.amount)
                ));
                let (lo, hi) = self.plan.think_us;
                let think_us = between_us(ctx.rng, lo, hi);
                ctx.set_timer(WorkerTimer::FinishComputing, think_us);
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
                    ctx.note(format!(
                        "{} gives up after {} attempts.",
                        self.name, self.attempts
                    ));
                } else {
                    ctx.note(format!(
                        "Zero rows: {}'s read was stale. It throws the computed value away and reads the row again.",
                        self.name
                    ));
                    self.read(ctx);
                }
            }
            _ => {}
        }
    }

    fn finish<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = SqlMsg, Timer = WorkerTimer>,
        P::Durable: From<WorkerDurable>,
    {
        self.phase = Phase::Done;
        self.done = true;
        ctx.persist(
            WorkerDurable {
                name: self.name.clone(),
                plan: self.plan,
                done: true,
            }
            .into(),
        );
        ctx.note(format!(
            "{}'s debit is committed; its job is finished.",
            self.name
        ));
    }

    pub fn summary(&self) -> Vec<String> {
        let phase = match &self.phase {
            Phase::Idle => "waiting for the job".to_string(),
            Phase::Reading => "reading the row".to_string(),
            Phase::Computing { read_balance, .. } => {
                format!("read {}, computing", rupees(*read_balance))
            }
            Phase::Writing { new_balance } => format!("writing {}", rupees(*new_balance)),
            Phase::Committing { new_balance } => format!("committing {}", rupees(*new_balance)),
            Phase::Done => "done".to_string(),
            Phase::GaveUp => "gave up".to_string(),
        };
        let mut lines = vec![phase];
        if self.attempts > 1 {
            lines.push(format!("attempt {}", self.attempts));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::participant::Effect;
    use crate::kernel::rng::{stream, Stream};

    /// Drives a `DebitWorker` alone, so its effects can be inspected.
    struct WorkerOnly;
    impl Participant for WorkerOnly {
        type Msg = SqlMsg;
        type Timer = WorkerTimer;
        type Durable = WorkerDurable;
        fn on_start(&mut self, _: &mut Ctx<'_, Self>) {}
        fn on_message(&mut self, _: &mut Ctx<'_, Self>, _: NodeId, _: SqlMsg) {}
        fn on_timer(&mut self, _: &mut Ctx<'_, Self>, _: WorkerTimer) {}
        fn recover(_: NodeId, _: &WorkerDurable) -> Self {
            WorkerOnly
        }
        fn summary(&self, _: u64) -> Vec<String> {
            Vec::new()
        }
        fn durable_summary(_: &WorkerDurable) -> Vec<String> {
            Vec::new()
        }
    }

    const DB: NodeId = NodeId(0);

    fn worker(strategy: DebitStrategy) -> DebitWorker {
        let plan = DebitPlan {
            strategy,
            amount: 30,
            db: DB,
            start_delay_us: (0, 0),
            think_us: (5, 5),
            max_attempts: 2,
        };
        DebitWorker::recover(&WorkerDurable {
            name: "w".into(),
            plan,
            done: false,
        })
    }

    fn drive(f: impl FnOnce(&mut Ctx<'_, WorkerOnly>)) -> Vec<Effect<WorkerOnly>> {
        let mut rng = stream(0, Stream::Node(NodeId(1)));
        let mut effects = Vec::new();
        f(&mut Ctx::new(NodeId(1), 0, &mut rng, &mut effects));
        effects
    }

    fn sent(effects: &[Effect<WorkerOnly>]) -> Vec<SqlRequest> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send {
                    to,
                    msg: SqlMsg::Request(r),
                } if *to == DB => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_row_lock_strategy_reads_for_update() {
        let mut w = worker(DebitStrategy::RowLock);
        let fx = drive(|c| w.timer(c, WorkerTimer::Begin));
        assert_eq!(sent(&fx), vec![SqlRequest::Select { for_update: true }]);
        let mut plain = worker(DebitStrategy::ReadThenWrite);
        let fx = drive(|c| plain.timer(c, WorkerTimer::Begin));
        assert_eq!(sent(&fx), vec![SqlRequest::Select { for_update: false }]);
    }

    #[test]
    fn the_write_is_computed_from_the_value_read() {
        let mut w = worker(DebitStrategy::ReadThenWrite);
        drive(|c| w.timer(c, WorkerTimer::Begin));
        let fx = drive(|c| {
            w.reply(
                c,
                DB,
                SqlMsg::Reply(SqlReply::Row {
                    balance: 100,
                    version: 1,
                }),
            )
        });
        assert!(fx.iter().any(|e| matches!(
            e,
            Effect::SetTimer {
                timer: WorkerTimer::FinishComputing,
                ..
            }
        )));
        let fx = drive(|c| w.timer(c, WorkerTimer::FinishComputing));
        assert_eq!(sent(&fx), vec![SqlRequest::Update { balance: 70 }]);
        let fx = drive(|c| w.reply(c, DB, SqlMsg::Reply(SqlReply::Updated)));
        assert_eq!(sent(&fx), vec![SqlRequest::Commit]);
        let fx = drive(|c| w.reply(c, DB, SqlMsg::Reply(SqlReply::Committed)));
        assert!(fx.iter().any(|e| matches!(e, Effect::Persist(d) if d.done)));
        assert_eq!(w.phase, Phase::Done);
    }

    #[test]
    fn a_refused_version_check_reads_again_then_gives_up() {
        let mut w = worker(DebitStrategy::VersionCheck);
        drive(|c| w.timer(c, WorkerTimer::Begin));
        drive(|c| {
            w.reply(
                c,
                DB,
                SqlMsg::Reply(SqlReply::Row {
                    balance: 100,
                    version: 1,
                }),
            )
        });
        let fx = drive(|c| w.timer(c, WorkerTimer::FinishComputing));
        assert_eq!(
            sent(&fx),
            vec![SqlRequest::UpdateIfVersion {
                balance: 70,
                expected_version: 1
            }]
        );
        let fx = drive(|c| w.reply(c, DB, SqlMsg::Reply(SqlReply::VersionChecked { rows: 0 })));
        assert_eq!(
            sent(&fx),
            vec![SqlRequest::Select { for_update: false }],
            "stale read: read again"
        );
        drive(|c| {
            w.reply(
                c,
                DB,
                SqlMsg::Reply(SqlReply::Row {
                    balance: 70,
                    version: 2,
                }),
            )
        });
        drive(|c| w.timer(c, WorkerTimer::FinishComputing));
        let fx = drive(|c| w.reply(c, DB, SqlMsg::Reply(SqlReply::VersionChecked { rows: 0 })));
        assert!(sent(&fx).is_empty());
        assert_eq!(w.phase, Phase::GaveUp, "max_attempts is 2");
    }

    #[test]
    fn a_worker_whose_debit_is_done_stays_idle_after_restart() {
        let plan = worker(DebitStrategy::RowLock).plan;
        let mut w = DebitWorker::recover(&WorkerDurable {
            name: "w".into(),
            plan,
            done: true,
        });
        let fx = drive(|c| w.start(c));
        assert!(!fx.iter().any(|e| matches!(e, Effect::SetTimer { .. })));
        assert_eq!(w.phase, Phase::Done);
    }

    #[test]
    fn replies_from_anyone_but_the_database_are_ignored() {
        let mut w = worker(DebitStrategy::ReadThenWrite);
        drive(|c| w.timer(c, WorkerTimer::Begin));
        let fx = drive(|c| {
            w.reply(
                c,
                NodeId(2),
                SqlMsg::Reply(SqlReply::Row {
                    balance: 5,
                    version: 9,
                }),
            )
        });
        assert!(fx.is_empty());
        assert_eq!(w.phase, Phase::Reading);
    }
}
