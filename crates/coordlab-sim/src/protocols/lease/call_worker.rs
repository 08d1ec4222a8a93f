//! A worker whose job is one call to a remote payment API, then a record of the payout on
//! the ledger (`lock-across-call`). Where it holds the lease is the lesson: across the call,
//! or only while it claims the job row, letting go before the call. It never renews: the
//! thread that would renew is the one waiting for the answer.
//!
//! The job is the [`JobRunner`]'s, one step long: the call is the step's work (the API's
//! answer ends it) and the record its write. This file is the lease side, [`CallLock`].

use super::lease_msg::{LeaseMsg, RejectReason, ReleaseMode, WriteCheck};
use super::lease_worker::Belief;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::presentation::narration::lease::call_worker::CallWorkerSaw;
use crate::protocols::job::{plans_job, At, JobCtx, JobRunner, JobTimer, LockClient, Phase, Turn};
use crate::protocols::redis_locks::redis_job::{Job, JobDurable, JobPlan, Next};

/// Where the slow call sits relative to the lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Take the lease, call, record, release.
    AcrossCall,
    /// Take the lease, claim the job row, release; then call and record.
    ClaimThenCall,
}

/// The worker's configuration: the job, one step long (`job.key` is the lease, and the job's
/// key in the job table and in an idempotency key), and where the call sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallPlan {
    pub job: JobPlan,
    /// When the job fires, a seeded draw from this range (ms).
    pub start_after_ms: (u64, u64),
    pub placement: Placement,
    /// The call carries a key derived from the job: `payout-42#1`.
    pub idempotency_key: bool,
    /// The record carries the token in its predicate, and a new holder stamps the ledger row
    /// with its token before it reads the progress.
    pub fenced: bool,
    pub store: NodeId,
    pub api: NodeId,
    /// The job table, for [`Placement::ClaimThenCall`].
    pub jobs: Option<NodeId>,
}

plans_job!(CallPlan);

impl CallPlan {
    /// The job: one payout of `amount` under `lease`, recorded on `ledger`. It asks for the
    /// lease every `retry_ms` until it gets it (no attempts are counted), and the API's answer
    /// ends the call (the step takes no time of its own).
    pub fn job(lease: &str, ttl_ms: u64, retry_ms: u64, amount: i64, ledger: NodeId) -> JobPlan {
        JobPlan {
            key: lease.to_string(),
            ttl_ms,
            retry_ms,
            ..JobPlan::of_steps(1, 0, amount, ledger)
        }
    }
}

/// A worker: the job runner whose one step is the call, under a lease from a lease store.
pub type CallWorker = JobRunner<CallLock>;

/// It sets no timer of its own: it waits for answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoTimer {}

/// What it does to take the job up once it holds the lease (the runner's reading progress).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Stamps the ledger row with its token, then reads the progress.
    Stamp,
    /// Claims the job row (and lets go of the lease before the call).
    Claim,
    Progress,
}

/// The lease side of a calling worker, and what the call needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallLock {
    pub belief: Option<Belief>,
    /// The token its call and record carry: 0 once it let go of the lease first.
    token: FencingToken,
    sent_local_us: u64,
    pub check: Check,
    /// Where the job goes once the store answers its release.
    after: Turn,
    /// The API's answer: paid now (not earlier).
    applied: bool,
    /// Why it stopped.
    pub stop: &'static str,
    /// Whether its record carries the token in its predicate.
    record_check: WriteCheck,
}

type Ctx<'a, 'b> = JobCtx<'a, 'b, CallLock>;

impl CallLock {
    fn release(&mut self, ctx: Ctx, plan: &CallPlan, after: Turn) {
        self.after = after;
        let lease = plan.job.key.clone();
        ctx.send(
            plan.store,
            LeaseMsg::Release {
                lease,
                mode: ReleaseMode::CompareAndDelete,
            },
        );
    }

    fn granted(&mut self, ctx: Ctx, plan: &CallPlan, token: FencingToken, ttl_ms: u64) -> Turn {
        let expires_local_us = self.sent_local_us + ttl_ms * MS_US;
        self.belief = Some(Belief {
            token,
            expires_local_us,
        });
        self.token = token;
        ctx.note(CallWorkerSaw::Holds {
            me: ctx.me(),
            key: &plan.job.key,
            token,
            ttl_ms,
        });
        Turn::Granted
    }

    /// The job table answered the claim: it lets go of the lease either way.
    fn claimed(&mut self, ctx: Ctx, plan: &CallPlan, rows: u32) -> Turn {
        let me = ctx.me();
        // The short change is committed either way: let go of the lease now.
        self.belief = None;
        if rows == 1 {
            ctx.note(CallWorkerSaw::JobRowMine { me });
            // Holding no lease, its call and record carry no token.
            self.token = FencingToken(0);
            self.release(ctx, plan, Turn::Work(1));
        } else {
            ctx.note(CallWorkerSaw::JobRowTaken { me });
            self.stop = "job not pending";
            self.release(ctx, plan, Turn::Stop);
        }
        Turn::Releasing
    }
}

impl LockClient for CallLock {
    type Plan = CallPlan;
    type Timer = NoTimer;
    /// Its store speaks [`LeaseMsg`], which comes in on the ledger's wire: see `on_ledger`.
    type Reply = LeaseMsg;
    const TIMED_WORK: bool = false;

    fn recover(plan: &CallPlan, _durable: &JobDurable) -> Self {
        CallLock {
            belief: None,
            token: FencingToken(0),
            sent_local_us: 0,
            check: Check::Progress,
            after: Turn::Released,
            applied: false,
            stop: "",
            record_check: if plan.fenced {
                WriteCheck::TokenPredicate
            } else {
                WriteCheck::Unfenced
            },
        }
    }

    fn start(ctx: Ctx, plan: &CallPlan, job: &Job) {
        job.start_after(ctx, plan.start_after_ms, JobTimer::JobStart);
    }

    fn request(&mut self, ctx: Ctx, at: At<'_, Self>) {
        self.sent_local_us = ctx.local_now_us;
        let (lease, ttl_ms) = (at.plan.job.key.clone(), at.plan.job.ttl_ms);
        ctx.send(at.plan.store, LeaseMsg::Acquire { lease, ttl_ms });
    }

    fn read_progress(&mut self, ctx: Ctx, at: At<'_, Self>) {
        let plan = at.plan;
        self.check = match (plan.placement, plan.fenced) {
            (Placement::ClaimThenCall, _) => {
                let key = plan.job.key.clone();
                if let Some(jobs) = plan.jobs {
                    ctx.send(jobs, LeaseMsg::ClaimJob { key });
                }
                Check::Claim
            }
            (_, true) => {
                ctx.send(plan.job.ledger, LeaseMsg::Stamp { token: self.token });
                Check::Stamp
            }
            _ => {
                plan.job.read_progress(ctx);
                Check::Progress
            }
        };
    }

    fn on_reply(&mut self, _ctx: Ctx, _at: At<'_, Self>, _from: NodeId, _msg: LeaseMsg) -> Turn {
        Turn::Stay
    }

    fn on_ledger(
        &mut self,
        ctx: Ctx,
        at: At<'_, Self>,
        _from: NodeId,
        msg: LeaseMsg,
    ) -> Result<Turn, LeaseMsg> {
        let checking = *at.phase == Phase::ReadingProgress;
        Ok(match (msg, at.phase) {
            (LeaseMsg::Granted { token, ttl_ms, .. }, Phase::Acquiring) => {
                self.granted(ctx, at.plan, token, ttl_ms)
            }
            (LeaseMsg::Denied { .. }, Phase::Acquiring) => {
                ctx.note(CallWorkerSaw::BacksOff {
                    me: ctx.me(),
                    wait_ms: at.plan.job.retry_ms,
                });
                Turn::BackOff
            }
            (LeaseMsg::TokenIs { last_token }, _) if checking && self.check == Check::Stamp => {
                if last_token != self.token {
                    self.belief = None;
                    self.stop = "newer holder";
                    return Ok(Turn::Stop);
                }
                self.check = Check::Progress;
                at.plan.job.read_progress(ctx);
                Turn::Stay
            }
            (LeaseMsg::RowsChanged { rows }, _) if checking && self.check == Check::Claim => {
                self.claimed(ctx, at.plan, rows)
            }
            (LeaseMsg::PayResult { applied, .. }, Phase::Working { step }) => {
                self.applied = applied;
                Turn::Write(*step)
            }
            // The store has answered the release (and narrated what it did).
            (LeaseMsg::Released { .. }, Phase::Releasing) => self.after,
            // The ledger's answers to the job (its progress, a write's result): the runner's.
            (msg, _) => return Err(msg),
        })
    }

    fn on_timer(&mut self, _ctx: Ctx, _at: At<'_, Self>, timer: NoTimer) -> Turn {
        match timer {}
    }

    fn resume(ctx: Ctx, _plan: &CallPlan, steps_done: u32) -> Next {
        if steps_done == 0 {
            return Next::Step(1);
        }
        ctx.note(CallWorkerSaw::AlreadyRecorded { me: ctx.me() });
        Next::Finish
    }

    /// The step's work is the call: it asks the API and waits.
    fn working(&mut self, ctx: Ctx, at: At<'_, Self>, step: u32) {
        let plan = at.plan;
        let key = plan.idempotency_key.then(|| format!("{}#1", plan.job.key));
        let amount = plan.job.amount;
        ctx.note(CallWorkerSaw::Calls {
            me: ctx.me(),
            amount,
            key: key.as_deref(),
            holding: self.belief.is_some(),
        });
        let pay = LeaseMsg::Pay {
            step,
            amount,
            idempotency_key: key,
        };
        ctx.send(plan.api, pay);
    }

    /// The record of the payout: the token it holds, checked or not.
    fn fence(&self, ctx: Ctx, _step: u32) -> (FencingToken, WriteCheck) {
        let now = ctx.local_now_us;
        ctx.note(CallWorkerSaw::Answered {
            applied: self.applied,
            me: ctx.me(),
            token: self.token,
            lapsed_us: self
                .belief
                .filter(|b| now > b.expires_local_us)
                .map(|b| now - b.expires_local_us),
        });
        (self.token, self.record_check)
    }

    fn refused(
        &mut self,
        ctx: Ctx,
        _: At<'_, Self>,
        _step: u32,
        _reason: Option<RejectReason>,
    ) -> Option<Turn> {
        ctx.note(CallWorkerSaw::RecordRefused { me: ctx.me() });
        self.belief = None;
        self.stop = "record refused";
        Some(Turn::Stop)
    }

    fn release(&mut self, ctx: Ctx, at: At<'_, Self>) -> bool {
        if self.belief.take().is_none() {
            return false;
        }
        self.release(ctx, at.plan, Turn::Released);
        true
    }

    fn holds(&self) -> bool {
        self.belief.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::participant::Effect;
    use crate::kernel::testing::{sent, Harness};
    use crate::protocols::job::JobMsg;

    const STORE: NodeId = NodeId(0);
    const LEDGER: NodeId = NodeId(2);
    const API: NodeId = NodeId(3);
    const JOBS: NodeId = NodeId(4);

    fn worker(placement: Placement) -> Harness<CallWorker> {
        let plan = CallPlan {
            job: CallPlan::job("payout-42", 10_000, 5_000, 10, LEDGER),
            start_after_ms: (0, 0),
            placement,
            idempotency_key: false,
            fenced: false,
            store: STORE,
            api: API,
            jobs: Some(JOBS),
        };
        let w = CallWorker::recover(&plan, &JobDurable::default());
        Harness::new(NodeId(1), w, &["store", "w", "ledger", "api", "jobs"])
    }

    fn granted() -> LeaseMsg {
        LeaseMsg::Granted {
            lease: "payout-42".into(),
            token: FencingToken(33),
            ttl_ms: 10_000,
        }
    }

    fn msgs(fx: &[Effect<CallWorker>]) -> Vec<(NodeId, LeaseMsg)> {
        sent(fx)
    }

    /// Every answer it takes comes in on the ledger's wire.
    fn deliver(w: &mut Harness<CallWorker>, from: NodeId, msg: LeaseMsg) -> Vec<Effect<CallWorker>> {
        w.deliver(from, JobMsg::Ledger(msg))
    }

    /// The payment API's answer to step 1: paid.
    const PAID_STEP_1: LeaseMsg = LeaseMsg::PayResult {
        step: 1,
        applied: true,
    };

    #[test]
    fn across_the_call_it_still_believes_it_holds_while_it_waits() {
        let mut w = worker(Placement::AcrossCall);
        w.fire(JobTimer::JobStart);
        assert_eq!(
            msgs(&deliver(&mut w, STORE, granted())),
            vec![(LEDGER, LeaseMsg::ReadProgress)]
        );
        let fx = deliver(&mut w, LEDGER, LeaseMsg::Progress { steps_done: 0 });
        assert!(matches!(msgs(&fx)[..], [(API, LeaseMsg::Pay { .. })]));
        assert!(w.node.believes_it_holds());
        // Its answer is recorded with the token, unchecked.
        let fx = deliver(&mut w, API, PAID_STEP_1);
        let write = LeaseMsg::Write {
            step: 1,
            amount: 10,
            token: FencingToken(33),
            check: WriteCheck::Unfenced,
        };
        assert_eq!(msgs(&fx), vec![(LEDGER, write)]);
    }

    #[test]
    fn claiming_first_it_lets_go_before_it_calls_and_records_without_a_token() {
        let mut w = worker(Placement::ClaimThenCall);
        w.fire(JobTimer::JobStart);
        let claim = LeaseMsg::ClaimJob {
            key: "payout-42".into(),
        };
        assert_eq!(msgs(&deliver(&mut w, STORE, granted())), vec![(JOBS, claim)]);
        let fx = deliver(&mut w, JOBS, LeaseMsg::RowsChanged { rows: 1 });
        assert!(matches!(msgs(&fx)[..], [(STORE, LeaseMsg::Release { .. })]));
        let released = LeaseMsg::Released {
            lease: "payout-42".into(),
            deleted: true,
        };
        let fx = deliver(&mut w, STORE, released);
        assert!(matches!(msgs(&fx)[..], [(API, LeaseMsg::Pay { .. })]));
        assert!(!w.node.believes_it_holds());
        let fx = deliver(&mut w, API, PAID_STEP_1);
        assert!(matches!(
            msgs(&fx)[..],
            [(
                LEDGER,
                LeaseMsg::Write {
                    token: FencingToken(0),
                    ..
                }
            )]
        ));
    }
}
