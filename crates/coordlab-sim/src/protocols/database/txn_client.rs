//! A database client that runs a small transaction program against a [`super::row_lock_db`]
//! database: statements in order with thinking time between them, ending in COMMIT.
//!
//! When a statement fails (a NOWAIT refusal, a deadlock victim) the client rolls back, waits a
//! random back-off and runs the program again from the start — the retry every caller of a
//! locking transaction must be ready for. A queue worker (`repeat`) runs the program again
//! after each commit until its claim finds no job; `FinishJob { id: 0 }` in a program means
//! the job it claimed.

use super::db_sql::{ClaimLock, DbMsg, DbReply, DbRequest};
use super::set_timer_within;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::presentation::narration::database::txn_client::TxnClientSaw;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Run(DbRequest),
    /// Work between statements, for a random time in the range (the row locks stay held).
    Think(u64, u64),
}

/// A client's program and habits, fixed by the scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnPlan {
    pub db: NodeId,
    pub program: Vec<Step>,
    pub start_delay_us: (u64, u64),
    pub backoff_us: (u64, u64),
    /// Failed attempts after which it gives up.
    pub max_retries: u32,
    /// Run the program again after each commit until a claim returns no job.
    pub repeat: bool,
    /// What to call one run of the program in narration ("job", "transfer").
    pub noun: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientPhase {
    Idle,
    /// Waiting for the answer to this statement.
    Sent(DbRequest),
    Thinking,
    /// Rolling back after the error.
    RollingBack(&'static str),
    BackingOff,
    Done,
    GaveUp,
}

/// Survives a crash: how much work it knows is committed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientDurable {
    pub done: bool,
    pub committed: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    Begin,
    ThinkDone,
    Retry,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnClient {
    pub plan: TxnPlan,
    pub phase: ClientPhase,
    /// Index of the step being run.
    pub pc: usize,
    pub claimed: Option<u32>,
    /// The last claim returned no row, and how it locked (with SKIP LOCKED, no row does not
    /// mean no job is pending: only that none was unlocked).
    pub no_row: Option<ClaimLock>,
    /// Committed runs of the program (jobs done, transfers made).
    pub committed: u32,
    /// Errors the database returned (NOWAIT refusals, deadlock aborts).
    pub errors: u32,
    /// Runs of the program started again after an error.
    pub retries: u32,
    pub done: bool,
}

impl TxnClient {
    /// Starts the program again on a fresh transaction: BEGIN first.
    fn restart(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.pc = 0;
        self.claimed = None;
        ctx.send(self.plan.db, DbMsg::Request(DbRequest::Begin));
        self.phase = ClientPhase::Sent(DbRequest::Begin);
    }

    /// Runs steps from `pc` until one needs an answer or a timer.
    fn advance(&mut self, ctx: &mut Ctx<'_, Self>) {
        match self.plan.program.get(self.pc).cloned() {
            Some(Step::Run(request)) => {
                let request = match request {
                    DbRequest::FinishJob { id: 0 } => DbRequest::FinishJob {
                        id: self.claimed.unwrap_or(0),
                    },
                    r => r,
                };
                ctx.send(self.plan.db, DbMsg::Request(request.clone()));
                self.phase = ClientPhase::Sent(request);
            }
            Some(Step::Think(lo, hi)) => {
                self.phase = ClientPhase::Thinking;
                set_timer_within(ctx, ClientTimer::ThinkDone, (lo, hi));
            }
            None => self.finish(ctx),
        }
    }

    /// Waits a random back-off before running the program again.
    fn back_off(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.retries += 1;
        self.phase = ClientPhase::BackingOff;
        set_timer_within(ctx, ClientTimer::Retry, self.plan.backoff_us);
    }

    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = ClientPhase::Done;
        self.done = true;
        ctx.persist(ClientDurable {
            done: true,
            committed: self.committed,
        });
    }

    /// Whether it has a transaction open on the database (a statement out, or work between
    /// statements).
    pub fn in_transaction(&self) -> bool {
        matches!(
            self.phase,
            ClientPhase::Sent(_) | ClientPhase::Thinking | ClientPhase::RollingBack(_)
        )
    }
}

impl Participant for TxnClient {
    type Msg = DbMsg;
    type Timer = ClientTimer;
    type Durable = ClientDurable;
    type Config = TxnPlan;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.done {
            self.phase = ClientPhase::Done;
            return;
        }
        set_timer_within(ctx, ClientTimer::Begin, self.plan.start_delay_us);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: DbMsg) {
        if from != self.plan.db {
            return;
        }
        let DbMsg::Reply(reply) = msg else { return };
        match (reply, self.phase.clone()) {
            (DbReply::Error { sqlstate }, ClientPhase::Sent(r)) if r != DbRequest::Begin => {
                self.errors += 1;
                ctx.note(TxnClientSaw::Error {
                    me: ctx.me(),
                    sqlstate,
                    noun: self.plan.noun,
                });
                ctx.send(self.plan.db, DbMsg::Request(DbRequest::Rollback));
                self.phase = ClientPhase::RollingBack(sqlstate);
            }
            (DbReply::RolledBack, ClientPhase::RollingBack(_)) => {
                if self.retries >= self.plan.max_retries {
                    self.phase = ClientPhase::GaveUp;
                    ctx.note(TxnClientSaw::GivesUp {
                        me: ctx.me(),
                        retries: self.retries,
                    });
                } else {
                    self.back_off(ctx);
                }
            }
            (DbReply::Begun, ClientPhase::Sent(DbRequest::Begin)) => self.advance(ctx),
            (DbReply::Job(None), ClientPhase::Sent(DbRequest::ClaimJob { lock })) => {
                self.no_row = Some(lock);
                ctx.send(self.plan.db, DbMsg::Request(DbRequest::Commit));
                self.phase = ClientPhase::Sent(DbRequest::Commit);
            }
            (DbReply::Job(Some(id)), ClientPhase::Sent(DbRequest::ClaimJob { .. })) => {
                self.claimed = Some(id);
                self.pc += 1;
                self.advance(ctx);
            }
            // A reply to a statement of this program (a stale one, to a statement sent before a
            // crash, is not: it finds the client opening its transaction, or elsewhere).
            (DbReply::Rows(_), ClientPhase::Sent(r))
                if !matches!(
                    r,
                    DbRequest::Begin | DbRequest::Commit | DbRequest::Rollback | DbRequest::ClaimJob { .. }
                ) =>
            {
                self.pc += 1;
                self.advance(ctx);
            }
            (DbReply::Committed, ClientPhase::Sent(DbRequest::Commit)) => {
                if let Some(lock) = self.no_row {
                    ctx.note(TxnClientSaw::NoRow { me: ctx.me(), lock });
                    self.finish(ctx);
                    return;
                }
                self.committed += 1;
                ctx.persist(ClientDurable {
                    done: false,
                    committed: self.committed,
                });
                if self.plan.repeat {
                    self.restart(ctx);
                } else {
                    ctx.note(TxnClientSaw::Committed {
                        me: ctx.me(),
                        noun: self.plan.noun,
                    });
                    self.finish(ctx);
                }
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ClientTimer) {
        match (timer, &self.phase) {
            (ClientTimer::Begin, ClientPhase::Idle) | (ClientTimer::Retry, ClientPhase::BackingOff) => {
                self.restart(ctx);
            }
            (ClientTimer::ThinkDone, ClientPhase::Thinking) => {
                self.pc += 1;
                self.advance(ctx);
            }
            _ => {}
        }
    }

    /// The database crashed: the connection and the transaction on it are gone. Whatever it
    /// claimed or staged is not its own any more; it backs off and starts the program again.
    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        if peer != self.plan.db || !self.in_transaction() {
            return;
        }
        self.errors += 1;
        self.claimed = None;
        ctx.cancel_timer(ClientTimer::ThinkDone);
        ctx.note(TxnClientSaw::ConnectionBroke { me: ctx.me() });
        self.back_off(ctx);
    }

    fn watches(&self, peer: NodeId) -> bool {
        peer == self.plan.db && self.in_transaction()
    }

    fn recover(plan: &TxnPlan, _id: NodeId, durable: &ClientDurable) -> Self {
        TxnClient {
            plan: plan.clone(),
            phase: ClientPhase::Idle,
            pc: 0,
            claimed: None,
            no_row: None,
            committed: durable.committed,
            errors: 0,
            retries: 0,
            done: durable.done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{sent, timers_set, Harness};
    use crate::protocols::database::db_sql::{ClaimLock, LOCK_NOT_AVAILABLE};

    const DB: NodeId = NodeId(0);

    fn worker() -> Harness<TxnClient> {
        let plan = TxnPlan {
            db: DB,
            program: vec![
                Step::Run(DbRequest::ClaimJob {
                    lock: ClaimLock::NoWait,
                }),
                Step::Think(5, 5),
                Step::Run(DbRequest::FinishJob { id: 0 }),
                Step::Run(DbRequest::Commit),
            ],
            start_delay_us: (0, 0),
            backoff_us: (7, 7),
            max_retries: 1,
            repeat: true,
            noun: "job",
        };
        Harness::new(
            NodeId(1),
            TxnClient::recover(&plan, NodeId(1), &ClientDurable::default()),
            &["db", "w"],
        )
    }

    fn requests(fx: &[crate::kernel::participant::Effect<TxnClient>]) -> Vec<DbRequest> {
        sent::<_, DbMsg>(fx)
            .into_iter()
            .filter_map(|(_, m)| match m {
                DbMsg::Request(r) => Some(r),
                DbMsg::Reply(_) => None,
            })
            .collect()
    }

    fn reply(r: DbReply) -> DbMsg {
        DbMsg::Reply(r)
    }

    #[test]
    fn a_worker_claims_works_finishes_the_claimed_job_and_claims_again() {
        let mut w = worker();
        assert_eq!(requests(&w.fire(ClientTimer::Begin)), vec![DbRequest::Begin]);
        assert_eq!(
            requests(&w.deliver(DB, reply(DbReply::Begun))),
            vec![DbRequest::ClaimJob {
                lock: ClaimLock::NoWait
            }]
        );
        assert_eq!(
            timers_set(&w.deliver(DB, reply(DbReply::Job(Some(4))))),
            vec![(ClientTimer::ThinkDone, 5)]
        );
        assert_eq!(
            requests(&w.fire(ClientTimer::ThinkDone)),
            vec![DbRequest::FinishJob { id: 4 }]
        );
        assert_eq!(
            requests(&w.deliver(DB, reply(DbReply::Rows(1)))),
            vec![DbRequest::Commit]
        );
        assert_eq!(
            requests(&w.deliver(DB, reply(DbReply::Committed))),
            vec![DbRequest::Begin]
        );
        w.deliver(DB, reply(DbReply::Begun));
        assert_eq!(w.node.committed, 1);
        w.deliver(DB, reply(DbReply::Job(None)));
        w.deliver(DB, reply(DbReply::Committed));
        assert_eq!(w.node.phase, ClientPhase::Done);
        assert_eq!(w.node.committed, 1);
    }

    #[test]
    fn an_error_rolls_back_backs_off_and_retries_then_gives_up() {
        let mut w = worker();
        w.fire(ClientTimer::Begin);
        w.deliver(DB, reply(DbReply::Begun));
        let err = reply(DbReply::Error {
            sqlstate: LOCK_NOT_AVAILABLE,
        });
        assert_eq!(requests(&w.deliver(DB, err.clone())), vec![DbRequest::Rollback]);
        assert_eq!(
            timers_set(&w.deliver(DB, reply(DbReply::RolledBack))),
            vec![(ClientTimer::Retry, 7)]
        );
        assert_eq!(requests(&w.fire(ClientTimer::Retry)), vec![DbRequest::Begin]);
        w.deliver(DB, reply(DbReply::Begun));
        w.deliver(DB, err);
        w.deliver(DB, reply(DbReply::RolledBack));
        assert_eq!(w.node.phase, ClientPhase::GaveUp);
        assert_eq!((w.node.errors, w.node.retries), (2, 1));
    }
}
