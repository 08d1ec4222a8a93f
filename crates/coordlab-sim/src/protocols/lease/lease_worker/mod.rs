//! A worker that coordinates a multi-step job — usually with a lease, sometimes with one of
//! the alternatives (a unique insert, a conditional claim, partitioning) or with nothing.
//!
//! With a lease it acquires, renews on a heartbeat, and writes each step carrying the token
//! it was handed. A renewal that comes back empty means the lease is lost: it stops at once.
//! It judges its own lease by its own clock. Its mistakes are configurable, one flag each:
//! no fencing, checking the token in application code, fencing only the first write, retrying
//! after a rejection, deleting the lease without checking the owner.
//!
//! - `mod.rs` (here): the worker's state, what it survives a crash with, its timers, and the
//!   dispatch of what arrives.
//! - [`plan`]: what a scenario tells a worker to do ([`WorkerPlan`]) and where its peers are.
//! - `lease`: getting, keeping and giving up the right to run the job (acquire, renew, claim,
//!   back off, stop, release).
//! - `steps`: the job itself, step by step: progress, token checks, writes and their results.

mod lease;
pub mod plan;
mod steps;

pub use plan::{Coordination, Fencing, OnReject, Sink, WorkerConfig, WorkerPlan};

use super::lease_msg::LeaseMsg;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::kernel::view::{Summary, Tone};
use crate::protocols::card;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    LostLease,
    ExpiredByOwnClock,
    /// Too little of the lease left, by its own clock, to finish a step with its margin.
    MarginReached,
    Rejected,
    AppCheckCaught,
    NotMine,
    /// The run key was already committed: this run happened, and this worker's transaction
    /// rolled back.
    AlreadyRun,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Acquiring,
    BackingOff,
    /// Stamping the ledger row with a fresh token before reading progress.
    Stamping,
    ReadingProgress,
    Checking {
        step: u32,
    },
    Computing {
        step: u32,
        token: FencingToken,
    },
    Writing {
        step: u32,
        token: FencingToken,
    },
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

/// Survives a crash: whether the job is known to be finished. (Its plan is its
/// configuration, kept by the engine.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerDurable {
    pub finished: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseTimer {
    Start,
    Retry,
    Heartbeat,
    StepDone { step: u32 },
}

impl Label for LeaseTimer {
    fn label(&self) -> String {
        match self {
            LeaseTimer::Start => "the job fires".to_string(),
            LeaseTimer::Retry => "retries the lease".to_string(),
            LeaseTimer::Heartbeat => "heartbeat: time to renew".to_string(),
            LeaseTimer::StepDone { step } => format!("finishes the work of step {step}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseWorker {
    pub plan: WorkerPlan,
    /// The lease store or job table it asks; `None` when it asks nobody.
    pub authority: Option<NodeId>,
    /// Where its writes go.
    pub sink_node: NodeId,
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
    pub fn recover(config: &WorkerConfig, d: &WorkerDurable) -> LeaseWorker {
        LeaseWorker {
            plan: config.plan.clone(),
            authority: config.authority,
            sink_node: config.sink_node,
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
                Phase::Stamping
                    | Phase::ReadingProgress
                    | Phase::Checking { .. }
                    | Phase::Computing { .. }
                    | Phase::Writing { .. }
            )
    }

    pub fn start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.finished {
            ctx.note(format!("{} is up again; its job is already done.", ctx.me()));
            return;
        }
        ctx.note(format!(
            "{} is up; its copy of the job is scheduled to fire shortly.",
            ctx.me()
        ));
        let (lo, hi) = self.plan.start_after_ms;
        let delay_us = between_us(ctx.rng, lo * MS_US, hi * MS_US);
        ctx.set_timer(LeaseTimer::Start, delay_us);
    }

    pub fn timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: LeaseTimer) {
        match (timer, self.phase.clone()) {
            (LeaseTimer::Start, Phase::Idle) => self.coordinate(ctx),
            (LeaseTimer::Retry, Phase::BackingOff) => self.acquire(ctx),
            (LeaseTimer::Heartbeat, _) if self.belief.is_some() && self.plan.heartbeat_ms > 0 => {
                self.renew(ctx)
            }
            (LeaseTimer::StepDone { step }, Phase::Computing { step: s, token }) if s == step => {
                self.write(ctx, step, token)
            }
            _ => {}
        }
    }

    pub fn message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let from_authority = Some(from) == self.authority;
        match msg {
            LeaseMsg::Granted { token, ttl_ms, .. } if from_authority => self.granted(ctx, token, ttl_ms),
            LeaseMsg::Denied { holder, .. } if from_authority => self.denied(ctx, holder),
            LeaseMsg::TokenIs { last_token } if self.phase == Phase::Stamping => {
                self.stamp_read(ctx, last_token)
            }
            LeaseMsg::TokenIs { last_token } => self.token_read(ctx, last_token),
            LeaseMsg::WriteResult {
                step,
                accepted,
                reason,
                ..
            } => self.write_result(ctx, step, accepted, reason),
            LeaseMsg::Progress { steps_done } if self.phase == Phase::ReadingProgress => {
                self.progress(ctx, steps_done)
            }
            LeaseMsg::PayResult { step, applied } => self.pay_result(ctx, step, applied),
            LeaseMsg::RowsChanged { rows } if self.phase == Phase::Acquiring => self.claimed(ctx, rows),
            LeaseMsg::Released { deleted, .. } if self.phase == Phase::Releasing => {
                self.released(ctx, deleted)
            }
            _ => {}
        }
    }

    /// What it is doing, in a few words (the state column of the workers table).
    pub fn phase_text(&self) -> String {
        match &self.phase {
            Phase::Idle => "waiting for the job".to_string(),
            Phase::Acquiring => "asking for the lease".to_string(),
            Phase::BackingOff => "backing off".to_string(),
            Phase::Stamping => "stamping the row with its token".to_string(),
            Phase::ReadingProgress => "checking the job's progress".to_string(),
            Phase::Checking { step } => format!("step {step}: checking token"),
            Phase::Computing { step, .. } => format!("step {step}: working"),
            Phase::Writing { step, .. } => format!("step {step}: writing"),
            Phase::Releasing => "releasing".to_string(),
            Phase::Done => "done".to_string(),
            Phase::Stopped(r) => format!("stopped: {}", stop_text(r)),
            Phase::GaveUp => "backed off".to_string(),
        }
    }

    /// The card at the worker's clock reading `local_now_us`.
    pub fn summary_at(&self, local_now_us: u64) -> Summary {
        let leased = self.plan.coordination == Coordination::Lease;
        let mut s = match &self.phase {
            Phase::Idle => card::idle(),
            Phase::Acquiring => card::asking(match self.plan.coordination {
                Coordination::UniqueInsert => "inserting the job's key",
                Coordination::ConditionalClaim => "claiming the job row",
                _ => "for the lease",
            }),
            Phase::BackingOff if self.resuming => {
                card::backing_off().detail(format!("to resume at step {}", self.next_step))
            }
            Phase::BackingOff => card::backing_off().detail("the lease is held"),
            Phase::Stamping => card::holder("stamping the row"),
            Phase::ReadingProgress => card::holder("checking progress"),
            Phase::Checking { step } => card::holder(card::step(*step, "checking token")),
            Phase::Computing { step, .. } => card::holder(card::step(*step, "working")),
            Phase::Writing { step, .. } => card::holder(card::step(*step, "writing")),
            Phase::Releasing => card::releasing(),
            Phase::Done => card::done(),
            Phase::Stopped(StopReason::NotMine) => {
                Summary::new("not mine", Tone::Quiet).detail("the job goes elsewhere")
            }
            Phase::Stopped(StopReason::AlreadyRun) => {
                Summary::new("skipped", Tone::Done).detail("run already done")
            }
            Phase::Stopped(r) => card::stopped(stop_text(r)),
            Phase::GaveUp => Summary::new("backed off", Tone::Done).detail(if leased {
                "another copy holds the lease"
            } else {
                "another copy has the job"
            }),
        };
        if self.believes_it_holds() && !leased {
            // No lease to hold: the job table or the routing made the job its own, or (with no
            // coordination at all) nothing stops it.
            s.word = "working".to_string();
            if self.plan.coordination == Coordination::None {
                s.tone = Tone::Quiet;
            }
        }
        if let (Some(b), true) = (self.belief, leased) {
            s = s
                .badge("token", b.token)
                .minor(if b.expires_local_us > local_now_us {
                    format!("{} by own clock", card::left(b.expires_local_us - local_now_us))
                } else {
                    "lease over by own clock".to_string()
                });
        }
        if self.acquire_attempts > 1 && matches!(self.phase, Phase::Acquiring | Phase::BackingOff) {
            s = s.minor(format!("attempt {}", self.acquire_attempts));
        }
        s
    }
}

pub fn stop_text(r: &StopReason) -> &'static str {
    match r {
        StopReason::LostLease => "lease lost",
        StopReason::ExpiredByOwnClock => "expired by own clock",
        StopReason::MarginReached => "safety margin reached",
        StopReason::Rejected => "write rejected",
        StopReason::AppCheckCaught => "app check caught it",
        StopReason::NotMine => "not my partition",
        StopReason::AlreadyRun => "run already done",
    }
}

impl Participant for LeaseWorker {
    type Msg = LeaseMsg;
    type Timer = LeaseTimer;
    type Durable = WorkerDurable;
    type Config = WorkerConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.start(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        self.message(ctx, from, msg);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: LeaseTimer) {
        self.timer(ctx, timer);
    }

    fn recover(config: &WorkerConfig, _id: NodeId, durable: &WorkerDurable) -> Self {
        LeaseWorker::recover(config, durable)
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        self.summary_at(view.local_now_us)
    }

    fn durable_summary(_config: &WorkerConfig, durable: &WorkerDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down_with_job(durable.finished)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{narration, sent, timers_set, Harness};
    use crate::protocols::lease::lease_msg::{ReleaseMode, WriteCheck};

    const STORE: NodeId = NodeId(0);
    const LEDGER: NodeId = NodeId(2);

    fn worker(plan: WorkerPlan, authority: Option<NodeId>) -> Harness<LeaseWorker> {
        let config = WorkerConfig {
            plan,
            authority,
            sink_node: LEDGER,
        };
        let w = LeaseWorker::recover(&config, &WorkerDurable { finished: false });
        Harness::new(NodeId(1), w, &["store", "w", "ledger"])
    }

    fn msgs(effects: &[crate::kernel::participant::Effect<LeaseWorker>]) -> Vec<(NodeId, LeaseMsg)> {
        sent::<_, LeaseMsg>(effects)
    }

    #[test]
    fn a_leased_worker_asks_first_reads_progress_then_writes_with_its_token() {
        let mut w = worker(WorkerPlan::leased("l"), Some(STORE));
        assert_eq!(
            msgs(&w.fire(LeaseTimer::Start)),
            vec![(
                STORE,
                LeaseMsg::Acquire {
                    lease: "l".into(),
                    ttl_ms: 30_000
                }
            )]
        );
        let fx = w.deliver(
            STORE,
            LeaseMsg::Granted {
                lease: "l".into(),
                token: FencingToken(7),
                ttl_ms: 30_000,
            },
        );
        assert_eq!(msgs(&fx), vec![(LEDGER, LeaseMsg::ReadProgress)]);
        assert_eq!(timers_set(&fx), vec![(LeaseTimer::Heartbeat, 10_000 * MS_US)]);
        let fx = w.deliver(LEDGER, LeaseMsg::Progress { steps_done: 3 });
        assert_eq!(
            timers_set(&fx),
            vec![(LeaseTimer::StepDone { step: 4 }, 4_000 * MS_US)]
        );
        assert!(w.node.believes_it_holds());
        assert_eq!(
            msgs(&w.fire(LeaseTimer::StepDone { step: 4 })),
            vec![(
                LEDGER,
                LeaseMsg::Write {
                    step: 4,
                    amount: 10,
                    token: FencingToken(7),
                    check: WriteCheck::TokenPredicate
                }
            )]
        );
        let fx = w.deliver(
            LEDGER,
            LeaseMsg::WriteResult {
                step: 4,
                token: FencingToken(7),
                accepted: true,
                reason: None,
            },
        );
        assert_eq!(
            msgs(&fx),
            vec![(
                STORE,
                LeaseMsg::Release {
                    lease: "l".into(),
                    mode: ReleaseMode::CompareAndDelete
                }
            )]
        );
        assert!(w.node.finished && !w.node.believes_it_holds());
    }

    #[test]
    fn a_denied_worker_without_retries_backs_off_for_good() {
        let plan = WorkerPlan {
            retry_ms: 0,
            ..WorkerPlan::leased("l")
        };
        let mut w = worker(plan, Some(STORE));
        w.fire(LeaseTimer::Start);
        let fx = w.deliver(
            STORE,
            LeaseMsg::Denied {
                lease: "l".into(),
                holder: NodeId(3),
            },
        );
        assert!(msgs(&fx).is_empty() && timers_set(&fx).is_empty());
        assert_eq!(w.node.phase, Phase::GaveUp);
    }

    #[test]
    fn a_worker_outside_the_partition_asks_nobody_and_does_nothing() {
        let plan = WorkerPlan::without_lease(Coordination::Partition { owns: false }, "job");
        let mut w = worker(plan, None);
        let fx = w.fire(LeaseTimer::Start);
        assert!(msgs(&fx).is_empty());
        assert_eq!(w.node.phase, Phase::Stopped(StopReason::NotMine));
        assert!(narration(&fx).contains("not the consumer for job"));
    }
}
