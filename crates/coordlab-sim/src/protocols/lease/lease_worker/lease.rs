//! Getting, keeping and giving up the right to run the job: the lease (acquire, renew on a
//! heartbeat, back off, release) or one of the alternatives (a claim in the job table, a
//! partition), stopping when that right is gone, and what arrives from the lease store.

use super::{Belief, Coordination, LeaseLock, LeaseTimer, OnReject, Sink, StopReason, WorkerConfig};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::presentation::narration::lease::lease_worker::{ClaimBy, LeaseWorkerSaw};
use crate::protocols::job::{At, JobCtx, JobTimer, LeaseMsgOnly, LockClient, Phase, StepGate, Turn};
use crate::protocols::lease::lease_msg::{LeaseMsg, RejectReason, WriteCheck};
use crate::protocols::redis_locks::redis_job::{Job, JobDurable, Next};

pub(super) type Ctx<'a, 'b> = JobCtx<'a, 'b, LeaseLock>;

impl LockClient for LeaseLock {
    type Plan = WorkerConfig;
    type Timer = LeaseTimer;
    type Reply = LeaseMsgOnly;
    const STAMPS: bool = true;
    const CHECKS: bool = true;

    fn recover(_plan: &WorkerConfig, _durable: &JobDurable) -> Self {
        LeaseLock {
            next_step: 1,
            ..LeaseLock::default()
        }
    }

    fn start(ctx: Ctx, plan: &WorkerConfig, job: &Job) {
        if job.finished {
            ctx.note(LeaseWorkerSaw::UpJobDone { me: ctx.me() });
            return;
        }
        ctx.note(LeaseWorkerSaw::UpJobScheduled { me: ctx.me() });
        job.start_after(ctx, plan.plan.start_after_ms, JobTimer::JobStart);
    }

    /// The job fired: make sure this copy is the one to run it.
    fn fire(&mut self, ctx: Ctx, at: At<'_, Self>) -> Turn {
        let plan = &at.plan.plan;
        let me = ctx.me();
        match plan.coordination() {
            Coordination::Lease => Turn::Acquire,
            Coordination::None => {
                ctx.note(LeaseWorkerSaw::FiresUnguarded { me });
                self.run_unguarded()
            }
            Coordination::UniqueInsert => claim_job(ctx, at.plan, ClaimBy::UniqueInsert, |key| {
                LeaseMsg::InsertJobRow { key }
            }),
            Coordination::ConditionalClaim => claim_job(ctx, at.plan, ClaimBy::ConditionalClaim, |key| {
                LeaseMsg::ClaimJob { key }
            }),
            Coordination::Partition { owns: true } => {
                ctx.note(LeaseWorkerSaw::RoutedOnlyHere {
                    job_key: &plan.job_key,
                    me,
                });
                self.run_unguarded()
            }
            Coordination::Partition { owns: false } => {
                ctx.note(LeaseWorkerSaw::NotTheConsumer {
                    me,
                    job_key: &plan.job_key,
                });
                self.stop_reason = Some(StopReason::NotMine);
                Turn::Stop
            }
        }
    }

    fn resume(ctx: Ctx, plan: &WorkerConfig, steps_done: u32) -> Next {
        plan.job.resume_saying(
            ctx,
            steps_done,
            |me| LeaseWorkerSaw::JobAlreadyComplete { steps_done, me }.into(),
            |me, step| LeaseWorkerSaw::TakesOverAt { steps_done, me, step }.into(),
        )
    }

    fn request(&mut self, ctx: Ctx, at: At<'_, Self>) {
        let plan = &at.plan.plan;
        ctx.note(LeaseWorkerSaw::AsksForLease {
            me: ctx.me(),
            lease: &plan.lease,
            attempt: at.job.attempt,
        });
        self.acquire_sent_local_us = ctx.local_now_us;
        ask(ctx, at.plan, acquire_msg(at.plan));
    }

    fn on_reply(&mut self, _ctx: Ctx, _at: At<'_, Self>, _from: NodeId, msg: LeaseMsgOnly) -> Turn {
        match msg {}
    }

    fn on_ledger(
        &mut self,
        ctx: Ctx,
        at: At<'_, Self>,
        from: NodeId,
        msg: LeaseMsg,
    ) -> Result<Turn, LeaseMsg> {
        let from_authority = Some(from) == at.plan.authority;
        let plan = &at.plan.plan;
        Ok(match msg {
            LeaseMsg::Granted { token, ttl_ms, .. } if from_authority => self.granted(ctx, at, token, ttl_ms),
            LeaseMsg::Denied { holder, .. } if from_authority => self.denied(ctx, at, holder),
            LeaseMsg::TokenIs { last_token } if *at.phase == Phase::Stamping => {
                self.stamp_read(ctx, at, last_token)
            }
            LeaseMsg::TokenIs { last_token } => self.token_read(ctx, at, last_token),
            // (A rail's answer and a claim's count only reach a worker that pays through a rail
            // or claims the job; asking its plan lets a bundle without either leave them out.)
            LeaseMsg::PayResult { step, applied } if matches!(plan.sink(), Sink::Rail { .. }) => {
                self.pay_result(ctx, at, step, applied)
            }
            LeaseMsg::RowsChanged { rows }
                if *at.phase == Phase::Acquiring && plan.coordination().needs_job_table() =>
            {
                self.claimed(ctx, rows)
            }
            LeaseMsg::Released { deleted, .. } if *at.phase == Phase::Releasing => {
                self.released(ctx, at, deleted)
            }
            msg => return Err(msg),
        })
    }

    fn on_timer(&mut self, ctx: Ctx, at: At<'_, Self>, LeaseTimer::Heartbeat: LeaseTimer) -> Turn {
        if self.belief.is_some() && at.plan.plan.heartbeat_ms > 0 {
            self.renew(ctx, at.plan);
        }
        Turn::Stay
    }

    /// The retry interval and its jitter; after a denied acquire it says how long it waits.
    fn retry_after_us(&mut self, ctx: Ctx, plan: &WorkerConfig) -> u64 {
        let plan = &plan.plan;
        let jitter_us = between_us(ctx.rng, 0, plan.retry_jitter_ms * MS_US);
        let wait_us = plan.retry_ms * MS_US + jitter_us;
        if std::mem::take(&mut self.says_wait) {
            let (me, wait_ms) = (ctx.me(), wait_us / MS_US);
            ctx.note(LeaseWorkerSaw::BacksOff {
                me,
                wait_ms,
                retry_ms: plan.retry_ms,
                jittered: plan.retry_jitter_ms != 0,
            });
        }
        wait_us
    }

    fn before_step(&mut self, ctx: Ctx, at: At<'_, Self>, step: u32) -> StepGate {
        self.start_step(ctx, at, step)
    }

    fn working(&mut self, _ctx: Ctx, _at: At<'_, Self>, _step: u32) {
        self.step_token = self.belief.map_or(FencingToken(0), |b| b.token);
    }

    fn fence(&self, _ctx: Ctx, _step: u32) -> (FencingToken, WriteCheck) {
        (self.step_token, WriteCheck::TokenPredicate)
    }

    fn write(&mut self, ctx: Ctx, at: At<'_, Self>, step: u32) -> Option<Next> {
        self.send_write(ctx, at.plan, step);
        None
    }

    /// What a refusal means depends on its plan: a run that happened, a takeover (abort), or
    /// (the mistakes) a hiccup to get the lease back from, or a failed step to skip.
    fn refused(
        &mut self,
        ctx: Ctx,
        at: At<'_, Self>,
        step: u32,
        reason: Option<RejectReason>,
    ) -> Option<Turn> {
        if let (Some(RejectReason::RunKeyTaken { key }), Some(_)) = (&reason, at.plan.plan.run_key()) {
            ctx.note(LeaseWorkerSaw::RunKeyTaken { key, me: ctx.me() });
            return Some(self.already_run(ctx, at.plan));
        }
        // The newer token may be the worker's own: a renewal that changed the token (the
        // renewal bug) while this step's write still carried the old one.
        let self_fenced = match (&reason, self.belief) {
            (
                Some(RejectReason::StaleToken {
                    token: sent,
                    highest,
                    by_writer,
                }),
                Some(b),
            ) if *by_writer && b.token == *highest && sent != highest => Some((*sent, *highest)),
            _ => None,
        };
        let why = reason.as_ref();
        let me = ctx.me();
        match at.plan.plan.on_reject {
            OnReject::Abort => {
                ctx.note(match self_fenced {
                    Some((sent, own)) => LeaseWorkerSaw::RefusedByOwnRenewal { me, why, own, sent },
                    None => LeaseWorkerSaw::RefusedAborts { me, why },
                });
                Some(self.stop(ctx, at, StopReason::Rejected))
            }
            OnReject::ReacquireAndContinue => {
                ctx.note(LeaseWorkerSaw::RefusedReacquires { me, why, step });
                Some(self.resume_later(ctx, step))
            }
            OnReject::SkipStep => {
                ctx.note(LeaseWorkerSaw::RefusedSkipsStep { me, why, step });
                None
            }
        }
    }

    /// The job is done: it drops the lease, and releases it if its plan does.
    fn release(&mut self, ctx: Ctx, at: At<'_, Self>) -> bool {
        ctx.cancel_timer(JobTimer::Lock(LeaseTimer::Heartbeat));
        self.belief = None;
        ctx.note(LeaseWorkerSaw::FinishedAllSteps {
            me: ctx.me(),
            steps: at.plan.plan.steps,
        });
        releases(at.plan) && send_release(ctx, at.plan)
    }

    fn holds(&self) -> bool {
        self.belief.is_some()
    }
}

/// Claims the job in the job table with `request` for its key, narrated as claiming it `by`.
fn claim_job(ctx: Ctx, plan: &WorkerConfig, by: ClaimBy, request: fn(String) -> LeaseMsg) -> Turn {
    ctx.note(LeaseWorkerSaw::ClaimsJob { me: ctx.me(), by });
    ask(ctx, plan, request(plan.plan.job_key.clone()));
    Turn::Ask
}

/// Sends to the lease store or job table (a worker that asks nobody has none).
fn ask(ctx: Ctx, plan: &WorkerConfig, msg: LeaseMsg) {
    if let Some(authority) = plan.authority {
        ctx.send(authority, msg);
    }
}

fn acquire_msg(plan: &WorkerConfig) -> LeaseMsg {
    LeaseMsg::Acquire {
        lease: plan.plan.lease.clone(),
        ttl_ms: plan.plan.ttl_ms,
    }
}

/// Whether this worker lets go of its lease when it is done: it took one, and its plan
/// releases.
fn releases(plan: &WorkerConfig) -> bool {
    plan.plan.coordination() == Coordination::Lease && plan.plan.release.is_some()
}

/// Sends the release its plan names; `true` if one went out.
fn send_release(ctx: Ctx, plan: &WorkerConfig) -> bool {
    let Some(mode) = plan.plan.release else {
        return false;
    };
    let lease = plan.plan.lease.clone();
    ask(ctx, plan, LeaseMsg::Release { lease, mode });
    true
}

impl LeaseLock {
    /// Runs the job from step 1 with no lease to lose: nothing, or the job table, decided.
    fn run_unguarded(&mut self) -> Turn {
        self.belief = Some(Belief {
            token: FencingToken(0),
            expires_local_us: u64::MAX,
        });
        Turn::Work(1)
    }

    /// The heartbeat: the same statement as the acquire, by the same owner.
    fn renew(&mut self, ctx: Ctx, plan: &WorkerConfig) {
        ctx.note(LeaseWorkerSaw::AsksToExtend {
            me: ctx.me(),
            lease: &plan.plan.lease,
        });
        ask(ctx, plan, acquire_msg(plan));
        self.acquire_sent_local_us = ctx.local_now_us;
    }

    fn granted(&mut self, ctx: Ctx, at: At<'_, Self>, token: FencingToken, ttl_ms: u64) -> Turn {
        let plan = &at.plan.plan;
        let expires_local_us = self.acquire_sent_local_us + ttl_ms * MS_US;
        let fresh = Belief {
            token,
            expires_local_us,
        };
        let heartbeat = JobTimer::Lock(LeaseTimer::Heartbeat);
        match (self.belief, at.phase) {
            (Some(old), phase) => {
                // A renewal. With the renewal bug the token changes under the worker's feet.
                self.belief = Some(fresh);
                let mut turn = Turn::Stay;
                if old.token != token && plan.stamp_before_progress {
                    ctx.note(LeaseWorkerSaw::RenewalChangedTokenStamps {
                        me: ctx.me(),
                        token,
                        was: old.token,
                    });
                    phase.stop_work(ctx);
                    turn = stamp(ctx, at.plan, token);
                } else if old.token != token {
                    ctx.note(LeaseWorkerSaw::RenewalChangedToken {
                        me: ctx.me(),
                        token,
                        was: old.token,
                    });
                } else {
                    ctx.note(LeaseWorkerSaw::Renewed {
                        me: ctx.me(),
                        token,
                        ttl_ms,
                    });
                }
                if plan.touch_on_heartbeat {
                    ctx.send(at.plan.sink_node, LeaseMsg::Touch { token });
                }
                ctx.set_timer(heartbeat, plan.heartbeat_ms * MS_US);
                turn
            }
            (None, Phase::Acquiring) => {
                self.belief = Some(fresh);
                ctx.note(LeaseWorkerSaw::HoldsLease {
                    me: ctx.me(),
                    token,
                    ttl_ms,
                    heartbeat_ms: plan.heartbeat_ms,
                });
                if plan.heartbeat_ms > 0 {
                    ctx.set_timer(heartbeat, plan.heartbeat_ms * MS_US);
                }
                if std::mem::take(&mut self.resuming) {
                    ctx.note(LeaseWorkerSaw::ResumesOwnJob {
                        me: ctx.me(),
                        token,
                        step: self.next_step,
                    });
                    Turn::Work(self.next_step)
                } else if plan.stamp_before_progress {
                    ctx.note(LeaseWorkerSaw::StampsBeforeProgress { me: ctx.me(), token });
                    stamp(ctx, at.plan, token)
                } else {
                    self.read_progress_or_start(at.plan)
                }
            }
            _ => Turn::Stay,
        }
    }

    /// The row's token, as the stamp left it.
    fn stamp_read(&mut self, ctx: Ctx, at: At<'_, Self>, last_token: FencingToken) -> Turn {
        let Some(belief) = self.belief else {
            return Turn::Stay;
        };
        let me = ctx.me();
        let mine = belief.token;
        if last_token == mine {
            ctx.note(LeaseWorkerSaw::StampHolds { mine, me });
            self.read_progress_or_start(at.plan)
        } else if last_token < mine {
            ctx.note(LeaseWorkerSaw::StampMissed { last_token, mine, me });
            stamp(ctx, at.plan, mine)
        } else {
            ctx.note(LeaseWorkerSaw::StampOvertaken { last_token, me, mine });
            self.stop(ctx, at, StopReason::Rejected)
        }
    }

    fn read_progress_or_start(&self, plan: &WorkerConfig) -> Turn {
        if plan.plan.check_progress {
            Turn::Granted
        } else {
            Turn::Work(self.next_step)
        }
    }

    fn denied(&mut self, ctx: Ctx, at: At<'_, Self>, holder: NodeId) -> Turn {
        let plan = &at.plan.plan;
        if self.belief.is_some() && plan.on_reject == OnReject::ReacquireAndContinue {
            let step = match *at.phase {
                Phase::Checking { step } | Phase::Working { step } | Phase::Writing { step } => step,
                _ => self.next_step,
            };
            ctx.note(LeaseWorkerSaw::RenewalEmptyHiccup { me: ctx.me(), step });
            at.phase.stop_work(ctx);
            self.resume_later(ctx, step)
        } else if self.belief.is_some() {
            ctx.note(LeaseWorkerSaw::RenewalEmpty { me: ctx.me(), holder });
            self.stop(ctx, at, StopReason::LostLease)
        } else if *at.phase != Phase::Acquiring {
            Turn::Stay
        } else if plan.retry_ms == 0 {
            ctx.note(LeaseWorkerSaw::AnotherCopyRuns { me: ctx.me() });
            Turn::GiveUp
        } else {
            self.says_wait = true;
            Turn::BackOff
        }
    }

    /// The mistake of treating a lost lease as transient: drop the belief, and get the lease
    /// back later to carry on from `step`.
    fn resume_later(&mut self, ctx: Ctx, step: u32) -> Turn {
        self.belief = None;
        self.next_step = step;
        self.resuming = true;
        ctx.cancel_timer(JobTimer::Lock(LeaseTimer::Heartbeat));
        Turn::BackOff
    }

    /// The job table's answer to a claim: one row means the job is this worker's.
    fn claimed(&mut self, ctx: Ctx, rows: u32) -> Turn {
        if rows == 1 {
            ctx.note(LeaseWorkerSaw::ClaimWon { me: ctx.me() });
            self.run_unguarded()
        } else {
            ctx.note(LeaseWorkerSaw::ClaimLost { me: ctx.me() });
            Turn::GiveUp
        }
    }

    fn released(&mut self, ctx: Ctx, at: At<'_, Self>, deleted: bool) -> Turn {
        let lease = &at.plan.plan.lease;
        let me = ctx.me();
        ctx.note(if deleted {
            LeaseWorkerSaw::LetGo { me, lease }
        } else {
            LeaseWorkerSaw::ReleaseRemovedNothing { me, lease }
        });
        match self.stop_reason {
            Some(_) if !at.job.finished => Turn::Stop,
            _ => Turn::Released,
        }
    }

    /// The run happened elsewhere: drop the lease, and release it if the plan releases.
    fn already_run(&mut self, ctx: Ctx, plan: &WorkerConfig) -> Turn {
        self.belief = None;
        ctx.cancel_timer(JobTimer::Lock(LeaseTimer::Heartbeat));
        self.stop_reason = Some(StopReason::AlreadyRun);
        if releases(plan) && send_release(ctx, plan) {
            Turn::Releasing
        } else {
            Turn::Stop
        }
    }

    /// Stops the job early; a `finally` block still releases the lease, unless it is
    /// already known to be someone else's.
    pub(super) fn stop(&mut self, ctx: Ctx, at: At<'_, Self>, reason: StopReason) -> Turn {
        self.belief = None;
        ctx.cancel_timer(JobTimer::Lock(LeaseTimer::Heartbeat));
        at.phase.stop_work(ctx);
        let finally_release = at.plan.plan.release_in_finally && reason != StopReason::LostLease;
        self.stop_reason = Some(reason);
        if finally_release && releases(at.plan) {
            ctx.note(LeaseWorkerSaw::FinallyReleases { me: ctx.me() });
            send_release(ctx, at.plan);
            Turn::Releasing
        } else {
            Turn::Stop
        }
    }
}

/// Stamps the row with `token` in one statement that answers with the row's token.
fn stamp(ctx: Ctx, plan: &WorkerConfig, token: FencingToken) -> Turn {
    ctx.send(plan.sink_node, LeaseMsg::Stamp { token });
    Turn::Stamp
}
