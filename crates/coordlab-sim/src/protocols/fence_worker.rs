//! A worker for the `services` bundle's lease stories: it gets a lease from a
//! [`PlacedLease`] table (atomically, or by reading a replica and then claiming on the
//! primary), reads how far the job got from the ledger, and writes each step to the
//! [`super::fenced_resource::FencedResource`] with a fence in the write's predicate. What it
//! uses as the fence is its plan's [`FenceFrom`]: the token the table handed it (correct), or
//! one of the mistakes — its own wall clock, a random id, a counter of its own, or the
//! token re-read from the table before each write.
//!
//! It does not renew (its 16 s job fits in the 30 s lease) and does not release: the lease
//! lapses. A store that does not answer within its timeout counts as an attempt; after its
//! last attempt the worker gives up and the job is not done.

use super::card;
use super::lease_msg::{seconds, LeaseMsg, WriteCheck};
use super::placed_lease::{ClientClock, PlacedMsg, TokenSource};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::message::{Inbox, Message};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::kernel::view::Summary;

/// How the worker gets the lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireVia {
    /// The one atomic statement on its store.
    Atomic,
    /// `SELECT` on a read replica; if the row looks free, an unconditional `UPDATE` on the
    /// primary (its store).
    ReadReplicaThenClaim { replica: NodeId },
}

/// What the worker carries as the fence in every write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceFrom {
    /// The token the lease table returned with the grant.
    Granted,
    /// Its own wall clock at the grant, in ms.
    WallClock,
    /// A random id it drew for the attempt (a UUID in practice).
    RandomId(u64),
    /// How many leases this process has taken: every process counts from 1.
    ProcessCounter,
    /// The table's current token, re-read before each write.
    Reread,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenceWorkerPlan {
    pub ttl_ms: u64,
    pub start_after_ms: (u64, u64),
    pub retry_ms: u64,
    pub max_attempts: u32,
    /// How long it waits for the store's answer before counting the attempt as failed.
    pub answer_timeout_ms: u64,
    pub steps: u32,
    pub step_ms: u64,
    pub amount_per_step: i64,
    pub fence: FenceFrom,
}

impl FenceWorkerPlan {
    /// A 30 s lease, a job that fires in the first 100 ms, polls every 5 s while the lease is
    /// held elsewhere, and is four steps of 4 s debiting ₹10 each, fenced with the granted token.
    pub fn standard() -> FenceWorkerPlan {
        FenceWorkerPlan {
            ttl_ms: 30_000,
            start_after_ms: (0, 100),
            retry_ms: 5_000,
            max_attempts: 12,
            answer_timeout_ms: 2_000,
            steps: 4,
            step_ms: 4_000,
            amount_per_step: 10,
            fence: FenceFrom::Granted,
        }
    }

    pub fn job_total(&self) -> i64 {
        self.amount_per_step * i64::from(self.steps)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenceWorkerConfig {
    pub plan: FenceWorkerPlan,
    /// The table it acquires from (the primary, or its own).
    pub store: NodeId,
    pub via: AcquireVia,
    pub ledger: NodeId,
    /// Where its client reconnects if its store crashes (the store that takes over).
    pub failover_to: Option<NodeId>,
    /// The store's kind, which names its acquire command on the wire.
    pub source: TokenSource,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FencePhase {
    Idle,
    Reading,
    Acquiring,
    /// ZooKeeper: its node is queued behind the holder's; it watches the node ahead.
    Watching,
    BackingOff,
    ReadingProgress,
    Working {
        step: u32,
    },
    Rereading {
        step: u32,
    },
    Writing {
        step: u32,
    },
    Done,
    Refused,
    GaveUp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenceTimer {
    Start,
    Retry,
    NoAnswer { attempt: u32 },
    StepDone { step: u32 },
}

impl Label for FenceTimer {
    fn label(&self) -> String {
        match self {
            FenceTimer::Start => "the job fires".into(),
            FenceTimer::Retry => "retries the lease".into(),
            FenceTimer::NoAnswer { attempt } => format!("attempt {attempt}: no answer yet"),
            FenceTimer::StepDone { step } => format!("finishes the work of step {step}"),
        }
    }
}

/// What it hears: the lease table's answers, or the ledger's.
pub enum FenceWorkerMsg {
    Store(PlacedMsg),
    Ledger(LeaseMsg),
}

impl Inbox for FenceWorkerMsg {
    fn accept(msg: Box<dyn Message>) -> Option<Self> {
        match msg.downcast::<PlacedMsg>() {
            Ok(m) => Some(FenceWorkerMsg::Store(m)),
            Err(msg) => msg.downcast::<LeaseMsg>().ok().map(FenceWorkerMsg::Ledger),
        }
    }
}

/// Survives a crash: whether the job is known done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenceWorkerDurable {
    pub finished: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenceWorker {
    pub config: FenceWorkerConfig,
    pub phase: FencePhase,
    /// The token the table granted, while it believes it holds the lease.
    pub granted: Option<FencingToken>,
    /// What it carries in its writes.
    pub fence: FencingToken,
    pub attempts: u32,
    /// Leases this process has taken since it started (the per-process counter).
    pub acquisitions: u64,
    pub finished: bool,
    /// The holder's record (token) it last saw refused with, and its own clock when it first
    /// saw it: client-go's observed time, for a Kubernetes Lease.
    pub seen: Option<(FencingToken, u64)>,
}

impl FenceWorker {
    pub fn believes_it_holds(&self) -> bool {
        self.granted.is_some()
            && matches!(
                self.phase,
                FencePhase::ReadingProgress
                    | FencePhase::Working { .. }
                    | FencePhase::Rereading { .. }
                    | FencePhase::Writing { .. }
            )
    }

    fn plan(&self) -> &FenceWorkerPlan {
        &self.config.plan
    }

    fn ask(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.attempts += 1;
        let me = ctx.me();
        match self.config.via {
            AcquireVia::Atomic => {
                self.phase = FencePhase::Acquiring;
                let clock = ClientClock {
                    now_us: ctx.local_now_us,
                    seen: self.seen,
                };
                ctx.send(
                    self.config.store,
                    PlacedMsg::Acquire {
                        ttl_ms: self.plan().ttl_ms,
                        source: self.config.source,
                        clock,
                    },
                );
            }
            AcquireVia::ReadReplicaThenClaim { replica } => {
                self.phase = FencePhase::Reading;
                if self.attempts == 1 {
                    ctx.note(format!(
                        "{me}'s job fires. Its connection pool sends every SELECT to the read replica, so it first reads the lease row there, and claims it on the primary only if it looks free."
                    ));
                }
                ctx.send(replica, PlacedMsg::Read);
            }
        }
        let attempt = self.attempts;
        ctx.set_timer(
            FenceTimer::NoAnswer { attempt },
            self.plan().answer_timeout_ms * MS_US,
        );
    }

    fn back_off(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = FencePhase::BackingOff;
        ctx.set_timer(FenceTimer::Retry, self.plan().retry_ms * MS_US);
    }

    fn granted(&mut self, ctx: &mut Ctx<'_, Self>, token: FencingToken, ttl_ms: u64) {
        self.acquisitions += 1;
        self.granted = Some(token);
        let me = ctx.me();
        let (fence, how) = match self.plan().fence {
            FenceFrom::Granted => (token, format!("It will carry token {token} in every write.")),
            FenceFrom::Reread => (
                token,
                format!("It keeps no copy of token {token}: before each write it will read the lease row again and use whatever token is there."),
            ),
            FenceFrom::WallClock => {
                let ms = ctx.local_now_us / MS_US;
                (
                    FencingToken(ms),
                    format!("As its fence it takes the time of the grant by its own clock: {ms} ms. The table's token {token} goes unused."),
                )
            }
            FenceFrom::RandomId(id) => (
                FencingToken(id),
                format!("As its fence it uses the random id it drew for this attempt, {id:#010x} ({id}). The table's token {token} goes unused."),
            ),
            FenceFrom::ProcessCounter => (
                FencingToken(self.acquisitions),
                format!(
                    "As its fence it uses its own counter of leases taken: this is its lease number {} since the process started. The table's token {token} goes unused.",
                    self.acquisitions
                ),
            ),
        };
        self.fence = fence;
        ctx.note(format!(
            "{me} holds the lease for {} with token {token}. {how} First it asks the ledger how far the job got.",
            seconds(ttl_ms)
        ));
        self.phase = FencePhase::ReadingProgress;
        ctx.send(self.config.ledger, LeaseMsg::ReadProgress);
    }

    fn work(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.phase = FencePhase::Working { step };
        ctx.set_timer(FenceTimer::StepDone { step }, self.plan().step_ms * MS_US);
    }

    fn write(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.phase = FencePhase::Writing { step };
        ctx.send(
            self.config.ledger,
            LeaseMsg::Write {
                step,
                amount: self.plan().amount_per_step,
                token: self.fence,
                check: WriteCheck::TokenPredicate,
            },
        );
    }

    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = FencePhase::Done;
        self.finished = true;
        self.granted = None;
        ctx.persist(FenceWorkerDurable { finished: true });
    }

    fn on_store(&mut self, ctx: &mut Ctx<'_, Self>, msg: PlacedMsg) {
        let me = ctx.me();
        if matches!(self.phase, FencePhase::Reading | FencePhase::Acquiring) {
            let attempt = self.attempts;
            ctx.cancel_timer(FenceTimer::NoAnswer { attempt });
        }
        match (msg, self.phase.clone()) {
            (PlacedMsg::Granted { token, ttl_ms }, FencePhase::Acquiring) => self.granted(ctx, token, ttl_ms),
            (PlacedMsg::Granted { token, ttl_ms }, FencePhase::Watching) => self.granted(ctx, token, ttl_ms),
            (PlacedMsg::Denied { token, .. }, FencePhase::Acquiring) => {
                if self.seen.is_none_or(|(t, _)| t != token) {
                    self.seen = Some((token, ctx.local_now_us));
                }
                if self.config.source == TokenSource::ZooKeeper {
                    // Its node stays queued; the watch on the node ahead will tell it.
                    self.phase = FencePhase::Watching;
                } else {
                    self.back_off(ctx);
                }
            }
            (PlacedMsg::Row { free: true, .. }, FencePhase::Reading) => {
                ctx.note(format!(
                    "The replica's row looks expired, so {me} concludes the lease is free and claims it on the primary."
                ));
                self.phase = FencePhase::Acquiring;
                ctx.send(
                    self.config.store,
                    PlacedMsg::Claim {
                        ttl_ms: self.plan().ttl_ms,
                    },
                );
            }
            (PlacedMsg::Row { free: false, .. }, FencePhase::Reading) => self.back_off(ctx),
            (PlacedMsg::Row { token, .. }, FencePhase::Rereading { step }) => {
                let was = self.fence;
                self.fence = token;
                ctx.note(if token == was {
                    format!("{me} re-reads the lease row before writing step {step}: token {token}, the one it was granted.")
                } else {
                    format!(
                        "{me} re-reads the lease row before writing step {step} and finds token {token}, not its own {was}: it takes the new holder's number as its own, and so fences itself back in."
                    )
                });
                self.write(ctx, step);
            }
            _ => {}
        }
    }

    fn on_ledger(&mut self, ctx: &mut Ctx<'_, Self>, msg: LeaseMsg) {
        let me = ctx.me();
        match (msg, self.phase.clone()) {
            (LeaseMsg::Progress { steps_done }, FencePhase::ReadingProgress) => {
                if steps_done >= self.plan().steps {
                    ctx.note(format!("The job is already done: {me} has nothing to do."));
                    self.finish(ctx);
                } else {
                    self.work(ctx, steps_done + 1);
                }
            }
            (LeaseMsg::WriteResult { step, accepted, .. }, FencePhase::Writing { step: s }) if s == step => {
                if !accepted {
                    ctx.note(format!(
                        "{me}'s write matched no row: a newer holder has written. {me} stops at once and does not retry."
                    ));
                    self.phase = FencePhase::Refused;
                    self.granted = None;
                } else if step >= self.plan().steps {
                    ctx.note(format!("{me} has written the last step: its job is done."));
                    self.finish(ctx);
                } else {
                    self.work(ctx, step + 1);
                }
            }
            _ => {}
        }
    }

    /// What it is doing and holds, in one line (the workers table).
    pub fn status_text(&self) -> String {
        let phase = match &self.phase {
            FencePhase::Idle => "waiting for the job".to_string(),
            FencePhase::Reading => "reading the replica".into(),
            FencePhase::Acquiring => "asking for the lease".into(),
            FencePhase::Watching => "watching the node ahead".into(),
            FencePhase::BackingOff => "backing off".into(),
            FencePhase::ReadingProgress => "checking the job's progress".into(),
            FencePhase::Working { step } => format!("step {step}: working"),
            FencePhase::Rereading { step } => format!("step {step}: re-reading token"),
            FencePhase::Writing { step } => format!("step {step}: writing"),
            FencePhase::Done => "done".into(),
            FencePhase::Refused => "stopped: write refused".into(),
            FencePhase::GaveUp => "gave up: no lease".into(),
        };
        match (self.granted, self.believes_it_holds()) {
            (Some(t), true) if t == self.fence || self.plan().fence == FenceFrom::Reread => {
                format!("{phase} · holds #{t}")
            }
            (Some(t), true) => format!("{phase} · holds #{t} · fence {}", self.fence),
            _ => phase,
        }
    }

    pub fn summary(&self) -> Summary {
        let mut s = match &self.phase {
            FencePhase::Idle => card::idle(),
            FencePhase::Reading => card::asking("reading the replica"),
            FencePhase::Acquiring => card::asking("for the lease"),
            FencePhase::Watching => card::asking("watching the node ahead"),
            FencePhase::BackingOff => card::backing_off(),
            FencePhase::ReadingProgress => card::holder("checking progress"),
            FencePhase::Working { step } => card::holder(card::step(*step, "working")),
            FencePhase::Rereading { step } => card::holder(card::step(*step, "re-reading token")),
            FencePhase::Writing { step } => card::holder(card::step(*step, "writing")),
            FencePhase::Done => card::done(),
            FencePhase::Refused => card::stopped("write refused"),
            FencePhase::GaveUp => card::gave_up("no lease"),
        };
        if let (Some(t), true) = (self.granted, self.believes_it_holds()) {
            s = s.badge("token", t);
            if self.fence != t {
                // What it writes with is not what it was granted: the mistake under study.
                s = card::fit_badge(s, "fence", &self.fence.to_string());
            }
        }
        if self.attempts > 1
            && matches!(
                self.phase,
                FencePhase::Reading | FencePhase::Acquiring | FencePhase::BackingOff
            )
        {
            s = s.minor(format!("attempt {}", self.attempts));
        }
        s
    }
}

impl Participant for FenceWorker {
    type Msg = FenceWorkerMsg;
    type Timer = FenceTimer;
    type Durable = FenceWorkerDurable;
    type Config = FenceWorkerConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.finished {
            return;
        }
        let (lo, hi) = self.plan().start_after_ms;
        let delay = between_us(ctx.rng, lo * MS_US, hi * MS_US);
        ctx.set_timer(FenceTimer::Start, delay);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, _from: NodeId, msg: FenceWorkerMsg) {
        match msg {
            FenceWorkerMsg::Store(m) => self.on_store(ctx, m),
            FenceWorkerMsg::Ledger(m) => self.on_ledger(ctx, m),
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: FenceTimer) {
        match (timer, self.phase.clone()) {
            (FenceTimer::Start, FencePhase::Idle) | (FenceTimer::Retry, FencePhase::BackingOff) => {
                self.ask(ctx)
            }
            (FenceTimer::NoAnswer { attempt }, FencePhase::Reading | FencePhase::Acquiring)
                if attempt == self.attempts =>
            {
                let me = ctx.me();
                let wait = seconds(self.plan().answer_timeout_ms);
                if self.attempts >= self.plan().max_attempts {
                    ctx.note(format!(
                        "No answer from the lease store in {wait}, for the {}th time. {me} gives up: without the lease it must not run the job.",
                        self.attempts
                    ));
                    self.phase = FencePhase::GaveUp;
                } else {
                    ctx.note(format!(
                        "No answer from the lease store in {wait}. Without a lease {me} does not start: it tries again in {}.",
                        seconds(self.plan().retry_ms)
                    ));
                    self.back_off(ctx);
                }
            }
            (FenceTimer::StepDone { step }, FencePhase::Working { step: s }) if s == step => {
                if self.plan().fence == FenceFrom::Reread {
                    self.phase = FencePhase::Rereading { step };
                    ctx.send(self.config.store, PlacedMsg::Read);
                } else {
                    self.write(ctx, step);
                }
            }
            _ => {}
        }
    }

    fn watches(&self, peer: NodeId) -> bool {
        self.config.failover_to.is_some() && peer == self.config.store
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        let Some(next) = self.config.failover_to.filter(|_| peer == self.config.store) else {
            return;
        };
        self.config.store = next;
        ctx.note(format!(
            "{}'s client loses its connection to {} and reconnects to {}.",
            ctx.me(),
            ctx.name(peer),
            ctx.name(next)
        ));
        if matches!(self.phase, FencePhase::Acquiring | FencePhase::Watching) {
            // The request in flight, or the watch, was on the crashed store: ask again.
            self.attempts -= 1;
            self.ask(ctx);
        }
    }

    fn recover(config: &FenceWorkerConfig, _id: NodeId, durable: &FenceWorkerDurable) -> Self {
        FenceWorker {
            config: config.clone(),
            phase: if durable.finished {
                FencePhase::Done
            } else {
                FencePhase::Idle
            },
            granted: None,
            fence: FencingToken(0),
            attempts: 0,
            acquisitions: 0,
            finished: durable.finished,
            seen: None,
        }
    }

    fn durable_summary(
        _config: &FenceWorkerConfig,
        durable: &FenceWorkerDurable,
        _view: &ViewCtx<'_>,
    ) -> Summary {
        card::down_with_job(durable.finished)
    }

    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        FenceWorker::summary(self)
    }
}
