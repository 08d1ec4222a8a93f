//! Getting, keeping and giving up the right to run the job: the lease (acquire, renew on a
//! heartbeat, back off, release) or one of the alternatives (a claim in the job table, a
//! partition), and stopping when that right is gone.

use super::{Belief, Coordination, LeaseTimer, LeaseWorker, OnReject, Phase, StopReason};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::Ctx;
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::protocols::lease::lease_msg::{seconds, LeaseMsg};

impl LeaseWorker {
    /// The job fired: make sure this copy is the one to run it.
    pub(super) fn coordinate(&mut self, ctx: &mut Ctx<'_, Self>) {
        match self.plan.coordination {
            Coordination::Lease => self.acquire(ctx),
            Coordination::None => {
                ctx.note(format!(
                    "{}'s job fires. Nothing checks whether another copy is already doing it.",
                    ctx.me()
                ));
                self.run_unguarded(ctx);
            }
            Coordination::UniqueInsert => {
                ctx.note(format!(
                    "{} claims the job by inserting its key; the primary key lets only one insert win.",
                    ctx.me()
                ));
                self.phase = Phase::Acquiring;
                let key = self.plan.job_key.clone();
                self.ask(ctx, LeaseMsg::InsertJobRow { key });
            }
            Coordination::ConditionalClaim => {
                ctx.note(format!(
                    "{} claims the job with a conditional update: pending → running.",
                    ctx.me()
                ));
                self.phase = Phase::Acquiring;
                let key = self.plan.job_key.clone();
                self.ask(ctx, LeaseMsg::ClaimJob { key });
            }
            Coordination::Partition { owns: true } => {
                ctx.note(format!(
                    "Account work for {} is routed only to {}: no one else will ever see it.",
                    self.plan.job_key,
                    ctx.me()
                ));
                self.run_unguarded(ctx);
            }
            Coordination::Partition { owns: false } => {
                ctx.note(format!(
                    "{} is not the consumer for {}; the job never reaches it.",
                    ctx.me(),
                    self.plan.job_key
                ));
                self.phase = Phase::Stopped(StopReason::NotMine);
            }
        }
    }

    /// Sends to the lease store or job table (a worker that asks nobody has none).
    fn ask(&self, ctx: &mut Ctx<'_, Self>, msg: LeaseMsg) {
        if let Some(authority) = self.authority {
            ctx.send(authority, msg);
        }
    }

    /// Runs the job from step 1 with no lease to lose: nothing, or the job table, decided.
    fn run_unguarded(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.belief = Some(Belief {
            token: FencingToken(0),
            expires_local_us: u64::MAX,
        });
        self.start_step(ctx, 1);
    }

    fn acquire_msg(&self) -> LeaseMsg {
        LeaseMsg::Acquire {
            lease: self.plan.lease.clone(),
            ttl_ms: self.plan.ttl_ms,
        }
    }

    pub(super) fn acquire(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::Acquiring;
        self.acquire_attempts += 1;
        ctx.note(if self.acquire_attempts == 1 {
            format!(
                "{}'s job fires. It asks the lease store for {} before doing anything.",
                ctx.me(),
                self.plan.lease
            )
        } else {
            format!(
                "{} asks for {} again (attempt {}).",
                ctx.me(),
                self.plan.lease,
                self.acquire_attempts
            )
        });
        self.acquire_sent_local_us = ctx.local_now_us;
        self.ask(ctx, self.acquire_msg());
    }

    /// The heartbeat: the same statement as the acquire, by the same owner.
    pub(super) fn renew(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(format!(
            "{} asks the store to extend {}: same statement, same owner.",
            ctx.me(),
            self.plan.lease
        ));
        self.ask(ctx, self.acquire_msg());
        self.acquire_sent_local_us = ctx.local_now_us;
    }

    pub(super) fn granted(&mut self, ctx: &mut Ctx<'_, Self>, token: FencingToken, ttl_ms: u64) {
        let expires_local_us = self.acquire_sent_local_us + ttl_ms * MS_US;
        match (self.belief, &self.phase) {
            (Some(old), _) => {
                // A renewal. With the renewal bug the token changes under the worker's feet.
                self.belief = Some(Belief {
                    token,
                    expires_local_us,
                });
                if old.token != token && self.plan.stamp_before_progress {
                    ctx.note(format!(
                        "{}'s renewal came back with token {token} instead of {}: the lease lapsed and was granted again, so another worker may have held it meanwhile. {} treats this as a takeover: it drops the step under way, stamps the row with {token} and reads the progress again.",
                        ctx.me(),
                        old.token,
                        ctx.me()
                    ));
                    if let Phase::Computing { step, .. } = self.phase {
                        ctx.cancel_timer(LeaseTimer::StepDone { step });
                    }
                    self.stamp(ctx, token);
                } else if old.token != token {
                    ctx.note(format!(
                        "{}'s renewal came back with token {token} instead of {}.",
                        ctx.me(),
                        old.token
                    ));
                } else {
                    ctx.note(format!(
                        "{}'s renewal went through: token {token} again, and by its own clock another {}.",
                        ctx.me(),
                        seconds(ttl_ms)
                    ));
                }
                if self.plan.touch_on_heartbeat {
                    ctx.send(self.sink_node, LeaseMsg::Touch { token });
                }
                ctx.set_timer(LeaseTimer::Heartbeat, self.plan.heartbeat_ms * MS_US);
            }
            (None, Phase::Acquiring) => {
                self.belief = Some(Belief {
                    token,
                    expires_local_us,
                });
                ctx.note(format!(
                    "{} holds the lease with token {token}. By its own clock it has {} — {}.",
                    ctx.me(),
                    seconds(ttl_ms),
                    if self.plan.heartbeat_ms == 0 {
                        "it will not renew".to_string()
                    } else {
                        format!("it will renew every {}", seconds(self.plan.heartbeat_ms))
                    }
                ));
                if self.plan.heartbeat_ms > 0 {
                    ctx.set_timer(LeaseTimer::Heartbeat, self.plan.heartbeat_ms * MS_US);
                }
                if std::mem::take(&mut self.resuming) {
                    ctx.note(format!(
                        "{} has the lease again (token {token}) and resumes its own job at step {} — without asking what happened meanwhile.",
                        ctx.me(),
                        self.next_step
                    ));
                    let step = self.next_step;
                    self.start_step(ctx, step);
                } else {
                    self.stamp_or_read_progress(ctx, token);
                }
            }
            _ => {}
        }
    }

    /// After a fresh grant: stamp the row first if the plan fences on takeover, then read the
    /// progress if it checks it, then work.
    fn stamp_or_read_progress(&mut self, ctx: &mut Ctx<'_, Self>, token: FencingToken) {
        if self.plan.stamp_before_progress {
            ctx.note(format!(
                "Before asking how far the job got, {} stamps the ledger row with token {token}. Once the row carries {token}, no older holder's write can land after the progress read.",
                ctx.me()
            ));
            self.stamp(ctx, token);
        } else {
            self.read_progress_or_start(ctx);
        }
    }

    /// Stamps the row with `token` in one statement that answers with the row's token.
    fn stamp(&mut self, ctx: &mut Ctx<'_, Self>, token: FencingToken) {
        self.phase = Phase::Stamping;
        ctx.send(self.sink_node, LeaseMsg::Stamp { token });
    }

    /// The row's token, as the stamp left it.
    pub(super) fn stamp_read(&mut self, ctx: &mut Ctx<'_, Self>, last_token: FencingToken) {
        let Some(belief) = self.belief else { return };
        let me = ctx.me();
        let mine = belief.token;
        if last_token == mine {
            ctx.note(format!(
                "The row carries token {mine}: every older holder is fenced out, so the progress {me} reads now cannot change behind its back."
            ));
            self.read_progress_or_start(ctx);
        } else if last_token < mine {
            ctx.note(format!(
                "The row shows token {last_token}, not {mine}: the stamp did not take. {me} stamps again."
            ));
            self.stamp(ctx, mine);
        } else {
            ctx.note(format!(
                "The row already carries token {last_token}, newer than {me}'s {mine}: a newer holder owns the job. {me} stops."
            ));
            self.stop(ctx, StopReason::Rejected);
        }
    }

    fn read_progress_or_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.plan.check_progress {
            self.phase = Phase::ReadingProgress;
            ctx.send(self.sink_node, LeaseMsg::ReadProgress);
        } else {
            let step = self.next_step;
            self.start_step(ctx, step);
        }
    }

    pub(super) fn denied(&mut self, ctx: &mut Ctx<'_, Self>, holder: NodeId) {
        if self.belief.is_some() && self.plan.on_reject == OnReject::ReacquireAndContinue {
            let step = match self.phase {
                Phase::Checking { step } | Phase::Computing { step, .. } | Phase::Writing { step, .. } => {
                    step
                }
                _ => self.next_step,
            };
            ctx.note(format!(
                "{}'s renewal came back empty — and it treats that as a hiccup: it will get the lease back and carry on from step {step}.",
                ctx.me()
            ));
            if let Phase::Computing { step, .. } = self.phase {
                ctx.cancel_timer(LeaseTimer::StepDone { step });
            }
            self.resume_later(ctx, step);
        } else if self.belief.is_some() {
            ctx.note(format!(
                "{}'s renewal came back empty: the lease belongs to someone else (node {}). It stops immediately.",
                ctx.me(),
                holder.0
            ));
            self.stop(ctx, StopReason::LostLease);
        } else if self.phase == Phase::Acquiring {
            if self.plan.retry_ms == 0 {
                ctx.note(format!(
                    "{} backs off: another copy holds the lease, so it is running the job right now.",
                    ctx.me()
                ));
                self.phase = Phase::GaveUp;
            } else {
                let wait_ms = self.back_off(ctx) / MS_US;
                ctx.note(if self.plan.retry_jitter_ms == 0 {
                    format!(
                        "{} backs off and will ask again in {}.",
                        ctx.me(),
                        seconds(wait_ms)
                    )
                } else {
                    format!(
                        "{} backs off and will ask again in {}: {} plus {} of random jitter.",
                        ctx.me(),
                        seconds(wait_ms),
                        seconds(self.plan.retry_ms),
                        seconds(wait_ms - self.plan.retry_ms)
                    )
                });
            }
        }
    }

    /// The mistake of treating a lost lease as transient: drop the belief, and get the lease
    /// back later to carry on from `step`.
    pub(super) fn resume_later(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.belief = None;
        self.next_step = step;
        self.resuming = true;
        ctx.cancel_timer(LeaseTimer::Heartbeat);
        self.back_off(ctx);
    }

    /// Schedules the next attempt; returns the wait (µs by its own clock).
    fn back_off(&mut self, ctx: &mut Ctx<'_, Self>) -> u64 {
        self.phase = Phase::BackingOff;
        let jitter_us = between_us(ctx.rng, 0, self.plan.retry_jitter_ms * MS_US);
        let wait_us = self.plan.retry_ms * MS_US + jitter_us;
        ctx.set_timer(LeaseTimer::Retry, wait_us);
        wait_us
    }

    /// The job table's answer to a claim: one row means the job is this worker's.
    pub(super) fn claimed(&mut self, ctx: &mut Ctx<'_, Self>, rows: u32) {
        if rows == 1 {
            ctx.note(format!("{} got one row: the job is {}'s.", ctx.me(), ctx.me()));
            self.run_unguarded(ctx);
        } else {
            ctx.note(format!(
                "{} got zero rows: someone else already owns this job, so it does nothing.",
                ctx.me()
            ));
            self.phase = Phase::GaveUp;
        }
    }

    /// Whether this worker lets go of its lease when it is done: it took one, and its plan
    /// releases.
    pub(super) fn releases(&self) -> bool {
        self.plan.coordination == Coordination::Lease && self.plan.release.is_some()
    }

    pub(super) fn release(&mut self, ctx: &mut Ctx<'_, Self>) {
        let Some(mode) = self.plan.release else { return };
        self.phase = Phase::Releasing;
        let lease = self.plan.lease.clone();
        self.ask(ctx, LeaseMsg::Release { lease, mode });
    }

    pub(super) fn released(&mut self, ctx: &mut Ctx<'_, Self>, deleted: bool) {
        ctx.note(if deleted {
            format!("{} has let go of {}.", ctx.me(), self.plan.lease)
        } else {
            format!(
                "{}'s release removed nothing: {} is no longer its lease.",
                ctx.me(),
                self.plan.lease
            )
        });
        self.phase = match self.stop_reason.clone() {
            Some(reason) if !self.finished => Phase::Stopped(reason),
            _ => Phase::Done,
        };
    }

    /// Stops the job early; a `finally` block still releases the lease, unless it is
    /// already known to be someone else's.
    pub(super) fn stop(&mut self, ctx: &mut Ctx<'_, Self>, reason: StopReason) {
        self.belief = None;
        ctx.cancel_timer(LeaseTimer::Heartbeat);
        if let Phase::Computing { step, .. } = self.phase {
            ctx.cancel_timer(LeaseTimer::StepDone { step });
        }
        let finally_release = self.plan.release_in_finally && reason != StopReason::LostLease;
        self.stop_reason = Some(reason.clone());
        if finally_release && self.releases() {
            ctx.note(format!(
                "{}'s finally block releases the lease on the way out.",
                ctx.me()
            ));
            self.release(ctx);
        } else {
            self.phase = Phase::Stopped(reason);
        }
    }
}
