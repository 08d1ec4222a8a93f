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
//!
//! The job itself is the [`JobRunner`]'s; this file is the lease side, [`FenceLock`].

use super::lease_msg::{RejectReason, WriteCheck};
use super::placed_lease::{ClientClock, PlacedMsg, TokenSource};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::presentation::narration::lease::fence_worker::FenceWorkerSaw;
use crate::protocols::job::{
    plans_job, At, JobCtx, JobRunner, JobTimer, LockClient, Phase, Turn, AMOUNT_PER_STEP,
};
use crate::protocols::redis_locks::redis_job::{Job, JobDurable, JobPlan, Next};

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
            amount_per_step: AMOUNT_PER_STEP,
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

/// The worker's configuration as the runner holds it: the job, and how it takes the lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FencePlan {
    pub job: JobPlan,
    pub start_after_ms: (u64, u64),
    pub answer_timeout_ms: u64,
    pub fence: FenceFrom,
    /// The table it first acquires from.
    pub store: NodeId,
    pub via: AcquireVia,
    pub failover_to: Option<NodeId>,
    pub source: TokenSource,
}

plans_job!(FencePlan);

impl From<FenceWorkerConfig> for FencePlan {
    fn from(c: FenceWorkerConfig) -> FencePlan {
        let p = c.plan;
        FencePlan {
            job: JobPlan {
                ttl_ms: p.ttl_ms,
                retry_ms: p.retry_ms,
                max_attempts: p.max_attempts,
                ..JobPlan::of_steps(p.steps, p.step_ms, p.amount_per_step, c.ledger)
            },
            start_after_ms: p.start_after_ms,
            answer_timeout_ms: p.answer_timeout_ms,
            fence: p.fence,
            store: c.store,
            via: c.via,
            failover_to: c.failover_to,
            source: c.source,
        }
    }
}

/// A worker: the job runner with a lease from a placed lease table.
pub type FenceWorker = JobRunner<FenceLock>;

/// The store has not answered this attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoAnswer {
    pub attempt: u32,
}

/// The lease side of a worker: where its table is, and the lease it holds there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenceLock {
    /// The table it acquires from (it moves on a failover).
    pub store: NodeId,
    /// This attempt is reading the replica, before any claim on the primary.
    pub reading: bool,
    /// The token the table granted, while it believes it holds the lease.
    pub granted: Option<FencingToken>,
    /// What it carries in its writes.
    pub fence: FencingToken,
    /// Leases this process has taken since it started (the per-process counter).
    pub acquisitions: u64,
    /// The holder's record (token) it last saw refused with, and its own clock when it first
    /// saw it: client-go's observed time, for a Kubernetes Lease.
    pub seen: Option<(FencingToken, u64)>,
}

type Ctx<'a, 'b> = JobCtx<'a, 'b, FenceLock>;

impl FenceLock {
    fn no_answer(job: &Job) -> JobTimer<NoAnswer> {
        JobTimer::Lock(NoAnswer { attempt: job.attempt })
    }

    /// After `steps` steps: the next one, or the end of the job, narrated as `done`.
    fn after(ctx: Ctx, plan: &FencePlan, steps: u32, done: FenceWorkerSaw<'_>) -> Next {
        if steps < plan.job.steps {
            return Next::Step(steps + 1);
        }
        ctx.note(done);
        Next::Finish
    }

    fn granted(&mut self, ctx: Ctx, plan: &FencePlan, token: FencingToken, ttl_ms: u64) {
        self.acquisitions += 1;
        self.granted = Some(token);
        self.fence = match plan.fence {
            FenceFrom::Granted | FenceFrom::Reread => token,
            FenceFrom::WallClock => FencingToken(ctx.local_now_us / MS_US),
            FenceFrom::RandomId(id) => FencingToken(id),
            FenceFrom::ProcessCounter => FencingToken(self.acquisitions),
        };
        ctx.note(FenceWorkerSaw::Holds {
            me: ctx.me(),
            ttl_ms,
            token,
            from: plan.fence,
            fence: self.fence,
        });
    }
}

impl LockClient for FenceLock {
    type Plan = FencePlan;
    type Timer = NoAnswer;
    type Reply = PlacedMsg;

    fn recover(plan: &FencePlan, _durable: &JobDurable) -> Self {
        FenceLock {
            store: plan.store,
            reading: false,
            granted: None,
            fence: FencingToken(0),
            acquisitions: 0,
            seen: None,
        }
    }

    fn start(ctx: Ctx, plan: &FencePlan, job: &Job) {
        job.start_after(ctx, plan.start_after_ms, JobTimer::JobStart);
    }

    fn request(&mut self, ctx: Ctx, at: At<'_, Self>) {
        let At { plan, job, .. } = at;
        match plan.via {
            AcquireVia::Atomic => {
                self.reading = false;
                let clock = ClientClock {
                    now_us: ctx.local_now_us,
                    seen: self.seen,
                };
                ctx.send(
                    self.store,
                    PlacedMsg::Acquire {
                        ttl_ms: plan.job.ttl_ms,
                        source: plan.source,
                        clock,
                    },
                );
            }
            AcquireVia::ReadReplicaThenClaim { replica } => {
                self.reading = true;
                if job.attempt == 1 {
                    ctx.note(FenceWorkerSaw::ReadsReplicaFirst { me: ctx.me() });
                }
                ctx.send(replica, PlacedMsg::Read);
            }
        }
        ctx.set_timer(Self::no_answer(job), plan.answer_timeout_ms * MS_US);
    }

    fn on_reply(&mut self, ctx: Ctx, at: At<'_, Self>, _from: NodeId, msg: PlacedMsg) -> Turn {
        let At { plan, job, phase } = at;
        let asking = *phase == Phase::Acquiring;
        if asking {
            ctx.cancel_timer(Self::no_answer(job));
        }
        let claiming = asking && !self.reading;
        match msg {
            PlacedMsg::Granted { token, ttl_ms } if claiming || *phase == Phase::Watching => {
                self.granted(ctx, plan, token, ttl_ms);
                Turn::Granted
            }
            PlacedMsg::Denied { token, .. } if claiming => {
                if self.seen.is_none_or(|(t, _)| t != token) {
                    self.seen = Some((token, ctx.local_now_us));
                }
                if plan.source == TokenSource::ZooKeeper {
                    // Its node stays queued; the watch on the node ahead will tell it.
                    Turn::Watch
                } else {
                    Turn::BackOff
                }
            }
            PlacedMsg::Row { free: true, .. } if asking && self.reading => {
                ctx.note(FenceWorkerSaw::ReplicaLooksFree { me: ctx.me() });
                self.reading = false;
                ctx.send(
                    self.store,
                    PlacedMsg::Claim {
                        ttl_ms: plan.job.ttl_ms,
                    },
                );
                Turn::Stay
            }
            PlacedMsg::Row { free: false, .. } if asking && self.reading => Turn::BackOff,
            PlacedMsg::Row { token, .. } => match *phase {
                Phase::Rereading { step } => {
                    // Compared with the token it was granted, not the one it last read:
                    // after taking a newer holder's number once, it is still not its own.
                    let (me, was) = (ctx.me(), self.granted.unwrap_or(self.fence));
                    self.fence = token;
                    ctx.note(if token == was {
                        FenceWorkerSaw::RereadOwnToken { me, step, token }
                    } else {
                        FenceWorkerSaw::RereadNewerToken { me, step, token, was }
                    });
                    Turn::Write(step)
                }
                _ => Turn::Stay,
            },
            _ => Turn::Stay,
        }
    }

    fn on_timer(&mut self, ctx: Ctx, at: At<'_, Self>, timer: NoAnswer) -> Turn {
        let At { plan, job, phase } = at;
        if *phase != Phase::Acquiring || timer.attempt != job.attempt {
            return Turn::Stay;
        }
        let (me, wait_ms) = (ctx.me(), plan.answer_timeout_ms);
        if job.attempt >= plan.job.max_attempts {
            ctx.note(FenceWorkerSaw::NoAnswerGivesUp {
                wait_ms,
                attempt: job.attempt,
                me,
            });
            Turn::GiveUp
        } else {
            ctx.note(FenceWorkerSaw::NoAnswerRetries {
                wait_ms,
                me,
                retry_ms: plan.job.retry_ms,
            });
            Turn::BackOff
        }
    }

    fn on_peer_down(&mut self, ctx: Ctx, at: At<'_, Self>, peer: NodeId) -> Turn {
        let Some(next) = at.plan.failover_to.filter(|_| peer == self.store) else {
            return Turn::Stay;
        };
        self.store = next;
        ctx.note(FenceWorkerSaw::Reconnects {
            me: ctx.me(),
            lost: ctx.name(peer),
            to: ctx.name(next),
        });
        let claiming = *at.phase == Phase::Acquiring && !self.reading;
        if claiming || *at.phase == Phase::Watching {
            // The request in flight, or the watch, was on the crashed store: ask again.
            Turn::Resend
        } else {
            Turn::Stay
        }
    }

    fn watches(&self, plan: &FencePlan, peer: NodeId) -> bool {
        plan.failover_to.is_some() && peer == self.store
    }

    fn resume(ctx: Ctx, plan: &FencePlan, steps_done: u32) -> Next {
        let done = FenceWorkerSaw::AlreadyDone { me: ctx.me() };
        Self::after(ctx, plan, steps_done, done)
    }

    fn written(ctx: Ctx, plan: &FencePlan, step: u32) -> Next {
        let done = FenceWorkerSaw::WroteLastStep { me: ctx.me() };
        Self::after(ctx, plan, step, done)
    }

    fn before_write(&mut self, ctx: Ctx, at: At<'_, Self>, _step: u32) -> bool {
        if at.plan.fence == FenceFrom::Reread {
            ctx.send(self.store, PlacedMsg::Read);
            return false;
        }
        true
    }

    fn fence(&self, _ctx: Ctx, _step: u32) -> (FencingToken, WriteCheck) {
        (self.fence, WriteCheck::TokenPredicate)
    }

    fn refused(&mut self, ctx: Ctx, _: At<'_, Self>, _: u32, _: Option<RejectReason>) -> Option<Turn> {
        ctx.note(FenceWorkerSaw::WriteMatchedNoRow { me: ctx.me() });
        self.granted = None;
        Some(Turn::Stop)
    }

    /// It does not release: the lease lapses.
    fn release(&mut self, _ctx: Ctx, _at: At<'_, Self>) -> bool {
        self.granted = None;
        false
    }

    fn holds(&self) -> bool {
        self.granted.is_some()
    }
}
