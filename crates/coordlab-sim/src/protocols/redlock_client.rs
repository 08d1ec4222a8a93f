//! A Redlock client: the lock across independent Redis masters.
//!
//! It notes its clock, sends `SET key <random value> NX PX ttl` to every master (each with a
//! short timeout of its own), and once every master has answered or timed out it counts:
//! the lock is its only with a majority of OKs *and* validity left, where
//! validity = TTL − time spent acquiring − an allowance for clock drift. Otherwise it sends
//! the release script to every master, whether or not it got their OK, and tries again
//! later. Before each step of its job it checks the validity by its own clock. Redlock hands
//! out no fencing token, so its writes to the ledger carry none.

use super::card;
use super::lease_msg::{LeaseMsg, WriteCheck};
use super::redis_job::{ClientMsg, Job, JobDurable, JobPlan, Next};
use super::redis_msg::{tenths, RedisMsg};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::rng::between_us;
use crate::kernel::time::{format_duration, MS_US};
use crate::kernel::view::{Summary, Tone};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedlockPlan {
    /// The lock and the job, as every Redis lock client has them.
    pub job: JobPlan,
    pub masters: Vec<NodeId>,
    /// How long it waits for any one master.
    pub master_timeout_ms: u64,
    pub retry_jitter_ms: u64,
}

impl RedlockPlan {
    pub fn quorum(&self) -> usize {
        self.masters.len() / 2 + 1
    }

    /// The clock-drift allowance of the algorithm: 1% of the TTL plus 2 ms.
    pub fn drift_ms(&self) -> u64 {
        self.job.ttl_ms / 100 + 2
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedlockTimer {
    /// The job fires.
    JobStart,
    /// Try the lock again.
    Retry,
    /// No answer from one master for this attempt.
    MasterTimeout {
        master: NodeId,
        name: String,
        attempt: u32,
    },
    /// The work of a step is done.
    StepDone { step: u32 },
}

impl Label for RedlockTimer {
    fn label(&self) -> String {
        match self {
            RedlockTimer::JobStart => "the job fires".to_string(),
            RedlockTimer::Retry => "tries the lock again".to_string(),
            RedlockTimer::MasterTimeout { name, .. } => format!("gives up waiting for {name}"),
            RedlockTimer::StepDone { step } => format!("finishes the work of step {step}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Acquiring,
    /// Asking the ledger how far the job got before taking it up.
    ReadingProgress,
    Working {
        step: u32,
    },
    Writing {
        step: u32,
    },
    BackingOff,
    Done,
    /// Its validity ran out by its own clock before a step.
    OutOfTime,
    GaveUp,
}

/// A lock held on a majority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuorumLock {
    pub value: String,
    pub masters: Vec<NodeId>,
    /// Its own clock reading when the validity ends.
    pub deadline_local_us: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedlockClient {
    pub plan: RedlockPlan,
    pub phase: Phase,
    /// Its attempts, this attempt's lock value, and whether the job is done.
    pub job: Job,
    /// Its clock reading when this attempt's requests went out.
    started_local_us: u64,
    /// Each master's answer this attempt: `Some(ok)`, or `None` for a timeout.
    replies: VecMap<NodeId, Option<bool>>,
    pub held: Option<QuorumLock>,
    /// Every lock it took, with the masters that granted it.
    pub acquisitions: Vec<Vec<NodeId>>,
    /// Majorities it threw away because no validity was left.
    pub rejected_for_time: u32,
}

impl RedlockClient {
    pub fn recover(plan: &RedlockPlan, d: &JobDurable) -> RedlockClient {
        RedlockClient {
            plan: plan.clone(),
            phase: if d.finished { Phase::Done } else { Phase::Idle },
            job: Job::recover(d),
            started_local_us: 0,
            replies: VecMap::new(),
            held: None,
            acquisitions: Vec::new(),
            rejected_for_time: 0,
        }
    }

    pub fn believes_it_holds(&self) -> bool {
        self.held.is_some()
            && matches!(
                self.phase,
                Phase::ReadingProgress | Phase::Working { .. } | Phase::Writing { .. }
            )
    }

    pub fn start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.job.schedule(ctx, &self.plan.job, RedlockTimer::JobStart);
    }

    pub fn timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: RedlockTimer) {
        match (timer, &self.phase) {
            (RedlockTimer::JobStart, Phase::Idle) | (RedlockTimer::Retry, Phase::BackingOff) => {
                self.acquire(ctx)
            }
            (RedlockTimer::MasterTimeout { master, attempt, .. }, Phase::Acquiring)
                if attempt == self.job.attempt && !self.replies.contains_key(&master) =>
            {
                self.replies.insert(master, None);
                self.decide_if_complete(ctx);
            }
            (RedlockTimer::StepDone { step }, Phase::Working { step: s }) if step == *s => {
                self.write(ctx, step)
            }
            _ => {}
        }
    }

    fn master_timeout(&self, ctx: &Ctx<'_, Self>, master: NodeId) -> RedlockTimer {
        RedlockTimer::MasterTimeout {
            master,
            name: ctx.name(master).to_string(),
            attempt: self.job.attempt,
        }
    }

    fn acquire(&mut self, ctx: &mut Ctx<'_, Self>) {
        if !self.job.next_attempt(ctx, &self.plan.job) {
            self.phase = Phase::GaveUp;
            return;
        }
        self.started_local_us = ctx.local_now_us;
        self.replies.clear();
        self.phase = Phase::Acquiring;
        ctx.note(format!(
            "{} notes its clock and asks all {} masters for {} with value {} (attempt {}). It needs {} OKs, and each master gets {} ms to answer.",
            ctx.me(),
            self.plan.masters.len(),
            self.plan.job.key,
            self.job.value,
            self.job.attempt,
            self.plan.quorum(),
            self.plan.master_timeout_ms
        ));
        for m in self.plan.masters.clone() {
            ctx.send(
                m,
                RedisMsg::Set {
                    key: self.plan.job.key.clone(),
                    value: self.job.value.clone(),
                    nx: true,
                    px_ms: self.plan.job.ttl_ms,
                    incr: None,
                },
            );
            let timeout = self.master_timeout(ctx, m);
            ctx.set_timer(timeout, self.plan.master_timeout_ms * MS_US);
        }
    }

    pub fn message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ClientMsg) {
        match msg {
            ClientMsg::Redis(RedisMsg::SetReply { ok, .. })
                if self.phase == Phase::Acquiring
                    && self.plan.masters.contains(&from)
                    && !self.replies.contains_key(&from) =>
            {
                self.replies.insert(from, Some(ok));
                let timeout = self.master_timeout(ctx, from);
                ctx.cancel_timer(timeout);
                self.decide_if_complete(ctx);
            }
            ClientMsg::Ledger(LeaseMsg::Progress { steps_done }) if self.phase == Phase::ReadingProgress => {
                let next = self.plan.job.resume(ctx, steps_done, "unlocks");
                self.go(ctx, next);
            }
            ClientMsg::Ledger(LeaseMsg::WriteResult { step, .. })
                if self.phase == (Phase::Writing { step }) =>
            {
                self.go(ctx, self.plan.job.after(step));
            }
            _ => {}
        }
    }

    fn go(&mut self, ctx: &mut Ctx<'_, Self>, next: Next) {
        match next {
            Next::Step(step) => self.start_step(ctx, step),
            Next::Finish => self.finish(ctx),
        }
    }

    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.job.finish(ctx);
        ctx.note(format!(
            "{} is done with the job and unlocks every master.",
            ctx.me()
        ));
        self.unlock_all(ctx);
        self.held = None;
        self.phase = Phase::Done;
    }

    fn read_progress(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::ReadingProgress;
        self.plan.job.read_progress(ctx);
    }

    fn list(ctx: &Ctx<'_, Self>, ids: &[NodeId]) -> String {
        ids.iter().map(|n| ctx.name(*n)).collect::<Vec<_>>().join(", ")
    }

    fn decide_if_complete(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.replies.len() < self.plan.masters.len() {
            return;
        }
        let granted: Vec<NodeId> = self
            .replies
            .iter()
            .filter(|(_, r)| **r == Some(true))
            .map(|(m, _)| *m)
            .collect();
        let elapsed_ms = ctx.local_now_us.saturating_sub(self.started_local_us) / MS_US;
        let drift_ms = self.plan.drift_ms();
        let validity_ms = self.plan.job.ttl_ms as i64 - elapsed_ms as i64 - drift_ms as i64;
        let count = match granted.len() {
            0 => format!("none of the {} masters said OK", self.plan.masters.len()),
            n => format!(
                "{n} of {} OK ({})",
                self.plan.masters.len(),
                Self::list(ctx, &granted)
            ),
        };
        let sum = format!(
            "validity = {} ms TTL − {elapsed_ms} ms spent asking − {drift_ms} ms drift allowance = {validity_ms} ms",
            self.plan.job.ttl_ms
        );
        if granted.len() >= self.plan.quorum() && validity_ms > 0 {
            ctx.note(format!(
                "{}: {count}, a majority, and {sum}. By its own reckoning the lock is its own for the next {}.",
                ctx.me(),
                tenths(validity_ms as u64)
            ));
            self.held = Some(QuorumLock {
                value: self.job.value.clone(),
                masters: granted.clone(),
                deadline_local_us: ctx.local_now_us + validity_ms as u64 * MS_US,
            });
            self.acquisitions.push(granted);
            self.read_progress(ctx);
            return;
        }
        if granted.len() >= self.plan.quorum() {
            self.rejected_for_time += 1;
            ctx.note(format!(
                "{}: {count} — a majority, but {sum}. Its keys may already have expired, so it rejects its own lock and unlocks all {} masters.",
                ctx.me(),
                self.plan.masters.len()
            ));
        } else {
            ctx.note(format!(
                "{}: {count}, short of a majority of {}. It unlocks all {} masters, including any that said yes, and will try again.",
                ctx.me(),
                self.plan.quorum(),
                self.plan.masters.len()
            ));
        }
        self.unlock_all(ctx);
        self.back_off(ctx);
    }

    fn unlock_all(&mut self, ctx: &mut Ctx<'_, Self>) {
        for m in self.plan.masters.clone() {
            ctx.send(
                m,
                RedisMsg::CompareAndDelete {
                    key: self.plan.job.key.clone(),
                    value: self.job.value.clone(),
                },
            );
        }
    }

    fn back_off(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::BackingOff;
        let jitter_us = between_us(ctx.rng, 0, self.plan.retry_jitter_ms * MS_US);
        ctx.set_timer(RedlockTimer::Retry, self.plan.job.retry_ms * MS_US + jitter_us);
    }

    fn start_step(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        let Some(lock) = &self.held else { return };
        let now = ctx.local_now_us;
        if now >= lock.deadline_local_us {
            ctx.note(format!(
                "Before step {step}, {} checks its clock: the lock's validity is over, so it stops and unlocks.",
                ctx.me()
            ));
            self.unlock_all(ctx);
            self.held = None;
            self.phase = Phase::OutOfTime;
            return;
        }
        ctx.note(format!(
            "{} checks its clock before step {step}: {} of validity left, so it goes ahead.",
            ctx.me(),
            tenths((lock.deadline_local_us - now) / MS_US)
        ));
        self.phase = Phase::Working { step };
        ctx.set_timer(RedlockTimer::StepDone { step }, self.plan.job.step_ms * MS_US);
    }

    fn write(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.phase = Phase::Writing { step };
        ctx.note(format!(
            "{} has done step {step}'s work and sends the debit. Redlock gave it no token, so the write carries nothing the ledger could check.",
            ctx.me()
        ));
        ctx.send(
            self.plan.job.ledger,
            LeaseMsg::Write {
                step,
                amount: self.plan.job.amount,
                token: FencingToken(0),
                check: WriteCheck::Unfenced,
            },
        );
    }

    /// What it is doing, in a few words (the card's first line).
    pub fn doing(&self) -> String {
        match &self.phase {
            Phase::Idle => "waiting for the job".to_string(),
            Phase::Acquiring => format!(
                "asking: {} of {} answered",
                self.replies.len(),
                self.plan.masters.len()
            ),
            Phase::ReadingProgress => "checking the job's progress".to_string(),
            Phase::Working { step } => format!("step {step}: working"),
            Phase::Writing { step } => format!("step {step}: writing"),
            Phase::BackingOff => "backing off".to_string(),
            Phase::Done => "done".to_string(),
            Phase::OutOfTime => "stopped: validity over".to_string(),
            Phase::GaveUp => "gave up".to_string(),
        }
    }

    pub fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let masters = self.plan.masters.len();
        let s = match &self.phase {
            Phase::Idle => card::idle(),
            Phase::Acquiring => Summary::new("asking", Tone::Asking)
                .badge("answered", card::of(self.replies.len(), masters))
                .detail("on all masters"),
            Phase::ReadingProgress => card::holder("checking progress"),
            Phase::Working { step } => card::holder(card::step(*step, "working")),
            Phase::Writing { step } => card::holder(card::step(*step, "writing")),
            Phase::BackingOff => card::backing_off(),
            Phase::Done => card::done(),
            Phase::OutOfTime => card::stopped("validity over"),
            Phase::GaveUp => card::gave_up("no attempts left"),
        };
        match &self.held {
            Some(l) => {
                let left = l.deadline_local_us.saturating_sub(view.local_now_us);
                s.badge("masters", card::of(l.masters.len(), masters))
                    .minor(format!("{} valid by own clock", format_duration(left)))
            }
            None => s,
        }
    }
}

impl Participant for RedlockClient {
    type Msg = ClientMsg;
    type Timer = RedlockTimer;
    type Durable = JobDurable;
    type Config = RedlockPlan;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.start(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ClientMsg) {
        self.message(ctx, from, msg);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: RedlockTimer) {
        self.timer(ctx, timer);
    }

    fn recover(plan: &RedlockPlan, _id: NodeId, durable: &JobDurable) -> Self {
        RedlockClient::recover(plan, durable)
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        RedlockClient::summary(self, view)
    }

    fn durable_summary(_plan: &RedlockPlan, durable: &JobDurable, _view: &ViewCtx<'_>) -> Summary {
        durable.summary()
    }
}
