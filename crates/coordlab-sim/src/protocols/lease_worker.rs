//! A worker that coordinates a multi-step job — usually with a lease, sometimes with one of
//! the alternatives (a unique insert, a conditional claim, partitioning) or with nothing.
//!
//! With a lease it acquires, renews on a heartbeat, and writes each step carrying the token
//! it was handed. A renewal that comes back empty means the lease is lost: it stops at once.
//! It judges its own lease by its own clock. Its mistakes are configurable, one flag each:
//! no fencing, checking the token in application code, fencing only the first write, retrying
//! after a rejection, deleting the lease without checking the owner.

use super::lease_msg::{seconds, LeaseMsg, ReleaseMode, WriteCheck};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Label, Participant};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;

/// How a worker makes sure it is the only one doing the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coordination {
    /// Nothing: it just runs.
    None,
    /// A lease from the lease store.
    Lease,
    /// Insert a row keyed by the job; a unique-constraint conflict means someone else has it.
    UniqueInsert,
    /// `UPDATE job SET state='running' WHERE state='pending'`: one row means the work is mine.
    ConditionalClaim,
    /// The job's key is routed to exactly one consumer; `owns` says whether that is this one.
    Partition { owns: bool },
}

/// How each write to the protected resource is guarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fencing {
    None,
    /// The token check is a predicate of the write itself.
    WritePredicate,
    /// Read `last_token`, compare in application code, then write unchecked.
    AppCheck,
    /// Only step 1 carries the predicate.
    FirstWriteOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnReject {
    /// Correct: a rejected fence means a newer owner exists. Stop.
    Abort,
    /// The mistake: get the lease back and carry on from the rejected step.
    ReacquireAndContinue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// The fenced ledger row.
    Resource,
    /// A payment rail that knows no tokens; optionally with a deterministic idempotency key.
    Rail { idempotency_key: bool },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerPlan {
    pub coordination: Coordination,
    /// The authority it coordinates through: the lease store, or the job table for a unique
    /// insert or a conditional claim.
    pub store: NodeId,
    /// Where the job's writes go: the resource or the rail.
    pub sink_node: NodeId,
    pub sink: Sink,
    pub lease: String,
    pub job_key: String,
    pub ttl_ms: u64,
    /// 0: never renews.
    pub heartbeat_ms: u64,
    /// When the job fires, a seeded draw from this range (ms).
    pub start_after_ms: (u64, u64),
    /// 0: a denied acquire means back off for good; otherwise poll this often (ms).
    pub retry_ms: u64,
    /// Up to this much random extra wait per retry (ms); 0 for none.
    pub retry_jitter_ms: u64,
    pub steps: u32,
    pub step_ms: u64,
    pub amount_per_step: i64,
    pub fencing: Fencing,
    pub on_reject: OnReject,
    /// `None`: never releases (the lease simply expires).
    pub release: Option<ReleaseMode>,
    /// Release even after stopping early — a `finally` block.
    pub release_in_finally: bool,
    /// Mark the protected row with the current token on every renewal.
    pub touch_on_heartbeat: bool,
    /// Judge the lease by the worker's own clock before each step.
    pub check_clock_before_step: bool,
    /// After a fresh grant, ask the sink how far the job got and continue from there
    /// (taking over a half-finished job, or finding it already done).
    pub check_progress: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    LostLease,
    ExpiredByOwnClock,
    Rejected,
    AppCheckCaught,
    NotMine,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Acquiring,
    BackingOff,
    ReadingProgress,
    Checking { step: u32 },
    Computing { step: u32, token: FencingToken },
    Writing { step: u32, token: FencingToken },
    Releasing,
    Done,
    Stopped(StopReason),
    GaveUp,
}

/// What the worker believes about its lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Belief {
    pub token: FencingToken,
    /// By the worker's own clock.
    pub expires_local_us: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerDurable {
    pub name: String,
    pub plan: WorkerPlan,
    pub finished: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseTimer {
    Start,
    Retry,
    Heartbeat,
    StepDone {
        step: u32,
    },
    /// The lease store's expiry instant for a lease.
    Expiry {
        lease: String,
        token: FencingToken,
    },
}

impl Label for LeaseTimer {
    fn label(&self) -> String {
        match self {
            LeaseTimer::Start => "the job fires".to_string(),
            LeaseTimer::Retry => "retries the lease".to_string(),
            LeaseTimer::Heartbeat => "heartbeat: time to renew".to_string(),
            LeaseTimer::StepDone { step } => format!("finishes the work of step {step}"),
            LeaseTimer::Expiry { lease, token } => {
                format!("{lease} (token {token}) reaches its expiry")
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseWorker {
    pub name: String,
    pub plan: WorkerPlan,
    pub phase: Phase,
    pub belief: Option<Belief>,
    acquire_sent_local_us: u64,
    /// The next step to run after (re)acquiring.
    pub next_step: u32,
    pub finished: bool,
    pub acquire_attempts: u32,
    /// Why it stopped early, kept while a `finally` release is in flight.
    stop_reason: Option<StopReason>,
    /// Set when a rejected write is (wrongly) treated as transient: the next grant resumes
    /// the worker's own step counter instead of asking how far the job got.
    resuming: bool,
}

impl LeaseWorker {
    pub fn recover(d: &WorkerDurable) -> LeaseWorker {
        LeaseWorker {
            name: d.name.clone(),
            plan: d.plan.clone(),
            phase: if d.finished { Phase::Done } else { Phase::Idle },
            belief: None,
            acquire_sent_local_us: 0,
            next_step: 1,
            finished: d.finished,
            acquire_attempts: 0,
            stop_reason: None,
            resuming: false,
        }
    }

    /// Whether this worker currently believes it may do the job exclusively.
    pub fn believes_it_holds(&self) -> bool {
        self.belief.is_some()
            && matches!(
                self.phase,
                Phase::ReadingProgress
                    | Phase::Checking { .. }
                    | Phase::Computing { .. }
                    | Phase::Writing { .. }
            )
    }

    fn durable(&self) -> WorkerDurable {
        WorkerDurable {
            name: self.name.clone(),
            plan: self.plan.clone(),
            finished: self.finished,
        }
    }

    pub fn start<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
    {
        if self.finished {
            ctx.note(format!("{} is up again; its job is already done.", self.name));
            return;
        }
        ctx.note(format!(
            "{} is up; its copy of the job is scheduled to fire shortly.",
            self.name
        ));
        let (lo, hi) = self.plan.start_after_ms;
        let delay_us = between_us(ctx.rng, lo * MS_US, hi * MS_US);
        ctx.set_timer(LeaseTimer::Start, delay_us);
    }

    pub fn timer<P>(&mut self, ctx: &mut Ctx<'_, P>, timer: LeaseTimer)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
        P::Durable: From<WorkerDurable>,
    {
        match (timer, self.phase.clone()) {
            (LeaseTimer::Start, Phase::Idle) => self.coordinate(ctx),
            (LeaseTimer::Retry, Phase::BackingOff) => self.acquire(ctx),
            (LeaseTimer::Heartbeat, _) if self.belief.is_some() && self.plan.heartbeat_ms > 0 => {
                ctx.note(format!(
                    "{} asks the store to extend {}: same statement, same owner.",
                    self.name, self.plan.lease
                ));
                ctx.send(
                    self.plan.store,
                    LeaseMsg::Acquire {
                        lease: self.plan.lease.clone(),
                        ttl_ms: self.plan.ttl_ms,
                    },
                );
                self.acquire_sent_local_us = ctx.local_now_us;
            }
            (LeaseTimer::StepDone { step }, Phase::Computing { step: s, token }) if s == step => {
                self.write(ctx, step, token)
            }
            _ => {}
        }
    }

    fn coordinate<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
        P::Durable: From<WorkerDurable>,
    {
        match self.plan.coordination {
            Coordination::Lease => self.acquire(ctx),
            Coordination::None => {
                ctx.note(format!(
                    "{}'s job fires. Nothing checks whether another copy is already doing it.",
                    self.name
                ));
                self.belief = Some(Belief {
                    token: FencingToken(0),
                    expires_local_us: u64::MAX,
                });
                self.start_step(ctx, 1);
            }
            Coordination::UniqueInsert => {
                ctx.note(format!(
                    "{} claims the job by inserting its key; the primary key lets only one insert win.",
                    self.name
                ));
                self.phase = Phase::Acquiring;
                ctx.send(
                    self.plan.store,
                    LeaseMsg::InsertJobRow {
                        key: self.plan.job_key.clone(),
                    },
                );
            }
            Coordination::ConditionalClaim => {
                ctx.note(format!(
                    "{} claims the job with a conditional update: pending → running.",
                    self.name
                ));
                self.phase = Phase::Acquiring;
                ctx.send(
                    self.plan.store,
                    LeaseMsg::ClaimJob {
                        key: self.plan.job_key.clone(),
                    },
                );
            }
            Coordination::Partition { owns: true } => {
                ctx.note(format!(
                    "Account work for {} is routed only to {}: no one else will ever see it.",
                    self.plan.job_key, self.name
                ));
                self.belief = Some(Belief {
                    token: FencingToken(0),
                    expires_local_us: u64::MAX,
                });
                self.start_step(ctx, 1);
            }
            Coordination::Partition { owns: false } => {
                ctx.note(format!(
                    "{} is not the consumer for {}; the job never reaches it.",
                    self.name, self.plan.job_key
                ));
                self.phase = Phase::Stopped(StopReason::NotMine);
            }
        }
    }

    fn acquire<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
    {
        self.phase = Phase::Acquiring;
        self.acquire_attempts += 1;
        ctx.note(if self.acquire_attempts == 1 {
            format!(
                "{}'s job fires. It asks the lease store for {} before doing anything.",
                self.name, self.plan.lease
            )
        } else {
            format!(
                "{} asks for {} again (attempt {}).",
                self.name, self.plan.lease, self.acquire_attempts
            )
        });
        self.acquire_sent_local_us = ctx.local_now_us;
        ctx.send(
            self.plan.store,
            LeaseMsg::Acquire {
                lease: self.plan.lease.clone(),
                ttl_ms: self.plan.ttl_ms,
            },
        );
    }

    pub fn message<P>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, msg: LeaseMsg)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
        P::Durable: From<WorkerDurable>,
    {
        match msg {
            LeaseMsg::Granted { token, ttl_ms, .. } if from == self.plan.store => {
                self.granted(ctx, token, ttl_ms)
            }
            LeaseMsg::Denied { holder, .. } if from == self.plan.store => self.denied(ctx, holder),
            LeaseMsg::TokenIs { last_token } => {
                let Phase::Checking { step } = self.phase else {
                    return;
                };
                let Some(belief) = self.belief else { return };
                if last_token > belief.token {
                    ctx.note(format!(
                        "{} reads last_token {last_token}, newer than its {}: its application check says stop.",
                        self.name, belief.token
                    ));
                    self.stop(ctx, StopReason::AppCheckCaught);
                } else {
                    ctx.note(format!(
                        "{} reads last_token {last_token}; its own token is {}, so the check in application code passes. The write comes later, as a separate statement.",
                        self.name, belief.token
                    ));
                    self.compute(ctx, step, belief.token);
                }
            }
            LeaseMsg::WriteResult {
                step,
                accepted,
                reason,
                ..
            } => {
                if !matches!(self.phase, Phase::Writing { step: s, .. } if s == step) {
                    return;
                }
                if accepted {
                    self.step_finished(ctx, step);
                } else {
                    // The newer token may be the worker's own: a renewal that changed the token
                    // (the renewal bug) while this step's write still carried the old one.
                    let self_fenced = match (&reason, self.belief) {
                        (
                            Some(super::lease_msg::RejectReason::StaleToken { token: sent, highest }),
                            Some(b),
                        ) if b.token == *highest && sent != highest => Some((*sent, *highest)),
                        _ => None,
                    };
                    let why = reason.map(|r| r.text()).unwrap_or_default();
                    match self.plan.on_reject {
                        OnReject::Abort => {
                            ctx.note(match self_fenced {
                                Some((sent, own)) => format!(
                                    "{}'s write was refused ({why}). The newer token is {}'s own: its renewal came back with {own} while this step still carried {sent}. It has fenced itself out, and since a refusal looks the same as a real takeover, it aborts.",
                                    self.name, self.name
                                ),
                                None => format!(
                                    "{}'s write was refused ({why}). That is proof another worker owns the lease now: {} aborts — no retry, no compensation.",
                                    self.name, self.name
                                ),
                            });
                            self.stop(ctx, StopReason::Rejected);
                        }
                        OnReject::ReacquireAndContinue => {
                            ctx.note(format!(
                                "{}'s write was refused ({why}) — and it treats that as a transient error: it will get the lease back and carry on from step {step}.",
                                self.name
                            ));
                            self.belief = None;
                            self.next_step = step;
                            self.resuming = true;
                            ctx.cancel_timer(LeaseTimer::Heartbeat);
                            self.back_off(ctx);
                        }
                    }
                }
            }
            LeaseMsg::Progress { steps_done } if self.phase == Phase::ReadingProgress => {
                if steps_done >= self.plan.steps {
                    ctx.note(format!(
                        "The job is already complete ({steps_done} steps recorded): {} has nothing to do.",
                        self.name
                    ));
                    self.step_finished(ctx, self.plan.steps);
                } else {
                    if steps_done > 0 {
                        ctx.note(format!(
                            "{steps_done} step(s) are already recorded: {} takes over the job at step {}.",
                            self.name,
                            steps_done + 1
                        ));
                    }
                    self.start_step(ctx, steps_done + 1);
                }
            }
            LeaseMsg::PayResult { step, applied } => {
                if matches!(self.phase, Phase::Writing { step: s, .. } if s == step) {
                    if !applied {
                        ctx.note(format!(
                            "The rail answers that step {step} was a replay; for {} the step is done either way.",
                            self.name
                        ));
                    }
                    self.step_finished(ctx, step);
                }
            }
            LeaseMsg::RowsChanged { rows } if self.phase == Phase::Acquiring => {
                if rows == 1 {
                    ctx.note(format!("{} got one row: the job is {}'s.", self.name, self.name));
                    self.belief = Some(Belief {
                        token: FencingToken(0),
                        expires_local_us: u64::MAX,
                    });
                    self.start_step(ctx, 1);
                } else {
                    ctx.note(format!(
                        "{} got zero rows: someone else already owns this job, so it does nothing.",
                        self.name
                    ));
                    self.phase = Phase::GaveUp;
                }
            }
            LeaseMsg::Released { deleted, .. } if self.phase == Phase::Releasing => {
                ctx.note(if deleted {
                    format!("{} has let go of {}.", self.name, self.plan.lease)
                } else {
                    format!(
                        "{}'s release removed nothing: {} is no longer its lease.",
                        self.name, self.plan.lease
                    )
                });
                self.phase = match self.stop_reason.clone() {
                    Some(reason) if !self.finished => Phase::Stopped(reason),
                    _ => Phase::Done,
                };
            }
            _ => {}
        }
    }

    fn granted<P>(&mut self, ctx: &mut Ctx<'_, P>, token: FencingToken, ttl_ms: u64)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
        P::Durable: From<WorkerDurable>,
    {
        let expires_local_us = self.acquire_sent_local_us + ttl_ms * MS_US;
        match (self.belief, &self.phase) {
            (Some(old), _) => {
                // A renewal. With the renewal bug the token changes under the worker's feet.
                self.belief = Some(Belief {
                    token,
                    expires_local_us,
                });
                if old.token != token {
                    ctx.note(format!(
                        "{}'s renewal came back with token {token} instead of {}.",
                        self.name, old.token
                    ));
                } else {
                    ctx.note(format!(
                        "{}'s renewal went through: token {token} again, and by its own clock another {}.",
                        self.name,
                        seconds(ttl_ms)
                    ));
                }
                if self.plan.touch_on_heartbeat {
                    ctx.send(self.plan.sink_node, LeaseMsg::Touch { token });
                }
                ctx.set_timer(LeaseTimer::Heartbeat, self.plan.heartbeat_ms * MS_US);
            }
            (None, Phase::Acquiring) => {
                self.belief = Some(Belief {
                    token,
                    expires_local_us,
                });
                ctx.note(format!(
                    "{} holds the lease with token {token}. By its own clock it has {} — {}.",
                    self.name,
                    seconds(ttl_ms),
                    if self.plan.heartbeat_ms == 0 {
                        "it will not renew".to_string()
                    } else {
                        format!("it will renew every {}", seconds(self.plan.heartbeat_ms))
                    }
                ));
                if self.plan.heartbeat_ms > 0 {
                    ctx.set_timer(LeaseTimer::Heartbeat, self.plan.heartbeat_ms * MS_US);
                }
                let continuing = std::mem::take(&mut self.resuming);
                if self.plan.check_progress && !continuing {
                    self.phase = Phase::ReadingProgress;
                    ctx.send(self.plan.sink_node, LeaseMsg::ReadProgress);
                } else {
                    if continuing {
                        ctx.note(format!(
                            "{} has the lease again (token {token}) and resumes its own job at step {} — without asking what happened meanwhile.",
                            self.name, self.next_step
                        ));
                    }
                    let step = self.next_step;
                    self.start_step(ctx, step);
                }
            }
            _ => {}
        }
    }

    fn denied<P>(&mut self, ctx: &mut Ctx<'_, P>, holder: NodeId)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
        P::Durable: From<WorkerDurable>,
    {
        if self.belief.is_some() && self.plan.on_reject == OnReject::ReacquireAndContinue {
            let step = match self.phase {
                Phase::Checking { step } | Phase::Computing { step, .. } | Phase::Writing { step, .. } => {
                    step
                }
                _ => self.next_step,
            };
            ctx.note(format!(
                "{}'s renewal came back empty — and it treats that as a hiccup: it will get the lease back and carry on from step {step}.",
                self.name
            ));
            if let Phase::Computing { step, .. } = self.phase {
                ctx.cancel_timer(LeaseTimer::StepDone { step });
            }
            self.belief = None;
            self.next_step = step;
            self.resuming = true;
            ctx.cancel_timer(LeaseTimer::Heartbeat);
            self.back_off(ctx);
        } else if self.belief.is_some() {
            ctx.note(format!(
                "{}'s renewal came back empty: the lease belongs to someone else (node {}). It stops immediately.",
                self.name, holder.0
            ));
            self.stop(ctx, StopReason::LostLease);
        } else if self.phase == Phase::Acquiring {
            if self.plan.retry_ms == 0 {
                ctx.note(format!(
                    "{} backs off: another copy is already running the job.",
                    self.name
                ));
                self.phase = Phase::GaveUp;
            } else {
                let wait_ms = self.back_off(ctx) / MS_US;
                ctx.note(if self.plan.retry_jitter_ms == 0 {
                    format!(
                        "{} backs off and will ask again in {}.",
                        self.name,
                        seconds(wait_ms)
                    )
                } else {
                    format!(
                        "{} backs off and will ask again in {}: {} plus {} of random jitter.",
                        self.name,
                        seconds(wait_ms),
                        seconds(self.plan.retry_ms),
                        seconds(wait_ms - self.plan.retry_ms)
                    )
                });
            }
        }
    }

    /// Schedules the next attempt; returns the wait (µs by its own clock).
    fn back_off<P>(&mut self, ctx: &mut Ctx<'_, P>) -> u64
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
    {
        self.phase = Phase::BackingOff;
        let jitter_us = between_us(ctx.rng, 0, self.plan.retry_jitter_ms * MS_US);
        let wait_us = self.plan.retry_ms * MS_US + jitter_us;
        ctx.set_timer(LeaseTimer::Retry, wait_us);
        wait_us
    }

    fn start_step<P>(&mut self, ctx: &mut Ctx<'_, P>, step: u32)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
        P::Durable: From<WorkerDurable>,
    {
        let Some(belief) = self.belief else { return };
        if self.plan.check_clock_before_step && ctx.local_now_us >= belief.expires_local_us {
            ctx.note(format!(
                "By {}'s own clock its lease has run out, so it stops before step {step}.",
                self.name
            ));
            self.stop(ctx, StopReason::ExpiredByOwnClock);
            return;
        }
        if self.plan.check_clock_before_step && self.plan.coordination == Coordination::Lease {
            ctx.note(format!(
                "By {}'s own clock {} of its lease remain, so it starts step {step}.",
                self.name,
                seconds((belief.expires_local_us - ctx.local_now_us) / MS_US)
            ));
        } else {
            ctx.note(format!("{} starts step {step}.", self.name));
        }
        if self.plan.fencing == Fencing::AppCheck && self.plan.coordination == Coordination::Lease {
            self.phase = Phase::Checking { step };
            ctx.send(self.plan.sink_node, LeaseMsg::ReadToken);
        } else {
            self.compute(ctx, step, belief.token);
        }
    }

    fn compute<P>(&mut self, ctx: &mut Ctx<'_, P>, step: u32, token: FencingToken)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
    {
        self.phase = Phase::Computing { step, token };
        ctx.set_timer(LeaseTimer::StepDone { step }, self.plan.step_ms * MS_US);
    }

    fn write<P>(&mut self, ctx: &mut Ctx<'_, P>, step: u32, token: FencingToken)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
    {
        self.phase = Phase::Writing { step, token };
        let amount = self.plan.amount_per_step;
        let msg = match self.plan.sink {
            Sink::Rail { idempotency_key } => LeaseMsg::Pay {
                step,
                amount,
                idempotency_key: idempotency_key.then(|| format!("{}#{step}", self.plan.job_key)),
            },
            Sink::Resource => {
                let check = match self.plan.fencing {
                    Fencing::WritePredicate => WriteCheck::TokenPredicate,
                    Fencing::FirstWriteOnly if step == 1 => WriteCheck::TokenPredicate,
                    _ => WriteCheck::Unfenced,
                };
                LeaseMsg::Write {
                    step,
                    amount,
                    token,
                    check,
                }
            }
        };
        let what = match &msg {
            LeaseMsg::Pay {
                idempotency_key: Some(key),
                ..
            } => format!("tells the rail to pay ₹{amount}, with idempotency key {key}"),
            LeaseMsg::Pay { .. } => {
                format!("tells the rail to pay ₹{amount}; the instruction carries no key and no token")
            }
            LeaseMsg::Write {
                check: WriteCheck::TokenPredicate,
                ..
            } => format!("sends the debit; token {token} is part of the write's WHERE clause"),
            _ if token.0 == 0 => "sends the debit".to_string(),
            _ => format!(
                "sends the debit carrying token {token}, but the write does not ask the ledger to check it"
            ),
        };
        ctx.note(format!("{} has done step {step}'s work and {what}.", self.name));
        ctx.send(self.plan.sink_node, msg);
    }

    fn step_finished<P>(&mut self, ctx: &mut Ctx<'_, P>, step: u32)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
        P::Durable: From<WorkerDurable>,
    {
        if step < self.plan.steps {
            self.start_step(ctx, step + 1);
            return;
        }
        self.finished = true;
        ctx.persist(self.durable().into());
        ctx.cancel_timer(LeaseTimer::Heartbeat);
        self.belief = None;
        ctx.note(format!(
            "{} has finished all {} step(s) of the job.",
            self.name, self.plan.steps
        ));
        match (self.plan.coordination, self.plan.release) {
            (Coordination::Lease, Some(mode)) => {
                self.phase = Phase::Releasing;
                ctx.send(
                    self.plan.store,
                    LeaseMsg::Release {
                        lease: self.plan.lease.clone(),
                        mode,
                    },
                );
            }
            _ => self.phase = Phase::Done,
        }
    }

    fn stop<P>(&mut self, ctx: &mut Ctx<'_, P>, reason: StopReason)
    where
        P: Participant<Msg = LeaseMsg, Timer = LeaseTimer>,
    {
        self.belief = None;
        ctx.cancel_timer(LeaseTimer::Heartbeat);
        if let Phase::Computing { step, .. } = self.phase {
            ctx.cancel_timer(LeaseTimer::StepDone { step });
        }
        let finally_release = self.plan.release_in_finally && reason != StopReason::LostLease;
        self.stop_reason = Some(reason.clone());
        match (self.plan.coordination, self.plan.release, finally_release) {
            (Coordination::Lease, Some(mode), true) => {
                ctx.note(format!(
                    "{}'s finally block releases the lease on the way out.",
                    self.name
                ));
                self.phase = Phase::Releasing;
                ctx.send(
                    self.plan.store,
                    LeaseMsg::Release {
                        lease: self.plan.lease.clone(),
                        mode,
                    },
                );
            }
            _ => self.phase = Phase::Stopped(reason),
        }
    }

    pub fn summary(&self, local_now_us: u64) -> Vec<String> {
        let phase = match &self.phase {
            Phase::Idle => "waiting for the job".to_string(),
            Phase::Acquiring => "asking for the lease".to_string(),
            Phase::BackingOff => "backing off".to_string(),
            Phase::ReadingProgress => "checking the job's progress".to_string(),
            Phase::Checking { step } => format!("step {step}: checking token"),
            Phase::Computing { step, .. } => format!("step {step}: working"),
            Phase::Writing { step, .. } => format!("step {step}: writing"),
            Phase::Releasing => "releasing".to_string(),
            Phase::Done => "done".to_string(),
            Phase::Stopped(r) => format!("stopped: {}", stop_text(r)),
            Phase::GaveUp => "backed off".to_string(),
        };
        let mut lines = vec![phase];
        if let Some(b) = self.belief {
            if self.plan.coordination == Coordination::Lease {
                let left = if b.expires_local_us > local_now_us {
                    seconds((b.expires_local_us - local_now_us) / MS_US)
                } else {
                    "0 s".to_string()
                };
                lines.push(format!("holds #{} · {left} left", b.token));
            }
        }
        lines
    }
}

pub fn stop_text(r: &StopReason) -> &'static str {
    match r {
        StopReason::LostLease => "lease lost",
        StopReason::ExpiredByOwnClock => "expired by own clock",
        StopReason::Rejected => "write rejected",
        StopReason::AppCheckCaught => "app check caught it",
        StopReason::NotMine => "not my partition",
    }
}
