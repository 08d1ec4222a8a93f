//! One job runner for every lock client that does a job under its lock: it waits for the
//! job's hour, takes the lock (attempt after attempt, backing off between them, giving up when
//! the attempts are spent), asks the ledger how far the job got, works and writes step by
//! step, and gives the lock back. The job lives here once, with its one [`Phase`] enum.
//!
//! How the lock is taken, kept and given back is a [`LockClient`] of the family: the Redis worker's
//! `SET NX PX` with its optional `WAIT` ([`super::redis_locks::redis_worker`]), Redlock's majority of masters
//! ([`super::redis_locks::redlock_client`]), a placed lease table ([`super::lease::fence_worker`]), the ZooKeeper
//! recipe ([`super::zookeeper_locks::zk_lock_worker`]), etcd's mutex ([`super::services::lock_client`]), a lock service's client
//! ([`super::services::service_client`]), a lease with its heartbeat, or a claim in a job table
//! ([`super::lease::lease_worker`]). A component sends its own requests, reads its own answers
//! and sets its own timers ([`JobTimer::Lock`]); it tells the runner where the job goes next with a
//! [`Turn`], and narrates what only it knows. Where a family's job differs (when it fires, what
//! counts as an attempt, what it says on resuming), a hook with the common way as its default says
//! so. The runner reads as its lock client (it dereferences to it), so a scenario asks
//! `worker.held` as before.

use super::lease::lease_msg::{LeaseMsg, RejectReason, WriteCheck};
use super::redis_locks::redis_job::{Job, JobDurable, JobPlan, Next};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::message::{Inbox, Message};
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
pub use crate::presentation::cards::job::LockCard;
use crate::presentation::labels::job::LockTimer;
use std::fmt::Debug;
use std::ops::Deref;

/// What one step of a job debits, the same ₹10 in every scenario of the book, so a run's
/// balances read alike from chapter to chapter.
pub const AMOUNT_PER_STEP: i64 = 10;

/// Where a job is, for every lock family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Acquiring,
    /// Queued behind the holder: it waits to be told the lock is its turn (ZooKeeper).
    Watching,
    /// The lock said yes; the client checks that answer before trusting it (Redis `WAIT`).
    Confirming,
    /// Stamping the ledger row with its new token before reading the progress (a lease
    /// taken over fences out every older holder first).
    Stamping,
    /// Asking the ledger how far the job got before taking it up (or whatever stands for
    /// that in the family: claiming the job row).
    ReadingProgress,
    /// Checking its token against the ledger's in application code before the work of `step`.
    Checking {
        step: u32,
    },
    Working {
        step: u32,
    },
    /// Reading what it will write with again before the write of `step`.
    Rereading {
        step: u32,
    },
    Writing {
        step: u32,
    },
    /// The release went out; waiting for its answer.
    Releasing,
    BackingOff,
    Done,
    /// The ledger refused a write: another holder exists.
    Stopped,
    /// Its validity ran out by its own clock before a step.
    OutOfTime,
    /// What held its lock (a session, a lease) expired under it.
    Lost,
    GaveUp,
}

impl Phase {
    /// Whether it is doing the protected work: from reading the progress to the last write.
    pub fn in_job(&self) -> bool {
        matches!(
            self,
            Phase::Stamping
                | Phase::ReadingProgress
                | Phase::Checking { .. }
                | Phase::Working { .. }
                | Phase::Rereading { .. }
                | Phase::Writing { .. }
        )
    }

    /// Cancels the timer of the step at work, if any: the work stops.
    pub fn stop_work<L: LockClient>(&self, ctx: JobCtx<'_, '_, L>) {
        if let Phase::Working { step } = *self {
            ctx.cancel_timer(JobTimer::StepDone { step });
        }
    }
}

/// The runner's timers and its lock client's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobTimer<T> {
    /// The job fires.
    JobStart,
    /// Try the lock again.
    Retry,
    /// The work of a step is done.
    StepDone { step: u32 },
    /// A timer of the lock client.
    Lock(T),
}

/// What a job runner takes off the wire: its lock family's answers, or the ledger's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobMsg<R> {
    Lock(R),
    Ledger(LeaseMsg),
}

impl<R: Inbox> Inbox for JobMsg<R> {
    fn accept(msg: Box<dyn Message>) -> Option<Self> {
        match msg.downcast::<LeaseMsg>() {
            Ok(m) => Some(JobMsg::Ledger(m)),
            Err(msg) => R::accept(msg).map(JobMsg::Lock),
        }
    }
}

/// The lock answers of a family whose lock server speaks [`LeaseMsg`] too (a lease store, a
/// job table): there are none apart from the ledger's, so its client reads them all in
/// [`LockClient::on_ledger`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseMsgOnly {}

impl Inbox for LeaseMsgOnly {
    fn accept(_msg: Box<dyn Message>) -> Option<Self> {
        None
    }
}

/// Where the job goes after the lock client has handled an answer, a timer or a lost peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Nothing changes for the job.
    Stay,
    /// The lock is held: read the job's progress.
    Granted,
    /// The lock said yes and the client confirms it first.
    Confirm,
    /// Not its turn yet: it waits to be told.
    Watch,
    /// Not held: try again after the back-off.
    BackOff,
    /// Start a new attempt now.
    Acquire,
    /// Back to asking, within this attempt (its request is out).
    Ask,
    /// This attempt's request was lost with its server: send it again, as the same attempt.
    Resend,
    /// Cut the back-off short and start a new attempt now.
    RetryNow,
    /// The lock is held: it starts on this step without asking the ledger.
    Work(u32),
    /// What held its lock expired.
    Lost,
    /// Its fence is read again: write this step.
    Write(u32),
    /// Its check before this step passed: start the step's work.
    Checked(u32),
    /// This step is recorded (however the answer said so): go on.
    Written(u32),
    /// It stamps the ledger row with its token (the stamp is out) before reading the progress.
    Stamp,
    /// No attempt left.
    GiveUp,
    /// Told it lost the lock: it abandons the job.
    Stop,
    /// The release was answered: the job is over.
    Released,
    /// It stops early and gives the lock back on the way out (the release is out).
    Releasing,
}

/// Whether a step may start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepGate {
    Go,
    /// It holds nothing to work under: nothing happens.
    Skip,
    /// Its lock is over by its own clock; it has given it back.
    OutOfTime,
    /// It checks something before the work (the lock sent the check): [`Phase::Checking`].
    Check,
    /// The step does not start: the job goes where this turn says.
    Then(Turn),
}

/// A context of the runner hosting lock client `L`.
pub type JobCtx<'a, 'b, L> = &'a mut Ctx<'b, JobRunner<L>>;

/// What a lock client may read of the job when it acts: the node's plan, the attempt, the phase.
pub struct At<'a, L: LockClient> {
    pub plan: &'a L::Plan,
    pub job: &'a Job,
    pub phase: &'a Phase,
}

impl<L: LockClient> Clone for At<'_, L> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<L: LockClient> Copy for At<'_, L> {}

/// A lock client's configuration ([`LockClient::Plan`]): the job it runs, beside whatever the
/// family adds. Every family keeps it in a field `job`; [`plans_job!`] says so for a plan type.
pub trait PlansJob {
    fn job_plan(&self) -> &JobPlan;
}

/// Implements [`PlansJob`] for plan types whose job is their field `job`.
macro_rules! plans_job {
    ($($plan:ty),+ $(,)?) => {
        $(impl $crate::protocols::job::PlansJob for $plan {
            fn job_plan(&self) -> &$crate::protocols::redis_locks::redis_job::JobPlan {
                &self.job
            }
        })+
    };
}
pub(crate) use plans_job;

/// The lock side of a job: how one family takes, checks and gives back its lock; what its
/// card says is its [`LockCard`].
pub trait LockClient:
    LockCard<<Self as LockClient>::Plan> + Clone + Debug + PartialEq + Sized + 'static
{
    /// The node's configuration: the job plan and the family's own settings.
    type Plan: PlansJob + Clone + Debug + PartialEq + 'static;
    type Timer: Clone + Debug + PartialEq + LockTimer + 'static;
    /// What its lock servers answer.
    type Reply: Inbox + Clone + Debug + PartialEq;
    /// Whether it records on disk that its job is done (a client that keeps nothing starts
    /// over after a crash).
    const KEEPS_JOB: bool = true;
    /// Whether a step's work takes the plan's `step_ms`; `false` where the lock client ends the
    /// work itself with [`Turn::Write`] (the work is a remote call, and its answer ends it).
    const TIMED_WORK: bool = true;
    /// Whether it stamps the ledger row with its token before reading the progress
    /// ([`Turn::Stamp`], [`Phase::Stamping`]: the lease worker's fence on takeover). A family
    /// that never does leaves that path, and its words, out of its runner's code.
    const STAMPS: bool = false;
    /// Whether it checks something before a step's work ([`StepGate::Check`], [`Turn::Checked`],
    /// [`Phase::Checking`]: the lease worker's token check in application code). Likewise.
    const CHECKS: bool = false;
    /// Whether the plan's `max_attempts` bounds its attempts, each with a fresh random lock
    /// value; by default it only counts them and asks until it holds (or stops for a reason
    /// of its own: a denial, a lost session, a store that does not answer).
    const BOUNDED: bool = false;

    fn recover(plan: &Self::Plan, durable: &JobDurable) -> Self;

    /// At (re)start: sets [`JobTimer::JobStart`] for the job's hour, unless the job is done.
    fn start(ctx: JobCtx<'_, '_, Self>, plan: &Self::Plan, job: &Job) {
        job.schedule(ctx, plan.job_plan(), JobTimer::JobStart);
    }
    /// The job fires: by default it tries the lock ([`LockClient::ready`] first).
    fn fire(&mut self, ctx: JobCtx<'_, '_, Self>, at: At<'_, Self>) -> Turn {
        if self.ready(ctx, at.plan) {
            Turn::Acquire
        } else {
            Turn::BackOff
        }
    }
    /// The ledger's answer to the progress read: where the job goes on.
    fn resume(ctx: JobCtx<'_, '_, Self>, plan: &Self::Plan, steps_done: u32) -> Next {
        plan.job_plan().resume(ctx, steps_done, Self::RELEASE_WORDS)
    }
    /// Step `step` is written: where the job goes on.
    fn written(_ctx: JobCtx<'_, '_, Self>, plan: &Self::Plan, step: u32) -> Next {
        plan.job_plan().after(step)
    }

    /// Before an attempt: `false` when it must back off first (it has already done what it
    /// can, e.g. asked where the server is).
    fn ready(&mut self, _ctx: JobCtx<'_, '_, Self>, _plan: &Self::Plan) -> bool {
        true
    }
    /// Sends this attempt's requests (the runner has drawn `job.value`).
    fn request(&mut self, ctx: JobCtx<'_, '_, Self>, at: At<'_, Self>);
    /// The lock is held: finds out how far the job got, by default from the ledger.
    fn read_progress(&mut self, ctx: JobCtx<'_, '_, Self>, at: At<'_, Self>) {
        at.plan.job_plan().read_progress(ctx);
    }
    fn on_reply(
        &mut self,
        ctx: JobCtx<'_, '_, Self>,
        at: At<'_, Self>,
        from: NodeId,
        msg: Self::Reply,
    ) -> Turn;
    fn on_timer(&mut self, ctx: JobCtx<'_, '_, Self>, at: At<'_, Self>, timer: Self::Timer) -> Turn;
    fn on_peer_down(&mut self, _ctx: JobCtx<'_, '_, Self>, _at: At<'_, Self>, _peer: NodeId) -> Turn {
        Turn::Stay
    }
    fn watches(&self, _plan: &Self::Plan, _peer: NodeId) -> bool {
        false
    }
    /// An answer of the ledger (or of anyone speaking [`LeaseMsg`]) before the runner reads it:
    /// `Ok` where the lock client took it, `Err` to leave it to the runner (by default).
    fn on_ledger(
        &mut self,
        _ctx: JobCtx<'_, '_, Self>,
        _at: At<'_, Self>,
        _from: NodeId,
        msg: LeaseMsg,
    ) -> Result<Turn, LeaseMsg> {
        Err(msg)
    }
    /// How long it backs off before the next attempt: by default the job's `retry_ms`.
    fn retry_after_us(&mut self, _ctx: JobCtx<'_, '_, Self>, plan: &Self::Plan) -> u64 {
        plan.job_plan().retry_ms * MS_US
    }
    /// Whether step `step` may start.
    fn before_step(&mut self, _ctx: JobCtx<'_, '_, Self>, _at: At<'_, Self>, _step: u32) -> StepGate {
        StepGate::Go
    }
    /// The work of step `step` is done: `true` to write now, `false` when it first reads its
    /// fence again (and answers [`Turn::Write`]).
    fn before_write(&mut self, _ctx: JobCtx<'_, '_, Self>, _at: At<'_, Self>, _step: u32) -> bool {
        true
    }
    /// The step's work has started: with `TIMED_WORK` its timer is set; without, the lock
    /// client ends the work itself with [`Turn::Write`].
    fn working(&mut self, _ctx: JobCtx<'_, '_, Self>, _at: At<'_, Self>, _step: u32) {}
    /// What a write of step `step` carries, narrated.
    fn fence(&self, ctx: JobCtx<'_, '_, Self>, step: u32) -> (FencingToken, WriteCheck);
    /// Sends the write of step `step`: by default to the ledger, carrying its fence, and the
    /// job waits for the answer (`None`); `Some` where the job goes on at once.
    fn write(&mut self, ctx: JobCtx<'_, '_, Self>, at: At<'_, Self>, step: u32) -> Option<Next> {
        let (token, check) = self.fence(ctx, step);
        let plan = at.plan.job_plan();
        let write = LeaseMsg::Write {
            step,
            amount: plan.amount,
            token,
            check,
        };
        ctx.send(plan.ledger, write);
        None
    }
    /// The ledger refused step `step`: where the job goes (it narrates why), or `None` to go on
    /// as if it were written.
    fn refused(
        &mut self,
        _ctx: JobCtx<'_, '_, Self>,
        _at: At<'_, Self>,
        _step: u32,
        _reason: Option<RejectReason>,
    ) -> Option<Turn> {
        None
    }
    /// Gives the lock back at the job's end; `true` if it waits for the answer.
    fn release(&mut self, ctx: JobCtx<'_, '_, Self>, at: At<'_, Self>) -> bool;
    /// Request ids it has used, kept on disk so that a restart never reuses one (etcd).
    fn requests(&self) -> u32 {
        0
    }
    /// Whether it holds a lock it believes in.
    fn holds(&self) -> bool;
}

/// A participant that does a job under a lock taken by `L`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRunner<L: LockClient> {
    pub plan: L::Plan,
    pub phase: Phase,
    /// Its attempts, this attempt's lock value, and whether the job is done.
    pub job: Job,
    pub lock: L,
}

impl<L: LockClient> Deref for JobRunner<L> {
    type Target = L;
    fn deref(&self) -> &L {
        &self.lock
    }
}

impl<L: LockClient> JobRunner<L> {
    pub fn recover(plan: &L::Plan, d: &JobDurable) -> Self {
        JobRunner {
            plan: plan.clone(),
            phase: if d.finished { Phase::Done } else { Phase::Idle },
            job: Job::recover(d),
            lock: L::recover(plan, d),
        }
    }

    /// Its lock client, and what that may read of the job.
    fn split(&mut self) -> (&mut L, At<'_, L>) {
        let at = At {
            plan: &self.plan,
            job: &self.job,
            phase: &self.phase,
        };
        (&mut self.lock, at)
    }

    fn job_plan(&self) -> &JobPlan {
        self.plan.job_plan()
    }

    /// Whether it is doing the protected work believing the lock is its own.
    pub fn believes_it_holds(&self) -> bool {
        self.lock.holds() && self.phase.in_job()
    }

    fn acquire(&mut self, ctx: &mut Ctx<'_, Self>) {
        if !L::BOUNDED {
            self.job.attempt += 1;
        } else if !self.job.next_attempt(ctx, self.plan.job_plan()) {
            self.phase = Phase::GaveUp;
            return;
        }
        self.request(ctx);
    }

    /// Sends this attempt's requests.
    fn request(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::Acquiring;
        let (lock, at) = self.split();
        lock.request(ctx, at);
    }

    fn turn(&mut self, ctx: &mut Ctx<'_, Self>, turn: Turn) {
        match turn {
            Turn::Stay => {}
            Turn::Granted => {
                self.phase = Phase::ReadingProgress;
                let (lock, at) = self.split();
                lock.read_progress(ctx, at);
            }
            Turn::Confirm => self.phase = Phase::Confirming,
            Turn::Watch => self.phase = Phase::Watching,
            Turn::Ask => self.phase = Phase::Acquiring,
            Turn::Work(step) => self.go(ctx, Next::Step(step)),
            Turn::Lost => self.phase = Phase::Lost,
            Turn::Resend => self.request(ctx),
            Turn::Write(step) => self.write(ctx, step),
            Turn::Checked(step) if L::CHECKS => self.work(ctx, step),
            Turn::Written(step) => {
                let next = L::written(ctx, &self.plan, step);
                self.go(ctx, next);
            }
            Turn::Stamp if L::STAMPS => self.phase = Phase::Stamping,
            // Never sent by a client that neither stamps nor checks. A client that does and
            // forgot its STAMPS or CHECKS would stall here without a word: the tests say so.
            Turn::Stamp | Turn::Checked(_) => {
                debug_assert!(
                    false,
                    "a stamp or token check from a client without STAMPS or CHECKS"
                )
            }
            Turn::GiveUp => self.phase = Phase::GaveUp,
            Turn::Stop => self.phase = Phase::Stopped,
            Turn::BackOff => self.back_off(ctx),
            Turn::Acquire => self.acquire(ctx),
            Turn::RetryNow => {
                ctx.cancel_timer(JobTimer::Retry);
                self.acquire(ctx);
            }
            Turn::Released => self.phase = Phase::Done,
            Turn::Releasing => self.phase = Phase::Releasing,
        }
    }

    fn back_off(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::BackingOff;
        let after_us = self.lock.retry_after_us(ctx, &self.plan);
        ctx.set_timer(JobTimer::Retry, after_us);
    }

    fn ledger_reply(&mut self, ctx: &mut Ctx<'_, Self>, msg: LeaseMsg) {
        match msg {
            LeaseMsg::Progress { steps_done } if self.phase == Phase::ReadingProgress => {
                let next = L::resume(ctx, &self.plan, steps_done);
                self.go(ctx, next);
            }
            LeaseMsg::WriteResult {
                step,
                accepted,
                reason,
                ..
            } if self.phase == (Phase::Writing { step }) => {
                let (lock, at) = self.split();
                let refused = if accepted {
                    None
                } else {
                    lock.refused(ctx, at, step, reason)
                };
                self.turn(ctx, refused.unwrap_or(Turn::Written(step)));
            }
            _ => {}
        }
    }

    fn go(&mut self, ctx: &mut Ctx<'_, Self>, next: Next) {
        match next {
            Next::Step(step) => {
                let (lock, at) = self.split();
                match lock.before_step(ctx, at, step) {
                    StepGate::Go => self.work(ctx, step),
                    StepGate::Check if L::CHECKS => self.phase = Phase::Checking { step },
                    StepGate::Skip => {}
                    StepGate::Check => debug_assert!(false, "a lock client checks tokens without CHECKS"),
                    StepGate::OutOfTime => self.phase = Phase::OutOfTime,
                    StepGate::Then(turn) => self.turn(ctx, turn),
                }
            }
            Next::Finish => {
                if L::KEEPS_JOB {
                    self.job.finish(ctx, self.lock.requests());
                } else {
                    self.job.finished = true;
                }
                let (lock, at) = self.split();
                let waits = lock.release(ctx, at);
                self.phase = if waits { Phase::Releasing } else { Phase::Done };
            }
        }
    }

    /// Starts the work of step `step`.
    fn work(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.phase = Phase::Working { step };
        if L::TIMED_WORK {
            let step_us = self.job_plan().step_ms * MS_US;
            ctx.set_timer(JobTimer::StepDone { step }, step_us);
        }
        let (lock, at) = self.split();
        lock.working(ctx, at, step);
    }

    fn write(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.phase = Phase::Writing { step };
        let (lock, at) = self.split();
        if let Some(next) = lock.write(ctx, at, step) {
            self.go(ctx, next);
        }
    }
}

impl<L: LockClient> Participant for JobRunner<L> {
    type Msg = JobMsg<L::Reply>;
    type Timer = JobTimer<L::Timer>;
    type Durable = JobDurable;
    type Config = L::Plan;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        L::start(ctx, &self.plan, &self.job);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: Self::Msg) {
        match msg {
            JobMsg::Lock(msg) => {
                let (lock, at) = self.split();
                let turn = lock.on_reply(ctx, at, from, msg);
                self.turn(ctx, turn);
            }
            JobMsg::Ledger(msg) => {
                let (lock, at) = self.split();
                match lock.on_ledger(ctx, at, from, msg) {
                    Ok(turn) => self.turn(ctx, turn),
                    Err(msg) => self.ledger_reply(ctx, msg),
                }
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: Self::Timer) {
        match (timer, self.phase.clone()) {
            (JobTimer::JobStart, Phase::Idle) => {
                let (lock, at) = self.split();
                let turn = lock.fire(ctx, at);
                self.turn(ctx, turn);
            }
            (JobTimer::Retry, Phase::BackingOff) => {
                if self.lock.ready(ctx, &self.plan) {
                    self.acquire(ctx);
                } else {
                    self.back_off(ctx);
                }
            }
            (JobTimer::StepDone { step }, Phase::Working { step: s }) if step == s => {
                let (lock, at) = self.split();
                if lock.before_write(ctx, at, step) {
                    self.write(ctx, step);
                } else {
                    self.phase = Phase::Rereading { step };
                }
            }
            (JobTimer::Lock(t), _) => {
                let (lock, at) = self.split();
                let turn = lock.on_timer(ctx, at, t);
                self.turn(ctx, turn);
            }
            _ => {}
        }
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        let (lock, at) = self.split();
        let turn = lock.on_peer_down(ctx, at, peer);
        self.turn(ctx, turn);
    }

    fn watches(&self, peer: NodeId) -> bool {
        self.lock.watches(&self.plan, peer)
    }

    fn recover(plan: &L::Plan, _id: NodeId, durable: &JobDurable) -> Self {
        JobRunner::recover(plan, durable)
    }
}
