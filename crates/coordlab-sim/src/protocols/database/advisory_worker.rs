//! A worker that runs scheduled jobs, each guarded by an advisory lock on the job's name, over
//! one pooled connection. A run locks (inside BEGIN for a transaction-scoped lock), works,
//! and ends with COMMIT or `pg_advisory_unlock`; refused, it skips the run. A run that throws
//! ends with ROLLBACK in transaction scope; in session scope its unlock never runs and the
//! connection goes back to the pool as it is. The pool closes a connection at its maximum
//! lifetime (at once if it is idle, else when its run ends) and opens a new one when needed.

use super::advisory_sql::{AdvisoryMsg, AdvisoryReply, AdvisoryRequest, Scope, Wait};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::rng::between_us;
use crate::presentation::narration::database::advisory_worker::AdvisoryWorkerSaw;

/// One scheduled run of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobRun {
    pub at_us: u64,
    pub name: &'static str,
    /// The job's code throws halfway through its work.
    pub throws: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobPlan {
    pub db: NodeId,
    pub scope: Scope,
    pub wait: Wait,
    pub runs: Vec<JobRun>,
    /// Added to each run's start.
    pub jitter_us: u64,
    pub work_us: (u64, u64),
    /// The pool closes a connection this long after opening it.
    pub pool_lifetime_us: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunResult {
    Done,
    /// The lock call returned false: the run was skipped.
    Refused,
    /// The job threw.
    Failed,
    /// It fired while the worker was still busy with an earlier run.
    Missed,
    /// The connection broke mid-run.
    ConnectionLost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Beginning,
    Locking,
    Working,
    /// COMMIT or unlock sent after the work.
    Ending,
    /// COMMIT of a transaction whose lock was refused.
    Skipping,
    RollingBack,
}

/// Survives a crash: how each run it started ended, by run index, and how many connections
/// it has opened (a restarted process opens new ones; it cannot reuse the old).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobDurable {
    pub results: Vec<(u32, RunResult)>,
    pub conns_opened: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobTimer {
    Run(u32),
    WorkDone,
    Throw,
    /// The pool's maximum lifetime for connection `n` is reached.
    Retire(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobWorker {
    pub plan: JobPlan,
    pub phase: Phase,
    /// The run in progress.
    pub run: Option<u32>,
    /// The pooled connection, if open.
    pub conn: Option<u32>,
    pub conns_opened: u32,
    pub retire_pending: bool,
    pub results: Vec<(u32, RunResult)>,
    /// The last statement it sent.
    pub last_sql: String,
}

impl JobWorker {
    pub fn recover(plan: JobPlan, durable: &JobDurable) -> JobWorker {
        JobWorker {
            plan,
            phase: Phase::Idle,
            run: None,
            conn: None,
            conns_opened: durable.conns_opened,
            retire_pending: false,
            results: durable.results.clone(),
            last_sql: String::new(),
        }
    }

    /// Its planned run number `i`, if there is one.
    fn planned(&self, i: u32) -> Option<&JobRun> {
        self.plan.runs.get(i as usize)
    }

    /// The job it is running, if any.
    pub fn running(&self) -> Option<&'static str> {
        self.run.and_then(|i| self.planned(i)).map(|r| r.name)
    }

    /// Whether it holds the lock as far as it knows: granted and not yet ended.
    pub fn believes_it_holds(&self) -> bool {
        matches!(self.phase, Phase::Working | Phase::Ending)
    }

    /// How many of its runs of `name` ended as `result`.
    pub fn count(&self, name: &str, result: RunResult) -> u32 {
        self.results
            .iter()
            .filter(|(i, r)| *r == result && self.planned(*i).is_some_and(|run| run.name == name))
            .count() as u32
    }

    fn persist(&self, ctx: &mut Ctx<'_, Self>) {
        ctx.persist(JobDurable {
            results: self.results.clone(),
            conns_opened: self.conns_opened,
        });
    }

    fn send(&mut self, ctx: &mut Ctx<'_, Self>, request: AdvisoryRequest) {
        let conn = match self.conn {
            Some(c) => c,
            None => {
                self.conns_opened += 1;
                let c = self.conns_opened;
                self.conn = Some(c);
                self.persist(ctx);
                ctx.set_timer(JobTimer::Retire(c), self.plan.pool_lifetime_us);
                c
            }
        };
        self.last_sql = request.sql_text();
        ctx.send(self.plan.db, AdvisoryMsg::Request { conn, request });
    }

    fn record(&mut self, ctx: &mut Ctx<'_, Self>, result: RunResult) {
        if let Some(i) = self.run {
            self.results.push((i, result));
            self.persist(ctx);
        }
    }

    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::Idle;
        self.run = None;
        if self.retire_pending {
            self.close(ctx);
        }
    }

    fn close(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.retire_pending = false;
        if let Some(conn) = self.conn.take() {
            ctx.send(
                self.plan.db,
                AdvisoryMsg::Request {
                    conn,
                    request: AdvisoryRequest::Close,
                },
            );
        }
    }

    fn lock_request(&self, name: &'static str) -> AdvisoryRequest {
        AdvisoryRequest::Lock {
            name,
            scope: self.plan.scope,
            wait: self.plan.wait,
        }
    }

    fn start(&mut self, ctx: &mut Ctx<'_, Self>, i: u32) {
        let Some(run) = self.planned(i).copied() else {
            return;
        };
        if self.phase != Phase::Idle {
            let busy = self.running().unwrap_or("a run");
            self.results.push((i, RunResult::Missed));
            self.persist(ctx);
            ctx.note(AdvisoryWorkerSaw::RunMissed {
                me: ctx.me(),
                run: run.name,
                busy,
            });
            return;
        }
        self.run = Some(i);
        if self.plan.scope == Scope::Xact {
            self.phase = Phase::Beginning;
            self.send(ctx, AdvisoryRequest::Begin);
        } else {
            self.phase = Phase::Locking;
            self.send(ctx, self.lock_request(run.name));
        }
    }

    fn reply(&mut self, ctx: &mut Ctx<'_, Self>, conn: u32, reply: AdvisoryReply) {
        if self.conn != Some(conn) {
            return;
        }
        let name = self.running().unwrap_or("");
        match (reply, self.phase) {
            (AdvisoryReply::NoConnection, _) => {
                self.conn = None;
                self.lost(ctx);
            }
            (AdvisoryReply::Begun, Phase::Beginning) => {
                self.phase = Phase::Locking;
                self.send(ctx, self.lock_request(name));
            }
            (AdvisoryReply::Bool(true) | AdvisoryReply::Granted, Phase::Locking) => {
                self.phase = Phase::Working;
                let work_us = between_us(ctx.rng, self.plan.work_us.0, self.plan.work_us.1);
                let throws = self.run.and_then(|i| self.planned(i)).is_some_and(|r| r.throws);
                if throws {
                    ctx.set_timer(JobTimer::Throw, work_us / 2);
                } else {
                    ctx.set_timer(JobTimer::WorkDone, work_us);
                }
            }
            (AdvisoryReply::Bool(false), Phase::Locking) => {
                self.record(ctx, RunResult::Refused);
                ctx.note(AdvisoryWorkerSaw::SkipsRun { me: ctx.me(), name });
                if self.plan.scope == Scope::Xact {
                    self.phase = Phase::Skipping;
                    self.send(ctx, AdvisoryRequest::Commit);
                } else {
                    self.finish(ctx);
                }
            }
            (AdvisoryReply::Committed | AdvisoryReply::Bool(_), Phase::Ending) => {
                self.record(ctx, RunResult::Done);
                self.finish(ctx);
            }
            (AdvisoryReply::Committed, Phase::Skipping) | (AdvisoryReply::RolledBack, Phase::RollingBack) => {
                self.finish(ctx);
            }
            _ => {}
        }
    }

    /// The connection broke: the run in progress is over, and so is whatever it held.
    fn lost(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.retire_pending = false;
        if self.phase != Phase::Idle {
            self.record(ctx, RunResult::ConnectionLost);
            ctx.note(AdvisoryWorkerSaw::ConnectionBroke { me: ctx.me() });
        }
        ctx.cancel_timer(JobTimer::WorkDone);
        ctx.cancel_timer(JobTimer::Throw);
        self.phase = Phase::Idle;
        self.run = None;
    }
}

impl Participant for JobWorker {
    type Msg = AdvisoryMsg;
    type Timer = JobTimer;
    type Durable = JobDurable;
    type Config = JobPlan;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        let now = ctx.local_now_us;
        for (i, run) in self.plan.runs.clone().iter().enumerate() {
            let i = i as u32;
            if run.at_us >= now && !self.results.iter().any(|(r, _)| *r == i) {
                let jitter = between_us(ctx.rng, 0, self.plan.jitter_us);
                ctx.set_timer(JobTimer::Run(i), run.at_us - now + jitter);
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: AdvisoryMsg) {
        if let (true, AdvisoryMsg::Reply { conn, reply }) = (from == self.plan.db, msg) {
            self.reply(ctx, conn, reply);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: JobTimer) {
        match timer {
            JobTimer::Run(i) => self.start(ctx, i),
            JobTimer::WorkDone if self.phase == Phase::Working => {
                self.phase = Phase::Ending;
                match self.plan.scope {
                    Scope::Xact => self.send(ctx, AdvisoryRequest::Commit),
                    Scope::Session => {
                        let name = self.running().unwrap_or("");
                        self.send(ctx, AdvisoryRequest::Unlock { name });
                    }
                }
            }
            JobTimer::Throw if self.phase == Phase::Working => {
                self.record(ctx, RunResult::Failed);
                match self.plan.scope {
                    Scope::Xact => {
                        ctx.note(AdvisoryWorkerSaw::ThrowsInTransaction { me: ctx.me() });
                        self.phase = Phase::RollingBack;
                        self.send(ctx, AdvisoryRequest::Rollback);
                    }
                    Scope::Session => {
                        ctx.note(AdvisoryWorkerSaw::ThrowsBeforeUnlock { me: ctx.me() });
                        self.finish(ctx);
                    }
                }
            }
            JobTimer::Retire(n) if self.conn == Some(n) => {
                if self.phase == Phase::Idle {
                    ctx.note(AdvisoryWorkerSaw::PoolRetires { me: ctx.me() });
                    self.close(ctx);
                } else {
                    self.retire_pending = true;
                }
            }
            _ => {}
        }
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        if peer == self.plan.db && self.conn.take().is_some() {
            self.lost(ctx);
        }
    }

    fn watches(&self, peer: NodeId) -> bool {
        peer == self.plan.db && self.conn.is_some()
    }

    fn recover(plan: &JobPlan, _id: NodeId, durable: &JobDurable) -> Self {
        JobWorker::recover(plan.clone(), durable)
    }
}
