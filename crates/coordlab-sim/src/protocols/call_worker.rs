//! A worker whose job is one call to a remote payment API, then a record of the payout on
//! the ledger (`lock-across-call`). Where it holds the lease is the lesson: across the call,
//! or only while it claims the job row, letting go before the call. It never renews: the
//! thread that would renew is the one waiting for the answer.

use super::card;
use super::lease_msg::{seconds, LeaseMsg, ReleaseMode, WriteCheck};
use super::lease_worker::Belief;
use super::redis_job::JobDurable;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::kernel::view::{Summary, Tone};

/// Where the slow call sits relative to the lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Take the lease, call, record, release.
    AcrossCall,
    /// Take the lease, claim the job row, release; then call and record.
    ClaimThenCall,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallPlan {
    /// The lease, and the job's key in the job table and in an idempotency key.
    pub lease: String,
    pub ttl_ms: u64,
    /// When the job fires, a seeded draw from this range (ms).
    pub start_after_ms: (u64, u64),
    /// How long it waits to ask again when the lease is held.
    pub retry_ms: u64,
    pub amount: i64,
    pub placement: Placement,
    /// The call carries a key derived from the job: `payout-42#1`.
    pub idempotency_key: bool,
    /// The record carries the token in its predicate, and a new holder stamps the ledger row
    /// with its token before it reads the progress.
    pub fenced: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallConfig {
    pub plan: CallPlan,
    pub store: NodeId,
    pub ledger: NodeId,
    pub api: NodeId,
    /// The job table, for [`Placement::ClaimThenCall`].
    pub jobs: Option<NodeId>,
}

/// What comes after letting go of the lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    Call,
    Finish,
    Skip,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallPhase {
    Idle,
    Acquiring,
    BackingOff,
    Stamping,
    ReadingProgress,
    Claiming,
    Calling,
    Recording,
    Releasing(After),
    Done,
    Stopped(&'static str),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallTimer {
    Start,
    Retry,
}

impl Label for CallTimer {
    fn label(&self) -> String {
        match self {
            CallTimer::Start => "the job fires",
            CallTimer::Retry => "retries the lease",
        }
        .to_string()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallWorker {
    pub config: CallConfig,
    pub phase: CallPhase,
    pub belief: Option<Belief>,
    /// The token its call and record carry: 0 once it let go of the lease first.
    token: FencingToken,
    sent_local_us: u64,
    pub finished: bool,
}

impl CallWorker {
    /// Whether it believes it holds the lease now.
    pub fn believes_it_holds(&self) -> bool {
        use CallPhase::*;
        self.belief.is_some()
            && matches!(
                self.phase,
                Stamping | ReadingProgress | Claiming | Calling | Recording
            )
    }

    fn plan(&self) -> &CallPlan {
        &self.config.plan
    }

    fn acquire(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = CallPhase::Acquiring;
        self.sent_local_us = ctx.local_now_us;
        let (lease, ttl_ms) = (self.plan().lease.clone(), self.plan().ttl_ms);
        ctx.send(self.config.store, LeaseMsg::Acquire { lease, ttl_ms });
    }

    fn granted(&mut self, ctx: &mut Ctx<'_, Self>, token: FencingToken, ttl_ms: u64) {
        let expires_local_us = self.sent_local_us + ttl_ms * MS_US;
        self.belief = Some(Belief {
            token,
            expires_local_us,
        });
        self.token = token;
        let me = ctx.me();
        ctx.note(format!(
            "{me} holds {} with token {token} for {}. It does not renew.",
            self.plan().lease,
            seconds(ttl_ms)
        ));
        match (self.plan().placement, self.plan().fenced) {
            (Placement::ClaimThenCall, _) => {
                self.phase = CallPhase::Claiming;
                let key = self.plan().lease.clone();
                if let Some(jobs) = self.config.jobs {
                    ctx.send(jobs, LeaseMsg::ClaimJob { key });
                }
            }
            (_, true) => {
                self.phase = CallPhase::Stamping;
                ctx.send(self.config.ledger, LeaseMsg::Stamp { token });
            }
            _ => self.read_progress(ctx),
        }
    }

    fn read_progress(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = CallPhase::ReadingProgress;
        ctx.send(self.config.ledger, LeaseMsg::ReadProgress);
    }

    fn claimed(&mut self, ctx: &mut Ctx<'_, Self>, rows: u32) {
        let me = ctx.me();
        // The short change is committed either way: let go of the lease now.
        self.belief = None;
        if rows == 1 {
            ctx.note(format!(
                "The job row is {me}'s. {me} lets go of the lease before the slow call."
            ));
            self.release(ctx, After::Call);
        } else {
            ctx.note(format!(
                "The job row is not pending: someone has the job. {me} lets go of the lease and does nothing."
            ));
            self.release(ctx, After::Skip);
        }
    }

    fn call(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = CallPhase::Calling;
        let plan = self.plan();
        let key = plan.idempotency_key.then(|| format!("{}#1", plan.lease));
        let amount = plan.amount;
        let with = key.as_ref().map_or(String::new(), |k| format!(" with key {k}"));
        let holding = match self.belief {
            Some(_) => "still holding the lease",
            None => "holding no lease",
        };
        ctx.note(format!(
            "{} asks the payment API to pay out ₹{amount}{with}, and waits, {holding}.",
            ctx.me()
        ));
        ctx.send(
            self.config.api,
            LeaseMsg::Pay {
                step: 1,
                amount,
                idempotency_key: key,
            },
        );
    }

    fn record(&mut self, ctx: &mut Ctx<'_, Self>, applied: bool) {
        self.phase = CallPhase::Recording;
        let (token, fenced) = (self.token, self.plan().fenced);
        let me = ctx.me();
        let answer = if applied { "paid" } else { "paid earlier" };
        ctx.note(match self.belief {
            Some(b) if ctx.local_now_us > b.expires_local_us => format!(
                "The API answers \"{answer}\". {me} records the payout with token {token}, sure it holds the lease; by its own clock that ran out {} ago, but it does not look.",
                seconds((ctx.local_now_us - b.expires_local_us) / MS_US)
            ),
            _ => format!("The API answers \"{answer}\". {me} records the payout."),
        });
        let check = if fenced {
            WriteCheck::TokenPredicate
        } else {
            WriteCheck::Unfenced
        };
        let amount = self.plan().amount;
        ctx.send(
            self.config.ledger,
            LeaseMsg::Write {
                step: 1,
                amount,
                token,
                check,
            },
        );
    }

    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.finished = true;
        ctx.persist(JobDurable {
            finished: true,
            requests: 0,
        });
        if self.belief.take().is_some() {
            self.release(ctx, After::Finish);
        } else {
            self.phase = CallPhase::Done;
        }
    }

    fn release(&mut self, ctx: &mut Ctx<'_, Self>, after: After) {
        self.phase = CallPhase::Releasing(after);
        let lease = self.plan().lease.clone();
        ctx.send(
            self.config.store,
            LeaseMsg::Release {
                lease,
                mode: ReleaseMode::CompareAndDelete,
            },
        );
    }

    /// The store has answered the release (and narrated what it did).
    fn released(&mut self, ctx: &mut Ctx<'_, Self>, after: After) {
        match after {
            After::Call => {
                self.token = FencingToken(0);
                self.call(ctx);
            }
            After::Finish => self.phase = CallPhase::Done,
            After::Skip => self.phase = CallPhase::Stopped("job not pending"),
        }
    }

    fn handle(&mut self, ctx: &mut Ctx<'_, Self>, msg: LeaseMsg) {
        use CallPhase::*;
        let me = ctx.me();
        match (msg, self.phase.clone()) {
            (LeaseMsg::Granted { token, ttl_ms, .. }, Acquiring) => self.granted(ctx, token, ttl_ms),
            (LeaseMsg::Denied { .. }, Acquiring) => {
                self.phase = BackingOff;
                let wait_ms = self.plan().retry_ms;
                ctx.set_timer(CallTimer::Retry, wait_ms * MS_US);
                ctx.note(format!("{me} backs off; it asks again in {}.", seconds(wait_ms)));
            }
            (LeaseMsg::TokenIs { last_token }, Stamping) if last_token == self.token => {
                self.read_progress(ctx)
            }
            (LeaseMsg::TokenIs { .. }, Stamping) => {
                self.belief = None;
                self.phase = Stopped("newer holder");
            }
            (LeaseMsg::Progress { steps_done }, ReadingProgress) if steps_done > 0 => {
                ctx.note(format!("The payout is already recorded: {me} has nothing to do."));
                self.finish(ctx);
            }
            (LeaseMsg::Progress { .. }, ReadingProgress) => self.call(ctx),
            (LeaseMsg::RowsChanged { rows }, Claiming) => self.claimed(ctx, rows),
            (LeaseMsg::PayResult { applied, .. }, Calling) => self.record(ctx, applied),
            (LeaseMsg::WriteResult { accepted: true, .. }, Recording) => self.finish(ctx),
            (LeaseMsg::WriteResult { .. }, Recording) => {
                ctx.note(format!(
                    "{me} stops: a refused record means a newer holder has the job."
                ));
                self.belief = None;
                self.phase = Stopped("record refused");
            }
            (LeaseMsg::Released { .. }, Releasing(after)) => self.released(ctx, after),
            _ => {}
        }
    }
}

impl Participant for CallWorker {
    type Msg = LeaseMsg;
    type Timer = CallTimer;
    type Durable = JobDurable;
    type Config = CallConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.finished {
            return;
        }
        let (lo, hi) = self.plan().start_after_ms;
        let delay_us = between_us(ctx.rng, lo * MS_US, hi * MS_US);
        ctx.set_timer(CallTimer::Start, delay_us);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, _from: NodeId, msg: LeaseMsg) {
        self.handle(ctx, msg);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: CallTimer) {
        match (timer, &self.phase) {
            (CallTimer::Start, CallPhase::Idle) | (CallTimer::Retry, CallPhase::BackingOff) => {
                self.acquire(ctx)
            }
            _ => {}
        }
    }

    fn recover(config: &CallConfig, _id: NodeId, durable: &JobDurable) -> Self {
        CallWorker {
            config: config.clone(),
            phase: if durable.finished {
                CallPhase::Done
            } else {
                CallPhase::Idle
            },
            belief: None,
            token: FencingToken(0),
            sent_local_us: 0,
            finished: durable.finished,
        }
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        use CallPhase::*;
        let held = self.belief.is_some();
        let mut s = match &self.phase {
            Idle => card::idle(),
            Acquiring => card::asking("for the lease"),
            BackingOff => card::backing_off().detail("the lease is held"),
            Stamping => card::holder("stamping the row"),
            ReadingProgress => card::holder("checking progress"),
            Claiming => card::holder("claiming the job"),
            Calling if held => card::holder("waiting for the API"),
            Calling => Summary::new("calling", Tone::Waiting).detail("holds no lease"),
            Recording if held => card::holder("recording"),
            Recording => Summary::new("recording", Tone::Quiet),
            Releasing(_) => card::releasing(),
            Done => card::done(),
            Stopped(why) => card::stopped(why),
        };
        if let Some(b) = self.belief {
            let now = view.local_now_us;
            s = s.badge("token", b.token).minor(if b.expires_local_us > now {
                format!("{} by own clock", card::left(b.expires_local_us - now))
            } else {
                "lease over by own clock".to_string()
            });
        }
        s
    }

    fn durable_summary(_config: &CallConfig, durable: &JobDurable, _view: &ViewCtx<'_>) -> Summary {
        durable.summary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{sent, Harness};

    const STORE: NodeId = NodeId(0);
    const LEDGER: NodeId = NodeId(2);
    const API: NodeId = NodeId(3);
    const JOBS: NodeId = NodeId(4);

    fn worker(placement: Placement) -> Harness<CallWorker> {
        let config = CallConfig {
            plan: CallPlan {
                lease: "payout-42".into(),
                ttl_ms: 10_000,
                start_after_ms: (0, 0),
                retry_ms: 5_000,
                amount: 10,
                placement,
                idempotency_key: false,
                fenced: false,
            },
            store: STORE,
            ledger: LEDGER,
            api: API,
            jobs: Some(JOBS),
        };
        let w = CallWorker::recover(&config, NodeId(1), &JobDurable::default());
        Harness::new(NodeId(1), w, &["store", "w", "ledger", "api", "jobs"])
    }

    fn granted() -> LeaseMsg {
        LeaseMsg::Granted {
            lease: "payout-42".into(),
            token: FencingToken(33),
            ttl_ms: 10_000,
        }
    }

    fn msgs(fx: &[crate::kernel::participant::Effect<CallWorker>]) -> Vec<(NodeId, LeaseMsg)> {
        sent(fx)
    }

    #[test]
    fn across_the_call_it_still_believes_it_holds_while_it_waits() {
        let mut w = worker(Placement::AcrossCall);
        w.fire(CallTimer::Start);
        assert_eq!(
            msgs(&w.deliver(STORE, granted())),
            vec![(LEDGER, LeaseMsg::ReadProgress)]
        );
        let fx = w.deliver(LEDGER, LeaseMsg::Progress { steps_done: 0 });
        assert!(matches!(msgs(&fx)[..], [(API, LeaseMsg::Pay { .. })]));
        assert!(w.node.believes_it_holds());
        // Its answer is recorded with the token, unchecked.
        let fx = w.deliver(
            API,
            LeaseMsg::PayResult {
                step: 1,
                applied: true,
            },
        );
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
        w.fire(CallTimer::Start);
        let claim = LeaseMsg::ClaimJob {
            key: "payout-42".into(),
        };
        assert_eq!(msgs(&w.deliver(STORE, granted())), vec![(JOBS, claim)]);
        let fx = w.deliver(JOBS, LeaseMsg::RowsChanged { rows: 1 });
        assert!(matches!(msgs(&fx)[..], [(STORE, LeaseMsg::Release { .. })]));
        let released = LeaseMsg::Released {
            lease: "payout-42".into(),
            deleted: true,
        };
        let fx = w.deliver(STORE, released);
        assert!(matches!(msgs(&fx)[..], [(API, LeaseMsg::Pay { .. })]));
        assert!(!w.node.believes_it_holds());
        let fx = w.deliver(
            API,
            LeaseMsg::PayResult {
                step: 1,
                applied: true,
            },
        );
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
