//! The job's steps as this worker does them: its checks before a step (its own clock, a
//! safety margin, the token in application code), a step's write (to the ledger or the rail)
//! and the rail's answer. (What a refused write means is in `lease`: it is about the lease.)

use super::lease::Ctx;
use super::{Coordination, Fencing, LeaseLock, Sink, StopReason, WorkerConfig};
use crate::kernel::ids::FencingToken;
use crate::kernel::time::MS_US;
use crate::presentation::narration::lease::lease_worker::{LeaseWorkerSaw, StepSpare, StepWrite};
use crate::protocols::job::{At, Phase, StepGate, Turn};
use crate::protocols::lease::lease_msg::{LeaseMsg, WriteCheck};

impl LeaseLock {
    /// Whether step `step` may start: what its own clock and its margin say, and whether it
    /// first checks its token in application code.
    pub(super) fn start_step(&mut self, ctx: Ctx, at: At<'_, Self>, step: u32) -> StepGate {
        let Some(belief) = self.belief else {
            return StepGate::Skip;
        };
        let plan = &at.plan.plan;
        let margin = plan.finish_margin_ms.filter(|_| plan.check_clock_before_step);
        if let Some(margin_ms) = margin {
            if let Some(stop) = self.room_for_step(ctx, at, step, belief.expires_local_us, margin_ms) {
                return StepGate::Then(stop);
            }
        } else if plan.check_clock_before_step && ctx.local_now_us >= belief.expires_local_us {
            ctx.note(LeaseWorkerSaw::OwnClockRanOut { me: ctx.me(), step });
            return StepGate::Then(self.stop(ctx, at, StopReason::ExpiredByOwnClock));
        } else if plan.check_clock_before_step && plan.coordination() == Coordination::Lease {
            ctx.note(LeaseWorkerSaw::OwnClockLeaves {
                me: ctx.me(),
                left_us: belief.expires_local_us - ctx.local_now_us,
                step,
            });
        } else if margin.is_none() {
            ctx.note(LeaseWorkerSaw::StartsStep { me: ctx.me(), step });
        }
        if plan.fencing == Fencing::AppCheck && plan.coordination() == Coordination::Lease {
            ctx.send(at.plan.sink_node, LeaseMsg::ReadToken);
            StepGate::Check
        } else {
            StepGate::Go
        }
    }

    /// The margin rule: start `step` only if, by the worker's own clock, it would end more
    /// than `margin_ms` before the lease does; otherwise stop and leave the job to whoever
    /// holds the lease next (where the job goes then). Says which, with the numbers.
    fn room_for_step(
        &mut self,
        ctx: Ctx,
        at: At<'_, Self>,
        step: u32,
        expires_local_us: u64,
        margin_ms: u64,
    ) -> Option<Turn> {
        let step_ms = at.plan.plan.step_ms;
        let left_us = expires_local_us.saturating_sub(ctx.local_now_us);
        let step_us = step_ms * MS_US;
        let spare_us = left_us.saturating_sub(step_us);
        let spare = if left_us <= step_us {
            StepSpare::NotInTime
        } else if spare_us > margin_ms * MS_US {
            StepSpare::Enough(spare_us)
        } else {
            StepSpare::InsideMargin(spare_us)
        };
        ctx.note(LeaseWorkerSaw::MarginRule {
            me: ctx.me(),
            left_us,
            step,
            step_ms,
            margin_ms,
            spare,
        });
        match spare {
            StepSpare::Enough(_) => None,
            _ => Some(self.stop(ctx, at, StopReason::MarginReached)),
        }
    }

    /// The answer to an application-code token check: the ledger's highest token.
    pub(super) fn token_read(&mut self, ctx: Ctx, at: At<'_, Self>, last_token: FencingToken) -> Turn {
        let Phase::Checking { step } = *at.phase else {
            return Turn::Stay;
        };
        let Some(belief) = self.belief else {
            return Turn::Stay;
        };
        if last_token > belief.token {
            ctx.note(LeaseWorkerSaw::AppCheckSaysStop {
                me: ctx.me(),
                last_token,
                mine: belief.token,
            });
            self.stop(ctx, at, StopReason::AppCheckCaught)
        } else {
            ctx.note(LeaseWorkerSaw::AppCheckPasses {
                me: ctx.me(),
                last_token,
                mine: belief.token,
            });
            Turn::Checked(step)
        }
    }

    /// Sends step `step`'s write, carrying the token the step started with, and says what
    /// it carries.
    pub(super) fn send_write(&mut self, ctx: Ctx, plan: &WorkerConfig, step: u32) {
        let (token, p) = (self.step_token, &plan.plan);
        let amount = p.amount_per_step;
        let msg = match p.sink() {
            Sink::Rail { idempotency_key } => LeaseMsg::Pay {
                step,
                amount,
                idempotency_key: idempotency_key.then(|| format!("{}#{step}", p.job_key)),
            },
            Sink::Resource => {
                let check = match p.fencing {
                    Fencing::WritePredicate => WriteCheck::TokenPredicate,
                    Fencing::FirstWriteOnly if step == 1 => WriteCheck::TokenPredicate,
                    _ => WriteCheck::Unfenced,
                };
                match p.run_key().cloned() {
                    Some(key) if step == p.steps => LeaseMsg::WriteWithRunKey {
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
        let write = match &msg {
            LeaseMsg::Pay {
                idempotency_key: Some(key),
                ..
            } => StepWrite::PayWithKey { amount, key },
            LeaseMsg::WriteWithRunKey { key, .. } => StepWrite::WithRunKey { key },
            LeaseMsg::Pay { .. } => StepWrite::PayWithoutKey { amount },
            LeaseMsg::Write {
                check: WriteCheck::TokenPredicate,
                ..
            } => StepWrite::Fenced { token },
            _ if token.0 == 0 => StepWrite::NoToken,
            _ if p.fencing == Fencing::FirstWriteOnly => StepWrite::FencedFirstOnly { token },
            _ => StepWrite::Unchecked { token },
        };
        ctx.note(LeaseWorkerSaw::StepWritten {
            me: ctx.me(),
            step,
            write,
        });
        ctx.send(plan.sink_node, msg);
    }

    /// The rail's answer to a step's payment instruction.
    pub(super) fn pay_result(&mut self, ctx: Ctx, at: At<'_, Self>, step: u32, applied: bool) -> Turn {
        if *at.phase != (Phase::Writing { step }) {
            return Turn::Stay;
        }
        if !applied {
            ctx.note(LeaseWorkerSaw::RailSaysReplay { step, me: ctx.me() });
        }
        Turn::Written(step)
    }
}
