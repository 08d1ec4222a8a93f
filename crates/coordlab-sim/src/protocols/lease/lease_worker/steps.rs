//! The job itself, step by step: how far it got, the token check in application code, the
//! work of a step, its write (to the ledger or the rail) and what the answer means.

use super::{
    Coordination, Fencing, LeaseTimer, LeaseWorker, OnReject, Phase, Sink, StopReason, WorkerDurable,
};
use crate::kernel::ids::FencingToken;
use crate::kernel::participant::Ctx;
use crate::kernel::time::MS_US;
use crate::protocols::lease::lease_msg::{seconds, LeaseMsg, RejectReason, WriteCheck};

impl LeaseWorker {
    pub(super) fn start_step(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        let Some(belief) = self.belief else { return };
        let margin = self
            .plan
            .finish_margin_ms
            .filter(|_| self.plan.check_clock_before_step);
        if let Some(margin_ms) = margin {
            if !self.room_for_step(ctx, step, belief.expires_local_us, margin_ms) {
                return;
            }
        } else if self.plan.check_clock_before_step && ctx.local_now_us >= belief.expires_local_us {
            ctx.note(format!(
                "By {}'s own clock its lease has run out, so it stops before step {step}.",
                ctx.me()
            ));
            self.stop(ctx, StopReason::ExpiredByOwnClock);
            return;
        } else if self.plan.check_clock_before_step && self.plan.coordination == Coordination::Lease {
            ctx.note(format!(
                "By {}'s own clock {} of its lease remain, so it starts step {step}.",
                ctx.me(),
                seconds((belief.expires_local_us - ctx.local_now_us) / MS_US)
            ));
        } else if margin.is_none() {
            ctx.note(format!("{} starts step {step}.", ctx.me()));
        }
        if self.plan.fencing == Fencing::AppCheck && self.plan.coordination == Coordination::Lease {
            self.phase = Phase::Checking { step };
            ctx.send(self.sink_node, LeaseMsg::ReadToken);
        } else {
            self.compute(ctx, step, belief.token);
        }
    }

    /// The margin rule: start `step` only if, by the worker's own clock, it would end more
    /// than `margin_ms` before the lease does; otherwise stop and leave the job to whoever
    /// holds the lease next. Says which, with the numbers.
    fn room_for_step(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        step: u32,
        expires_local_us: u64,
        margin_ms: u64,
    ) -> bool {
        let left_us = expires_local_us.saturating_sub(ctx.local_now_us);
        let step_us = self.plan.step_ms * MS_US;
        let (me, left, took) = (ctx.me(), seconds(left_us / MS_US), seconds(self.plan.step_ms));
        let margin = seconds(margin_ms);
        let spare_us = left_us.saturating_sub(step_us);
        if left_us > step_us && spare_us > margin_ms * MS_US {
            ctx.note(format!(
                "By {me}'s own clock {left} of its lease remain: step {step} ({took}) would end {} before the lease does, more than its {margin} safety margin, so it starts.",
                seconds(spare_us / MS_US)
            ));
            return true;
        }
        let why = if left_us <= step_us {
            "would not end in time".to_string()
        } else {
            format!(
                "would end only {} before the lease does, inside its {margin} safety margin",
                seconds(spare_us / MS_US)
            )
        };
        ctx.note(format!(
            "By {me}'s own clock {left} of its lease remain: step {step} ({took}) {why}, so {me} stops and leaves the rest to the next holder."
        ));
        self.stop(ctx, StopReason::MarginReached);
        false
    }

    /// The answer to an application-code token check: the ledger's highest token.
    pub(super) fn token_read(&mut self, ctx: &mut Ctx<'_, Self>, last_token: FencingToken) {
        let Phase::Checking { step } = self.phase else {
            return;
        };
        let Some(belief) = self.belief else { return };
        if last_token > belief.token {
            ctx.note(format!(
                "{} reads last_token {last_token}, newer than its {}: its application check says stop.",
                ctx.me(),
                belief.token
            ));
            self.stop(ctx, StopReason::AppCheckCaught);
        } else {
            ctx.note(format!(
                "{} reads last_token {last_token}; its own token is {}, so the check in application code passes. The write comes later, as a separate statement.",
                ctx.me(),
                belief.token
            ));
            self.compute(ctx, step, belief.token);
        }
    }

    /// How far the job got, read after a fresh grant: skip what is done.
    pub(super) fn progress(&mut self, ctx: &mut Ctx<'_, Self>, steps_done: u32) {
        if steps_done >= self.plan.steps {
            ctx.note(format!(
                "The job is already complete ({steps_done} steps recorded): {} has nothing to do.",
                ctx.me()
            ));
            self.step_finished(ctx, self.plan.steps);
        } else {
            if steps_done > 0 {
                ctx.note(format!(
                    "{steps_done} step(s) are already recorded: {} takes over the job at step {}.",
                    ctx.me(),
                    steps_done + 1
                ));
            }
            self.start_step(ctx, steps_done + 1);
        }
    }

    fn compute(&mut self, ctx: &mut Ctx<'_, Self>, step: u32, token: FencingToken) {
        self.phase = Phase::Computing { step, token };
        ctx.set_timer(LeaseTimer::StepDone { step }, self.plan.step_ms * MS_US);
    }

    pub(super) fn write(&mut self, ctx: &mut Ctx<'_, Self>, step: u32, token: FencingToken) {
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
                match self.plan.run_key.clone() {
                    Some(key) if step == self.plan.steps => LeaseMsg::WriteWithRunKey {
                        step,
                        amount,
                        token,
                        check,
                        key,
                    },
                    _ => LeaseMsg::Write {
                        step,
                        amount,
                        token,
                        check,
                    },
                }
            }
        };
        let what = match &msg {
            LeaseMsg::Pay {
                idempotency_key: Some(key),
                ..
            } => format!("tells the rail to pay ₹{amount}, with idempotency key {key}"),
            LeaseMsg::WriteWithRunKey { key, .. } => format!(
                "sends one transaction: the insert of the run key {key} into job_run and the debit, to commit together or not at all"
            ),
            LeaseMsg::Pay { .. } => {
                format!("tells the rail to pay ₹{amount}; the instruction carries no key and no token")
            }
            LeaseMsg::Write {
                check: WriteCheck::TokenPredicate,
                ..
            } => format!("sends the debit; token {token} is part of the write's WHERE clause"),
            _ if token.0 == 0 => "sends the debit, which carries no token".to_string(),
            _ if self.plan.fencing == Fencing::FirstWriteOnly => format!(
                "sends the debit carrying token {token}. Only step 1's write asked the ledger to check the token; this one does not"
            ),
            _ => format!(
                "sends the debit carrying token {token}, but the write does not ask the ledger to check it"
            ),
        };
        ctx.note(format!("{} has done step {step}'s work and {what}.", ctx.me()));
        ctx.send(self.sink_node, msg);
    }

    /// The ledger's answer to a step's write.
    pub(super) fn write_result(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        step: u32,
        accepted: bool,
        reason: Option<RejectReason>,
    ) {
        if !self.is_writing(step) {
            return;
        }
        if accepted {
            self.step_finished(ctx, step);
            return;
        }
        if let Some(RejectReason::RunKeyTaken { key }) = &reason {
            ctx.note(format!(
                "The run key {key} is already in job_run: this run happened. Nothing of {}'s transaction was kept, and it lets go without trying again.",
                ctx.me()
            ));
            self.already_run(ctx);
            return;
        }
        // The newer token may be the worker's own: a renewal that changed the token (the
        // renewal bug) while this step's write still carried the old one.
        let self_fenced = match (&reason, self.belief) {
            (Some(RejectReason::StaleToken { token: sent, highest }), Some(b))
                if b.token == *highest && sent != highest =>
            {
                Some((*sent, *highest))
            }
            _ => None,
        };
        let why = reason.map(|r| r.text()).unwrap_or_default();
        let me = ctx.me();
        match self.plan.on_reject {
            OnReject::Abort => {
                ctx.note(match self_fenced {
                    Some((sent, own)) => format!(
                        "{me}'s write was refused ({why}). The newer token is {me}'s own: its renewal came back with {own} while this step still carried {sent}. It has fenced itself out, and since a refusal looks the same as a real takeover, it aborts."
                    ),
                    None => format!(
                        "{me}'s write was refused ({why}). That is proof another worker owns the lease now: {me} aborts — no retry, no compensation."
                    ),
                });
                self.stop(ctx, StopReason::Rejected);
            }
            OnReject::ReacquireAndContinue => {
                ctx.note(format!(
                    "{me}'s write was refused ({why}) — and it treats that as a transient error: it will get the lease back and carry on from step {step}."
                ));
                self.resume_later(ctx, step);
            }
            OnReject::SkipStep => {
                ctx.note(format!(
                    "{me}'s write was refused ({why}). Its job loop logs step {step} as failed and goes on to the next step, as if the refusal were about that one write rather than about who owns the job."
                ));
                self.step_finished(ctx, step);
            }
        }
    }

    /// The run happened elsewhere: drop the lease, and release it if the plan releases.
    fn already_run(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.belief = None;
        ctx.cancel_timer(LeaseTimer::Heartbeat);
        self.stop_reason = Some(StopReason::AlreadyRun);
        if self.releases() {
            self.release(ctx);
        } else {
            self.phase = Phase::Stopped(StopReason::AlreadyRun);
        }
    }

    /// The rail's answer to a step's payment instruction.
    pub(super) fn pay_result(&mut self, ctx: &mut Ctx<'_, Self>, step: u32, applied: bool) {
        if !self.is_writing(step) {
            return;
        }
        if !applied {
            ctx.note(format!(
                "The rail answers that step {step} was a replay; for {} the step is done either way.",
                ctx.me()
            ));
        }
        self.step_finished(ctx, step);
    }

    fn is_writing(&self, step: u32) -> bool {
        matches!(self.phase, Phase::Writing { step: s, .. } if s == step)
    }

    fn step_finished(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        if step < self.plan.steps {
            self.start_step(ctx, step + 1);
            return;
        }
        self.finished = true;
        ctx.persist(WorkerDurable { finished: true });
        ctx.cancel_timer(LeaseTimer::Heartbeat);
        self.belief = None;
        ctx.note(format!(
            "{} has finished all {} step(s) of the job.",
            ctx.me(),
            self.plan.steps
        ));
        if self.releases() {
            self.release(ctx);
        } else {
            self.phase = Phase::Done;
        }
    }
}
