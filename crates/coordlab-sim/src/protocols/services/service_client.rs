//! A client of a named lock service ([`super::service_lock`]): it waits for the lock, runs a
//! job of a few steps that each end in a write to the resource, keeps the lock alive from a
//! separate thread (Redisson's watchdog, Chubby's KeepAlives, a CP session's heartbeats),
//! and unlocks when the job is done.
//!
//! The keep-alive thread and the job thread live in one process: a stop-the-world pause
//! stops both, while a job thread that is merely stuck leaves the keep-alive running.
//!
//! The job itself is the [`JobRunner`]'s; this file is the lock side, [`ServiceLock`]. Its
//! writes go to the resource without waiting for an answer, and it keeps nothing on disk.

use super::service_lock::{Flavour, ServiceMsg};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::presentation::narration::services::service_client::ServiceClientSaw;
use crate::protocols::job::{plans_job, At, JobCtx, JobRunner, JobTimer, LockClient, Phase, Turn};
use crate::protocols::lease::lease_msg::WriteCheck;
use crate::protocols::redis_locks::redis_job::{Job, JobDurable, JobPlan, Next};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    pub flavour: Flavour,
    pub server: NodeId,
    pub resource: NodeId,
    /// When it first asks for the lock, drawn from this range (ms).
    pub start_after_ms: (u64, u64),
    /// How long it waits before asking again after a refusal (Redisson instead waits for the
    /// unlock message or the key's remaining TTL).
    pub retry_ms: u64,
    /// How often the keep-alive thread renews (Chubby: the next KeepAlive goes out as soon as
    /// the cell answers the last).
    pub renew_every_ms: u64,
    pub steps: u32,
    pub step_ms: u64,
    /// Whether each write carries the grant's number (a sequencer or a fence).
    pub sends_number: bool,
    /// The job thread blocks for good after writing this step (a stuck thread).
    pub stuck_after_step: Option<u32>,
    /// Nobody starts anything after this time by its own clock: where the run stops watching.
    pub horizon_ms: u64,
}

/// A client's configuration as the runner holds it: the job, and the client's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServicePlan {
    pub job: JobPlan,
    pub client: ClientConfig,
}

plans_job!(ServicePlan);

impl From<ClientConfig> for ServicePlan {
    fn from(client: ClientConfig) -> ServicePlan {
        let job = JobPlan {
            retry_ms: client.retry_ms,
            ..JobPlan::of_steps(client.steps, client.step_ms, 0, client.resource)
        };
        ServicePlan { job, client }
    }
}

/// A client: the job runner with a lock service's lock.
pub type ServiceClient = JobRunner<ServiceLock>;

/// Time for the keep-alive thread to renew.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renew;

/// The lock side of a client: the grant it holds, its keep-alive thread, its job thread's
/// writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceLock {
    /// The grant it believes it holds.
    pub number: Option<u64>,
    pub steps_written: u32,
    /// Whether the keep-alive thread is still renewing.
    pub renewing: bool,
    pub acquired: bool,
    /// The job thread is blocked; the keep-alive thread carries on.
    pub stuck: bool,
    pub renewals: u32,
    /// Refusals it has waited out (Redisson: narrated the first time).
    pub waits: u32,
    /// How long it waits before asking again (Redisson: the key's remaining TTL).
    retry_in_us: u64,
}

type Ctx<'a, 'b> = JobCtx<'a, 'b, ServiceLock>;

/// Waiting for the lock: before its first try, asking, or waiting to ask again.
pub(crate) fn waiting(phase: &Phase) -> bool {
    matches!(phase, Phase::Idle | Phase::Acquiring | Phase::BackingOff)
}

impl ServiceLock {
    /// Schedules the next renewal; a Chubby library sends its next KeepAlive at once, since
    /// the cell answers only near the lease's end.
    fn keep_alive(&mut self, ctx: Ctx, c: &ClientConfig) {
        match (c.flavour, self.number) {
            (Flavour::Chubby, Some(number)) => ctx.send(c.server, ServiceMsg::Renew { number }),
            _ => ctx.set_timer(JobTimer::Lock(Renew), c.renew_every_ms * MS_US),
        }
    }

    fn before_horizon(local_now_us: u64, c: &ClientConfig) -> bool {
        local_now_us < c.horizon_ms * MS_US
    }

    /// Whether it believes it holds the lock.
    pub(crate) fn believes(&self, phase: &Phase) -> bool {
        self.holds() && phase.in_job()
    }
}

impl LockClient for ServiceLock {
    type Plan = ServicePlan;
    type Timer = Renew;
    type Reply = ServiceMsg;
    const KEEPS_JOB: bool = false;

    fn recover(plan: &ServicePlan, _durable: &JobDurable) -> Self {
        ServiceLock {
            retry_in_us: plan.client.retry_ms * MS_US,
            ..ServiceLock::default()
        }
    }

    /// It first asks at a random moment in its range.
    fn start(ctx: Ctx, plan: &ServicePlan, job: &Job) {
        job.start_after(ctx, plan.client.start_after_ms, JobTimer::JobStart);
    }

    fn request(&mut self, ctx: Ctx, at: At<'_, Self>) {
        ctx.send(at.plan.client.server, ServiceMsg::Acquire);
    }

    fn on_reply(&mut self, ctx: Ctx, at: At<'_, Self>, _from: NodeId, msg: ServiceMsg) -> Turn {
        let me = ctx.me();
        let c = &at.plan.client;
        let flavour = c.flavour;
        match msg {
            ServiceMsg::Granted { number } if waiting(at.phase) => {
                self.number = Some(number);
                self.acquired = true;
                self.renewing = true;
                ctx.note(ServiceClientSaw::Holds {
                    flavour,
                    me,
                    number,
                    renew_every_ms: c.renew_every_ms,
                });
                Turn::Work(1)
            }
            ServiceMsg::Busy { left_us, .. }
                if waiting(at.phase) && Self::before_horizon(ctx.local_now_us, c) =>
            {
                // One timer asks again, as the job's first try did (after a restart, its
                // first try may still be pending).
                ctx.cancel_timer(JobTimer::JobStart);
                self.waits += 1;
                self.retry_in_us = c.retry_ms * MS_US;
                if flavour == Flavour::Redisson {
                    // tryLock's script returns the key's remaining TTL; Redisson subscribes to
                    // the lock's channel and waits that long at most.
                    if self.waits == 1 {
                        ctx.note(ServiceClientSaw::Subscribes { left_us, me });
                    }
                    self.retry_in_us = left_us;
                }
                Turn::BackOff
            }
            ServiceMsg::UnlockPublished if waiting(at.phase) => {
                ctx.cancel_timer(JobTimer::JobStart);
                Turn::RetryNow
            }
            ServiceMsg::Renewed => {
                self.renewals += 1;
                if self.renewing && self.believes(at.phase) && Self::before_horizon(ctx.local_now_us, c) {
                    self.keep_alive(ctx, c);
                }
                Turn::Stay
            }
            ServiceMsg::RenewRefused => {
                self.renewing = false;
                ctx.note(ServiceClientSaw::RenewalRefused {
                    flavour,
                    me,
                    in_job: at.phase.in_job(),
                });
                Turn::Stay
            }
            ServiceMsg::Released { ok: false } => {
                ctx.note(ServiceClientSaw::UnlockRefused { flavour, me });
                Turn::Stay
            }
            ServiceMsg::WriteResult {
                step,
                accepted: false,
            } => {
                self.renewing = false;
                self.number = None;
                self.stuck = false;
                at.phase.stop_work(ctx);
                ctx.cancel_timer(JobTimer::Lock(Renew));
                ctx.note(ServiceClientSaw::StepRefused { me, step });
                Turn::Stop
            }
            // The last write's answer (see `write`); a stuck thread never reads it.
            ServiceMsg::WriteResult { step, accepted: true }
                if !self.stuck && *at.phase == (Phase::Writing { step }) =>
            {
                Turn::Written(step)
            }
            _ => Turn::Stay,
        }
    }

    fn on_timer(&mut self, ctx: Ctx, at: At<'_, Self>, _timer: Renew) -> Turn {
        if let (Some(number), true) = (self.number, self.renewing) {
            if self.believes(at.phase) {
                ctx.send(at.plan.client.server, ServiceMsg::Renew { number });
            }
        }
        Turn::Stay
    }

    fn retry_after_us(&mut self, _ctx: Ctx, _plan: &ServicePlan) -> u64 {
        self.retry_in_us
    }

    /// Its keep-alive thread starts with the job's first step.
    fn working(&mut self, ctx: Ctx, at: At<'_, Self>, step: u32) {
        if step == 1 {
            self.keep_alive(ctx, &at.plan.client);
        }
    }

    /// Its writes are not fenced by the runner: [`LockClient::write`] sends them.
    fn fence(&self, _ctx: Ctx, _step: u32) -> (FencingToken, WriteCheck) {
        (FencingToken(self.number.unwrap_or(0)), WriteCheck::TokenPredicate)
    }

    /// The job thread writes and goes on at once; it may block for good after a write.
    fn write(&mut self, ctx: Ctx, at: At<'_, Self>, step: u32) -> Option<Next> {
        let c = &at.plan.client;
        let number = self.number?;
        self.steps_written = step;
        let sent = c.sends_number.then_some(number);
        ctx.send(
            c.resource,
            ServiceMsg::Write {
                step,
                number: sent,
                grant: number,
            },
        );
        if c.stuck_after_step == Some(step) {
            self.stuck = true;
            ctx.note(ServiceClientSaw::Stuck { me: ctx.me(), step });
            return None;
        }
        // Its writes do not hold up the next step's work, but the last one's answer comes
        // before unlock(), as in code that unlocks once its last write has returned: an
        // unlock sent beside the write could overtake it, and the holder would write after
        // letting go.
        if step == at.plan.job.steps {
            return None;
        }
        Some(at.plan.job.after(step))
    }

    fn release(&mut self, ctx: Ctx, at: At<'_, Self>) -> bool {
        if let Some(number) = self.number {
            ctx.send(at.plan.client.server, ServiceMsg::Release { number });
        }
        self.renewing = false;
        ctx.cancel_timer(JobTimer::Lock(Renew));
        false
    }

    fn holds(&self) -> bool {
        self.number.is_some()
    }
}
