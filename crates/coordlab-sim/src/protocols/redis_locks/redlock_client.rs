//! A Redlock client: the lock across independent Redis masters.
//!
//! It notes its clock, sends `SET key <random value> NX PX ttl` to every master (each with a
//! short timeout of its own), and once every master has answered or timed out it counts:
//! the lock is its only with a majority of OKs *and* validity left, where
//! validity = TTL − time spent acquiring − an allowance for clock drift. Otherwise it sends
//! the release script to every master, whether or not it got their OK, and tries again
//! later. Before each step of its job it checks the validity by its own clock. Redlock hands
//! out no fencing token, so its writes to the ledger carry none.
//!
//! The job itself is the [`JobRunner`]'s; this file is the lock side, [`RedlockLock`].

use super::redis_job::{Job, JobDurable, JobPlan};
use super::redis_msg::RedisMsg;
use crate::kernel::collections::VecMap;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::presentation::narration::redis_locks::redlock_client::{RedlockSaw, Validity, Verdict};
use crate::protocols::job::{plans_job, At, JobCtx, JobRunner, JobTimer, LockClient, StepGate, Turn};
use crate::protocols::lease::lease_msg::WriteCheck;

pub use crate::protocols::job::Phase;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedlockPlan {
    /// The lock and the job, as every Redis lock client has them.
    pub job: JobPlan,
    pub masters: Vec<NodeId>,
    /// How long it waits for any one master.
    pub master_timeout_ms: u64,
    pub retry_jitter_ms: u64,
}

plans_job!(RedlockPlan);

impl RedlockPlan {
    pub fn quorum(&self) -> usize {
        self.masters.len() / 2 + 1
    }

    /// The clock-drift allowance of the algorithm: 1% of the TTL plus 2 ms.
    pub fn drift_ms(&self) -> u64 {
        self.job.ttl_ms / 100 + 2
    }
}

/// A Redlock client: the job runner with a lock on a majority of masters.
pub type RedlockClient = JobRunner<RedlockLock>;
pub type RedlockTimer = JobTimer<MasterTimeout>;

/// No answer from one master for this attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasterTimeout {
    pub master: NodeId,
    pub name: String,
    pub attempt: u32,
}

/// A lock held on a majority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuorumLock {
    pub value: String,
    pub masters: Vec<NodeId>,
    /// Its own clock reading when the validity ends.
    pub deadline_local_us: u64,
}

/// The lock side of a Redlock client: this attempt's answers and the lock it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedlockLock {
    /// Its clock reading when this attempt's requests went out.
    started_local_us: u64,
    /// Each master's answer this attempt: `Some(ok)`, or `None` for a timeout.
    pub(crate) replies: VecMap<NodeId, Option<bool>>,
    pub held: Option<QuorumLock>,
    /// Every lock it took, with the masters that granted it.
    pub acquisitions: Vec<Vec<NodeId>>,
    /// Majorities it threw away because no validity was left.
    pub rejected_for_time: u32,
}

type Ctx<'a, 'b> = JobCtx<'a, 'b, RedlockLock>;

impl RedlockLock {
    fn master_timeout(ctx: &Ctx, job: &Job, master: NodeId) -> RedlockTimer {
        JobTimer::Lock(MasterTimeout {
            master,
            name: ctx.name(master).to_string(),
            attempt: job.attempt,
        })
    }

    fn decide_if_complete(&mut self, ctx: Ctx, plan: &RedlockPlan, job: &Job) -> Turn {
        if self.replies.len() < plan.masters.len() {
            return Turn::Stay;
        }
        let granted: Vec<NodeId> = self
            .replies
            .iter()
            .filter(|(_, r)| **r == Some(true))
            .map(|(m, _)| *m)
            .collect();
        let elapsed_ms = ctx.local_now_us.saturating_sub(self.started_local_us) / MS_US;
        let drift_ms = plan.drift_ms();
        let validity_ms = plan.job.ttl_ms as i64 - elapsed_ms as i64 - drift_ms as i64;
        let validity = Validity {
            ttl_ms: plan.job.ttl_ms,
            elapsed_ms,
            drift_ms,
            validity_ms,
        };
        let verdict = if granted.len() < plan.quorum() {
            Verdict::Short {
                quorum: plan.quorum(),
            }
        } else if validity_ms > 0 {
            Verdict::Won(validity)
        } else {
            Verdict::TooLate(validity)
        };
        let names: Vec<&str> = granted.iter().map(|n| ctx.name(*n)).collect();
        ctx.note(RedlockSaw::Counted {
            me: ctx.me(),
            granted: &names,
            masters: plan.masters.len(),
            verdict,
        });
        if let Verdict::Won(_) = verdict {
            self.held = Some(QuorumLock {
                value: job.value.clone(),
                masters: granted.clone(),
                deadline_local_us: ctx.local_now_us + validity_ms as u64 * MS_US,
            });
            self.acquisitions.push(granted);
            return Turn::Granted;
        }
        if let Verdict::TooLate(_) = verdict {
            self.rejected_for_time += 1;
        }
        Self::unlock_all(ctx, plan, job);
        Turn::BackOff
    }

    fn unlock_all(ctx: Ctx, plan: &RedlockPlan, job: &Job) {
        for m in &plan.masters {
            ctx.send(
                *m,
                RedisMsg::CompareAndDelete {
                    key: plan.job.key.clone(),
                    value: job.value.clone(),
                },
            );
        }
    }
}

impl LockClient for RedlockLock {
    type Plan = RedlockPlan;
    type Timer = MasterTimeout;
    type Reply = RedisMsg;
    /// Each attempt draws a fresh lock value, as many as the plan's `max_attempts`.
    const BOUNDED: bool = true;

    fn recover(_plan: &RedlockPlan, _durable: &JobDurable) -> Self {
        RedlockLock::default()
    }

    fn request(&mut self, ctx: Ctx, at: At<'_, Self>) {
        let At { plan, job, .. } = at;
        self.started_local_us = ctx.local_now_us;
        self.replies.clear();
        ctx.note(RedlockSaw::Asks {
            me: ctx.me(),
            masters: plan.masters.len(),
            key: &plan.job.key,
            value: &job.value,
            attempt: job.attempt,
            quorum: plan.quorum(),
            timeout_ms: plan.master_timeout_ms,
        });
        for m in &plan.masters {
            ctx.send(
                *m,
                RedisMsg::Set {
                    key: plan.job.key.clone(),
                    value: job.value.clone(),
                    nx: true,
                    px_ms: plan.job.ttl_ms,
                    incr: None,
                },
            );
            let timeout = Self::master_timeout(&ctx, job, *m);
            ctx.set_timer(timeout, plan.master_timeout_ms * MS_US);
        }
    }

    fn on_reply(&mut self, ctx: Ctx, at: At<'_, Self>, from: NodeId, msg: RedisMsg) -> Turn {
        let At { plan, job, phase } = at;
        match msg {
            RedisMsg::SetReply { ok, .. }
                if *phase == Phase::Acquiring
                    && plan.masters.contains(&from)
                    && !self.replies.contains_key(&from) =>
            {
                self.replies.insert(from, Some(ok));
                let timeout = Self::master_timeout(&ctx, job, from);
                ctx.cancel_timer(timeout);
                self.decide_if_complete(ctx, plan, job)
            }
            _ => Turn::Stay,
        }
    }

    fn on_timer(&mut self, ctx: Ctx, at: At<'_, Self>, timer: MasterTimeout) -> Turn {
        let At { plan, job, phase } = at;
        if *phase != Phase::Acquiring
            || timer.attempt != job.attempt
            || self.replies.contains_key(&timer.master)
        {
            return Turn::Stay;
        }
        self.replies.insert(timer.master, None);
        self.decide_if_complete(ctx, plan, job)
    }

    fn retry_after_us(&mut self, ctx: Ctx, plan: &RedlockPlan) -> u64 {
        let jitter_us = between_us(ctx.rng, 0, plan.retry_jitter_ms * MS_US);
        plan.job.retry_ms * MS_US + jitter_us
    }

    fn before_step(&mut self, ctx: Ctx, at: At<'_, Self>, step: u32) -> StepGate {
        let At { plan, job, .. } = at;
        let Some(lock) = &self.held else {
            return StepGate::Skip;
        };
        let now = ctx.local_now_us;
        if now >= lock.deadline_local_us {
            ctx.note(RedlockSaw::ValidityOver { me: ctx.me(), step });
            Self::unlock_all(ctx, plan, job);
            self.held = None;
            return StepGate::OutOfTime;
        }
        ctx.note(RedlockSaw::ValidityLeft {
            me: ctx.me(),
            step,
            left_ms: (lock.deadline_local_us - now) / MS_US,
        });
        StepGate::Go
    }

    fn fence(&self, ctx: Ctx, step: u32) -> (FencingToken, WriteCheck) {
        ctx.note(RedlockSaw::SendsDebit { me: ctx.me(), step });
        (FencingToken(0), WriteCheck::Unfenced)
    }

    fn release(&mut self, ctx: Ctx, at: At<'_, Self>) -> bool {
        let At { plan, job, .. } = at;
        ctx.note(RedlockSaw::Unlocks { me: ctx.me() });
        Self::unlock_all(ctx, plan, job);
        self.held = None;
        false
    }

    fn holds(&self) -> bool {
        self.held.is_some()
    }
}
