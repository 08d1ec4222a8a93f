//! A Redlock client: the lock across independent Redis masters.
//!
//! It notes its clock, sends `SET key <random value> NX PX ttl` to every master (each with a
//! short timeout of its own), and once every master has answered or timed out it counts:
//! the lock is its only with a majority of OKs *and* validity left, where
//! validity = TTL − time spent acquiring − an allowance for clock drift. Otherwise it sends
//! the release script to every master, whether or not it got their OK, and tries again
//! later. Before each step of its job it checks the validity by its own clock. Redlock hands
//! out no fencing token, so its writes to the ledger carry none.

use super::lease_msg::{LeaseMsg, WriteCheck};
use super::redis_msg::{tenths, RedisMsg, RedisParticipant, RedisTimer};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::Ctx;
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use rand::Rng;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedlockPlan {
    pub names: Vec<String>,
    pub short: String,
    pub key: String,
    pub masters: Vec<NodeId>,
    pub ttl_ms: u64,
    /// How long it waits for any one master.
    pub master_timeout_ms: u64,
    pub retry_ms: u64,
    pub retry_jitter_ms: u64,
    pub start_at_ms: u64,
    pub max_attempts: u32,
    pub steps: u32,
    pub step_ms: u64,
    pub amount: i64,
    pub ledger: NodeId,
}

impl RedlockPlan {
    pub fn quorum(&self) -> usize {
        self.masters.len() / 2 + 1
    }

    /// The clock-drift allowance of the algorithm: 1% of the TTL plus 2 ms.
    pub fn drift_ms(&self) -> u64 {
        self.ttl_ms / 100 + 2
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedlockDurable {
    pub name: String,
    pub plan: RedlockPlan,
    pub finished: bool,
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
    pub name: String,
    pub plan: RedlockPlan,
    pub phase: Phase,
    pub attempt: u32,
    value: String,
    started_local_us: u64,
    /// Each master's answer this attempt: `Some(ok)`, or `None` for a timeout.
    replies: BTreeMap<NodeId, Option<bool>>,
    pub held: Option<QuorumLock>,
    /// Every lock it took, with the masters that granted it.
    pub acquisitions: Vec<Vec<NodeId>>,
    /// Majorities it threw away because no validity was left.
    pub rejected_for_time: u32,
    pub finished: bool,
}

impl RedlockClient {
    pub fn recover(d: &RedlockDurable) -> RedlockClient {
        RedlockClient {
            name: d.name.clone(),
            plan: d.plan.clone(),
            phase: if d.finished { Phase::Done } else { Phase::Idle },
            attempt: 0,
            value: String::new(),
            started_local_us: 0,
            replies: BTreeMap::new(),
            held: None,
            acquisitions: Vec::new(),
            rejected_for_time: 0,
            finished: d.finished,
        }
    }

    fn node(&self, id: NodeId) -> String {
        self.plan
            .names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn list(&self, ids: &[NodeId]) -> String {
        ids.iter().map(|n| self.node(*n)).collect::<Vec<_>>().join(", ")
    }

    pub fn believes_it_holds(&self) -> bool {
        self.held.is_some()
            && matches!(
                self.phase,
                Phase::ReadingProgress | Phase::Working { .. } | Phase::Writing { .. }
            )
    }

    pub fn start<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        if self.finished {
            ctx.note(format!("{} is up again; its job is already done.", self.name));
            return;
        }
        let at_us = self.plan.start_at_ms * MS_US;
        ctx.set_timer(RedisTimer::JobStart, at_us.saturating_sub(ctx.local_now_us));
    }

    pub fn timer<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, timer: RedisTimer)
    where
        P::Durable: From<RedlockDurable>,
    {
        match (timer, &self.phase) {
            (RedisTimer::JobStart, Phase::Idle) | (RedisTimer::Retry, Phase::BackingOff) => self.acquire(ctx),
            (RedisTimer::MasterTimeout { master, attempt, .. }, Phase::Acquiring)
                if attempt == self.attempt && !self.replies.contains_key(&master) =>
            {
                self.replies.insert(master, None);
                self.decide_if_complete(ctx);
            }
            (RedisTimer::StepDone { step }, Phase::Working { step: s }) if step == *s => {
                self.write(ctx, step)
            }
            _ => {}
        }
    }

    fn acquire<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        if self.attempt >= self.plan.max_attempts {
            ctx.note(format!("{} gives up after {} attempts.", self.name, self.attempt));
            self.phase = Phase::GaveUp;
            return;
        }
        self.attempt += 1;
        self.value = format!("{}-{:04x}", self.plan.short, ctx.rng.gen::<u16>());
        self.started_local_us = ctx.local_now_us;
        self.replies.clear();
        self.phase = Phase::Acquiring;
        ctx.note(format!(
            "{} notes its clock and asks all {} masters for {} with value {} (attempt {}). It needs {} OKs, and each master gets {} ms to answer.",
            self.name,
            self.plan.masters.len(),
            self.plan.key,
            self.value,
            self.attempt,
            self.plan.quorum(),
            self.plan.master_timeout_ms
        ));
        for m in self.plan.masters.clone() {
            ctx.send(
                m,
                RedisMsg::Set {
                    key: self.plan.key.clone(),
                    value: self.value.clone(),
                    nx: true,
                    px_ms: self.plan.ttl_ms,
                    incr: None,
                },
            );
            ctx.set_timer(
                RedisTimer::MasterTimeout {
                    master: m,
                    name: self.node(m),
                    attempt: self.attempt,
                },
                self.plan.master_timeout_ms * MS_US,
            );
        }
    }

    pub fn message<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, msg: RedisMsg)
    where
        P::Durable: From<RedlockDurable>,
    {
        match msg {
            RedisMsg::SetReply { ok, .. }
                if self.phase == Phase::Acquiring
                    && self.plan.masters.contains(&from)
                    && !self.replies.contains_key(&from) =>
            {
                self.replies.insert(from, Some(ok));
                ctx.cancel_timer(RedisTimer::MasterTimeout {
                    master: from,
                    name: self.node(from),
                    attempt: self.attempt,
                });
                self.decide_if_complete(ctx);
            }
            RedisMsg::Ledger(LeaseMsg::Progress { steps_done }) if self.phase == Phase::ReadingProgress => {
                if steps_done >= self.plan.steps {
                    ctx.note(format!(
                        "The ledger has all {steps_done} steps recorded: the job is already done, so {} only unlocks.",
                        self.name
                    ));
                    self.finish(ctx);
                } else {
                    if steps_done > 0 {
                        ctx.note(format!(
                            "{steps_done} step(s) are recorded already: {} takes the job up at step {}.",
                            self.name,
                            steps_done + 1
                        ));
                    }
                    self.start_step(ctx, steps_done + 1);
                }
            }
            RedisMsg::Ledger(LeaseMsg::WriteResult { step, .. })
                if self.phase == (Phase::Writing { step }) =>
            {
                if step < self.plan.steps {
                    self.start_step(ctx, step + 1);
                } else {
                    self.finish(ctx);
                }
            }
            _ => {}
        }
    }

    fn finish<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P::Durable: From<RedlockDurable>,
    {
        self.finished = true;
        ctx.persist(
            RedlockDurable {
                name: self.name.clone(),
                plan: self.plan.clone(),
                finished: true,
            }
            .into(),
        );
        ctx.note(format!(
            "{} is done with the job and unlocks every master.",
            self.name
        ));
        self.unlock_all(ctx);
        self.held = None;
        self.phase = Phase::Done;
    }

    /// Asks the ledger how far the job got, so that a second holder in turn continues it.
    fn read_progress<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        self.phase = Phase::ReadingProgress;
        ctx.send(self.plan.ledger, RedisMsg::Ledger(LeaseMsg::ReadProgress));
    }

    fn decide_if_complete<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
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
        let validity_ms = self.plan.ttl_ms as i64 - elapsed_ms as i64 - drift_ms as i64;
        let count = match granted.len() {
            0 => format!("none of the {} masters said OK", self.plan.masters.len()),
            n => format!("{n} of {} OK ({})", self.plan.masters.len(), self.list(&granted)),
        };
        let sum = format!(
            "validity = {} ms TTL − {elapsed_ms} ms spent asking − {drift_ms} ms drift allowance = {validity_ms} ms",
            self.plan.ttl_ms
        );
        if granted.len() >= self.plan.quorum() && validity_ms > 0 {
            ctx.note(format!(
                "{}: {count}, a majority, and {sum}. By its own reckoning the lock is its own for the next {}.",
                self.name,
                tenths(validity_ms as u64)
            ));
            self.held = Some(QuorumLock {
                value: self.value.clone(),
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
                self.name,
                self.plan.masters.len()
            ));
        } else {
            ctx.note(format!(
                "{}: {count}, short of a majority of {}. It unlocks all {} masters, including any that said yes, and will try again.",
                self.name,
                self.plan.quorum(),
                self.plan.masters.len()
            ));
        }
        self.unlock_all(ctx);
        self.back_off(ctx);
    }

    fn unlock_all<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        for m in self.plan.masters.clone() {
            ctx.send(
                m,
                RedisMsg::CompareAndDelete {
                    key: self.plan.key.clone(),
                    value: self.value.clone(),
                },
            );
        }
    }

    fn back_off<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        self.phase = Phase::BackingOff;
        let jitter_us = between_us(ctx.rng, 0, self.plan.retry_jitter_ms * MS_US);
        ctx.set_timer(RedisTimer::Retry, self.plan.retry_ms * MS_US + jitter_us);
    }

    fn start_step<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, step: u32) {
        let Some(lock) = &self.held else { return };
        let now = ctx.local_now_us;
        if now >= lock.deadline_local_us {
            ctx.note(format!(
                "Before step {step}, {} checks its clock: the lock's validity is over, so it stops and unlocks.",
                self.name
            ));
            self.unlock_all(ctx);
            self.held = None;
            self.phase = Phase::OutOfTime;
            return;
        }
        ctx.note(format!(
            "{} checks its clock before step {step}: {} of validity left, so it goes ahead.",
            self.name,
            tenths((lock.deadline_local_us - now) / MS_US)
        ));
        self.phase = Phase::Working { step };
        ctx.set_timer(RedisTimer::StepDone { step }, self.plan.step_ms * MS_US);
    }

    fn write<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, step: u32) {
        self.phase = Phase::Writing { step };
        ctx.note(format!(
            "{} has done step {step}'s work and sends the debit. Redlock gave it no token, so the write carries nothing the ledger could check.",
            self.name
        ));
        ctx.send(
            self.plan.ledger,
            RedisMsg::Ledger(LeaseMsg::Write {
                step,
                amount: self.plan.amount,
                token: FencingToken(0),
                check: WriteCheck::Unfenced,
            }),
        );
    }

    pub fn summary(&self, local_now_us: u64) -> Vec<String> {
        let phase = match &self.phase {
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
        };
        let mut lines = vec![phase];
        if let Some(l) = &self.held {
            let left = if l.deadline_local_us > local_now_us {
                tenths((l.deadline_local_us - local_now_us) / MS_US)
            } else {
                "0 s".to_string()
            };
            lines.push(format!("holds {} masters · {left} valid", l.masters.len()));
        }
        lines
    }
}
