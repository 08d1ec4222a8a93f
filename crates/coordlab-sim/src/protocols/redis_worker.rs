//! A worker that takes a Redis lock the common way and then does a multi-step job on the
//! ledger. It acquires with the acquire script (`SET lock <random value> NX PX ttl` plus an
//! `INCR` of a counter in the same step, whose result is its fencing token), optionally
//! follows with `WAIT`, writes each step carrying the token, and releases with `DEL` or with
//! the compare-and-delete script. It learns where the primary is from the sentinels.
//!
//! It trusts its lock from the moment it trusts the answer: nothing afterwards tells it the
//! key has vanished from the store. `WAIT` changes only when it starts trusting: once a
//! replica has a copy. A failover that promotes another replica, or a TTL that runs out while
//! it works, takes the lock away all the same.

use super::card;
use super::lease_msg::{LeaseMsg, ReleaseMode, WriteCheck};
use super::redis_job::{ClientMsg, Job, JobDurable, JobPlan, Next};
use super::redis_msg::{tenths, RedisMsg};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::time::MS_US;
use crate::kernel::view::Summary;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerPlan {
    /// The lock and the job, as every Redis lock client has them.
    pub job: JobPlan,
    /// The counter the acquire script increments; its value is the fencing token.
    pub fence_key: String,
    /// `WAIT replicas timeout_ms` after a successful acquire; proceed only if enough confirm.
    pub wait: Option<(u32, u64)>,
    pub release: ReleaseMode,
    pub request_timeout_ms: u64,
    /// The sentinels it asks where the primary is, one after another.
    pub sentinels: Vec<NodeId>,
    pub first_primary: NodeId,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerTimer {
    /// The job fires.
    JobStart,
    /// Try the lock again.
    Retry,
    /// No answer to a request of this attempt.
    RequestTimeout { attempt: u32 },
    /// The work of a step is done.
    StepDone { step: u32 },
}

impl Label for WorkerTimer {
    fn label(&self) -> String {
        match self {
            WorkerTimer::JobStart => "the job fires".to_string(),
            WorkerTimer::Retry => "tries the lock again".to_string(),
            WorkerTimer::RequestTimeout { .. } => "gives up waiting for an answer".to_string(),
            WorkerTimer::StepDone { step } => format!("finishes the work of step {step}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Acquiring,
    /// Waiting for `WAIT`'s answer.
    Confirming,
    /// Asking the ledger how far the job got before taking it up.
    ReadingProgress,
    Working {
        step: u32,
    },
    Writing {
        step: u32,
    },
    Releasing,
    BackingOff,
    Done,
    Stopped,
    GaveUp,
}

/// The lock as the worker holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub value: String,
    pub token: u64,
    pub granted_by: NodeId,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisWorker {
    pub plan: WorkerPlan,
    pub phase: Phase,
    /// Where it sends commands.
    pub primary: NodeId,
    /// The sentinels' epoch of that news: older news is ignored.
    pub epoch: u64,
    /// How many times it has asked a sentinel (it asks the next one each time).
    asked: usize,
    /// Every answer to its `WAIT`s: how many replicas had the write.
    pub wait_acks: Vec<u32>,
    /// Its connection to `primary` dropped, or a request went unanswered.
    pub primary_down: bool,
    /// Its attempts, this attempt's lock value, and whether the job is done.
    pub job: Job,
    pub held: Option<Held>,
}

impl RedisWorker {
    pub fn recover(plan: &WorkerPlan, d: &JobDurable) -> RedisWorker {
        RedisWorker {
            plan: plan.clone(),
            phase: if d.finished { Phase::Done } else { Phase::Idle },
            primary: plan.first_primary,
            epoch: 0,
            asked: 0,
            wait_acks: Vec::new(),
            primary_down: false,
            job: Job::recover(d),
            held: None,
        }
    }

    /// Whether it is doing the protected work believing the lock is its own.
    pub fn believes_it_holds(&self) -> bool {
        self.held.is_some()
            && matches!(
                self.phase,
                Phase::ReadingProgress | Phase::Working { .. } | Phase::Writing { .. }
            )
    }

    pub fn watches(&self, peer: NodeId) -> bool {
        peer == self.primary
    }

    pub fn start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.job.schedule(ctx, &self.plan.job, WorkerTimer::JobStart);
    }

    pub fn timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: WorkerTimer) {
        match (timer, &self.phase) {
            (WorkerTimer::JobStart, Phase::Idle) | (WorkerTimer::Retry, Phase::BackingOff) => {
                if self.primary_down {
                    // Ask a sentinel first; its answer (or the next retry) moves things on.
                    self.ask_sentinel(ctx);
                    self.back_off(ctx);
                } else {
                    self.acquire(ctx);
                }
            }
            (WorkerTimer::RequestTimeout { attempt }, Phase::Acquiring | Phase::Confirming)
                if attempt == self.job.attempt =>
            {
                ctx.note(format!(
                    "{} gets no answer from {}. It cannot tell whether its lock was set, so it treats it as not held and asks a sentinel where the primary is.",
                    ctx.me(),
                    ctx.name(self.primary)
                ));
                self.lose_connection(ctx);
            }
            (WorkerTimer::StepDone { step }, Phase::Working { step: s }) if step == *s => {
                self.write(ctx, step)
            }
            _ => {}
        }
    }

    fn acquire(&mut self, ctx: &mut Ctx<'_, Self>) {
        if !self.job.next_attempt(ctx, &self.plan.job) {
            self.phase = Phase::GaveUp;
            return;
        }
        self.phase = Phase::Acquiring;
        ctx.note(if self.job.attempt == 1 {
            format!(
                "{}'s job fires. It asks {} for the lock with a random value of its own, {}. Redis has no fencing tokens, so the same script also increments the counter `{}` and hands back its new value as one.",
                ctx.me(),
                ctx.name(self.primary),
                self.job.value,
                self.plan.fence_key
            )
        } else {
            format!(
                "{} asks {} for the lock again (attempt {}), as {}.",
                ctx.me(),
                ctx.name(self.primary),
                self.job.attempt,
                self.job.value
            )
        });
        ctx.send(
            self.primary,
            RedisMsg::Set {
                key: self.plan.job.key.clone(),
                value: self.job.value.clone(),
                nx: true,
                px_ms: self.plan.job.ttl_ms,
                incr: Some(self.plan.fence_key.clone()),
            },
        );
        ctx.set_timer(
            WorkerTimer::RequestTimeout {
                attempt: self.job.attempt,
            },
            self.plan.request_timeout_ms * MS_US,
        );
    }

    fn cancel_request_timeout(&self, ctx: &mut Ctx<'_, Self>) {
        ctx.cancel_timer(WorkerTimer::RequestTimeout {
            attempt: self.job.attempt,
        });
    }

    pub fn message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ClientMsg) {
        match msg {
            ClientMsg::Redis(msg) => self.redis_reply(ctx, from, msg),
            ClientMsg::Ledger(msg) => self.ledger_reply(ctx, msg),
        }
    }

    fn redis_reply(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RedisMsg) {
        match msg {
            RedisMsg::SetReply { ok, counter, .. }
                if self.phase == Phase::Acquiring && from == self.primary =>
            {
                self.cancel_request_timeout(ctx);
                if !ok {
                    ctx.note(format!(
                        "Someone else holds the lock; {} will try again in {}.",
                        ctx.me(),
                        tenths(self.plan.job.retry_ms)
                    ));
                    self.back_off(ctx);
                    return;
                }
                let token = counter.unwrap_or(0);
                self.held = Some(Held {
                    value: self.job.value.clone(),
                    token,
                    granted_by: from,
                });
                match self.plan.wait {
                    Some((replicas, timeout_ms)) => {
                        ctx.note(format!(
                            "{} got OK and token {token} from {}. The key is set and visible there already; {} sends WAIT {replicas} {timeout_ms}, which only delays its answer until {replicas} replica(s) have the write (or {timeout_ms} ms pass).",
                            ctx.me(),
                            ctx.name(from),
                            ctx.me()
                        ));
                        self.phase = Phase::Confirming;
                        ctx.send(from, RedisMsg::Wait { replicas, timeout_ms });
                        ctx.set_timer(
                            WorkerTimer::RequestTimeout {
                                attempt: self.job.attempt,
                            },
                            (timeout_ms + self.plan.request_timeout_ms) * MS_US,
                        );
                    }
                    None => {
                        ctx.note(format!(
                            "{} holds the lock: OK from {}, token {token}, {} TTL. It starts on the job at once.",
                            ctx.me(),
                            ctx.name(from),
                            tenths(self.plan.job.ttl_ms)
                        ));
                        self.read_progress(ctx);
                    }
                }
            }
            RedisMsg::WaitReply { acked } if self.phase == Phase::Confirming && from == self.primary => {
                self.cancel_request_timeout(ctx);
                self.wait_acks.push(acked);
                let needed = self.plan.wait.map_or(0, |w| w.0);
                if acked >= needed {
                    ctx.note(format!(
                        "WAIT says {acked} replica(s) have the write, so {} starts the job (token {}). That makes the lock harder to lose, not safe: a failover may still promote a replica without it, and the key still expires after {} whether the job is done or not.",
                        ctx.me(),
                        self.held.as_ref().map_or(0, |h| h.token),
                        tenths(self.plan.job.ttl_ms)
                    ));
                    self.read_progress(ctx);
                } else {
                    ctx.note(format!(
                        "WAIT says only {acked} replica(s) have the write. The key is still set on {} — WAIT cannot take it back — so {} removes it itself and will try again.",
                        ctx.name(from),
                        ctx.me()
                    ));
                    self.send_release(ctx);
                    self.held = None;
                    self.back_off(ctx);
                }
            }
            RedisMsg::Error { text } if from == self.primary => {
                ctx.note(format!(
                    "{} answers {text}: it is not the primary. {} asks a sentinel.",
                    ctx.name(from),
                    ctx.me()
                ));
                self.cancel_request_timeout(ctx);
                if matches!(self.phase, Phase::Acquiring | Phase::Confirming) {
                    self.held = None;
                    self.ask_sentinel(ctx);
                    self.back_off(ctx);
                }
            }
            RedisMsg::PrimaryIs { primary, name, epoch } => self.primary_is(ctx, primary, &name, epoch),
            RedisMsg::DelReply { deleted, .. } if self.phase == Phase::Releasing => {
                ctx.note(if deleted {
                    format!("{}'s release removed a key; it is done.", ctx.me())
                } else {
                    format!("{}'s release removed nothing; it is done.", ctx.me())
                });
                self.phase = Phase::Done;
            }
            _ => {}
        }
    }

    /// A sentinel says where the primary is.
    fn primary_is(&mut self, ctx: &mut Ctx<'_, Self>, primary: NodeId, name: &str, epoch: u64) {
        if epoch < self.epoch {
            return; // a sentinel that has not heard of the latest failover
        }
        self.epoch = epoch;
        let changed = primary != self.primary;
        self.primary = primary;
        self.primary_down = false;
        if !changed {
            return;
        }
        match self.phase {
            Phase::Working { .. } | Phase::Writing { .. } => ctx.note(format!(
                "{} hears that {name} is the primary now and will send its commands there. Nothing in that news says whether its own lock survived.",
                ctx.me()
            )),
            Phase::BackingOff => {
                ctx.cancel_timer(WorkerTimer::Retry);
                self.acquire(ctx);
            }
            Phase::Acquiring | Phase::Confirming => {
                ctx.note(format!(
                    "{} hears that {name} is the primary now and abandons its unanswered request.",
                    ctx.me()
                ));
                self.cancel_request_timeout(ctx);
                self.held = None;
                self.acquire(ctx);
            }
            _ => {}
        }
    }

    fn ledger_reply(&mut self, ctx: &mut Ctx<'_, Self>, msg: LeaseMsg) {
        match msg {
            LeaseMsg::Progress { steps_done } if self.phase == Phase::ReadingProgress => {
                let next = self.plan.job.resume(ctx, steps_done, "gives the lock back");
                self.go(ctx, next);
            }
            LeaseMsg::WriteResult { step, accepted, .. } => {
                if self.phase != (Phase::Writing { step }) {
                    return;
                }
                if accepted {
                    self.go(ctx, self.plan.job.after(step));
                } else {
                    ctx.note(format!(
                        "The ledger refused {}'s step {step}: a higher token has written there, so another holder exists. It stops.",
                        ctx.me()
                    ));
                    self.held = None;
                    self.phase = Phase::Stopped;
                }
            }
            _ => {}
        }
    }

    pub fn peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        if peer != self.primary {
            return;
        }
        let (me, primary) = (ctx.me(), ctx.name(peer));
        match self.phase {
            Phase::Confirming => {
                ctx.note(format!(
                    "{me}'s connection to {primary} drops while its WAIT is still waiting. Its lock was set, and visible to every client of {primary}, from the moment of the OK; WAIT only reports how far replication got and could never have taken it back. Did a replica get it? {me} cannot know, so it does not act on it."
                ));
                self.cancel_request_timeout(ctx);
                self.lose_connection(ctx);
            }
            Phase::Acquiring => {
                ctx.note(format!(
                    "{me}'s connection to {primary} drops before the answer came. Was the lock set? It cannot know, so it does not act on it."
                ));
                self.cancel_request_timeout(ctx);
                self.lose_connection(ctx);
            }
            Phase::Working { .. } | Phase::Writing { .. } => {
                self.primary_down = true;
                ctx.note(format!(
                    "{me}'s connection to {primary} drops. It carries on working: its lock is a key in {primary}'s memory, and nothing tells it whether any replica has that key."
                ));
            }
            _ => self.primary_down = true,
        }
    }

    fn lose_connection(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.held = None;
        self.primary_down = true;
        self.ask_sentinel(ctx);
        self.back_off(ctx);
    }

    /// Asks the next sentinel in its list where the primary is.
    fn ask_sentinel(&mut self, ctx: &mut Ctx<'_, Self>) {
        let sentinels = &self.plan.sentinels;
        if sentinels.is_empty() {
            return;
        }
        let to = sentinels[self.asked % sentinels.len()];
        self.asked += 1;
        ctx.send(to, RedisMsg::WhoIsPrimary);
    }

    fn back_off(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::BackingOff;
        ctx.set_timer(WorkerTimer::Retry, self.plan.job.retry_ms * MS_US);
    }

    fn read_progress(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = Phase::ReadingProgress;
        self.plan.job.read_progress(ctx);
    }

    fn go(&mut self, ctx: &mut Ctx<'_, Self>, next: Next) {
        match next {
            Next::Step(step) => {
                self.phase = Phase::Working { step };
                ctx.set_timer(WorkerTimer::StepDone { step }, self.plan.job.step_ms * MS_US);
            }
            Next::Finish => self.finish(ctx),
        }
    }

    fn write(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        let token = self.held.as_ref().map_or(0, |h| h.token);
        self.phase = Phase::Writing { step };
        ctx.note(format!(
            "{} has done step {step}'s work and sends the debit with token {token} in its WHERE clause.",
            ctx.me()
        ));
        ctx.send(
            self.plan.job.ledger,
            LeaseMsg::Write {
                step,
                amount: self.plan.job.amount,
                token: FencingToken(token),
                check: WriteCheck::TokenPredicate,
            },
        );
    }

    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.job.finish(ctx);
        let how = match self.plan.release {
            ReleaseMode::NaiveDelete => "DEL".to_string(),
            ReleaseMode::CompareAndDelete => {
                "the release script (delete only if the value is still mine)".into()
            }
        };
        ctx.note(format!(
            "{} is done with the job and releases the lock on {} with {how}.",
            ctx.me(),
            ctx.name(self.primary)
        ));
        self.send_release(ctx);
        self.held = None;
        self.phase = Phase::Releasing;
    }

    fn send_release(&mut self, ctx: &mut Ctx<'_, Self>) {
        let key = self.plan.job.key.clone();
        let msg = match self.plan.release {
            ReleaseMode::NaiveDelete => RedisMsg::Del { key },
            ReleaseMode::CompareAndDelete => RedisMsg::CompareAndDelete {
                key,
                value: self.job.value.clone(),
            },
        };
        ctx.send(self.primary, msg);
    }

    /// What it is doing, in a few words (the card's first line).
    pub fn doing(&self) -> String {
        match &self.phase {
            Phase::Idle => "waiting for the job".to_string(),
            Phase::Acquiring => "asking for the lock".to_string(),
            Phase::Confirming => "waiting for WAIT".to_string(),
            Phase::ReadingProgress => "checking the job's progress".to_string(),
            Phase::Working { step } => format!("step {step}: working"),
            Phase::Writing { step } => format!("step {step}: writing"),
            Phase::Releasing => "releasing".to_string(),
            Phase::BackingOff => "backing off".to_string(),
            Phase::Done => "done".to_string(),
            Phase::Stopped => "stopped: write refused".to_string(),
            Phase::GaveUp => "gave up".to_string(),
        }
    }

    pub fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let s = match &self.phase {
            Phase::Idle => card::idle(),
            Phase::Acquiring => card::asking("for the lock"),
            Phase::Confirming => card::asking("waiting for WAIT"),
            Phase::ReadingProgress => card::holder("checking progress"),
            Phase::Working { step } => card::holder(card::step(*step, "working")),
            Phase::Writing { step } => card::holder(card::step(*step, "writing")),
            Phase::Releasing => card::releasing(),
            Phase::BackingOff => card::backing_off(),
            Phase::Done => card::done(),
            Phase::Stopped => card::stopped("write refused"),
            Phase::GaveUp => card::gave_up("no attempts left"),
        };
        let s = match &self.held {
            Some(h) => card::fit_badge(s.badge("token", h.token), "lock", &h.value),
            None => s,
        };
        s.minor(format!("talks to {}", view.name(self.primary)))
    }
}

impl Participant for RedisWorker {
    type Msg = ClientMsg;
    type Timer = WorkerTimer;
    type Durable = JobDurable;
    type Config = WorkerPlan;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.start(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ClientMsg) {
        self.message(ctx, from, msg);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: WorkerTimer) {
        self.timer(ctx, timer);
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        self.peer_down(ctx, peer);
    }

    fn watches(&self, peer: NodeId) -> bool {
        RedisWorker::watches(self, peer)
    }

    fn recover(plan: &WorkerPlan, _id: NodeId, durable: &JobDurable) -> Self {
        RedisWorker::recover(plan, durable)
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        RedisWorker::summary(self, view)
    }

    fn durable_summary(_plan: &WorkerPlan, durable: &JobDurable, _view: &ViewCtx<'_>) -> Summary {
        durable.summary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{persisted, sent, Harness};

    const STORE: NodeId = NodeId(0);
    const LEDGER: NodeId = NodeId(1);
    const SENTINEL: NodeId = NodeId(2);

    fn worker() -> Harness<RedisWorker> {
        let plan = WorkerPlan {
            job: JobPlan {
                short: "a".into(),
                key: "lock".into(),
                ttl_ms: 30_000,
                start_at_ms: 0,
                retry_ms: 500,
                max_attempts: 3,
                steps: 2,
                step_ms: 500,
                amount: 10,
                ledger: LEDGER,
            },
            fence_key: "fence".into(),
            wait: None,
            release: ReleaseMode::CompareAndDelete,
            request_timeout_ms: 300,
            sentinels: vec![SENTINEL],
            first_primary: STORE,
        };
        let w = RedisWorker::recover(&plan, &JobDurable { finished: false });
        Harness::new(NodeId(3), w, &["store-1", "ledger", "sentinel", "worker-a"])
    }

    fn granted(w: &mut Harness<RedisWorker>, token: u64) {
        w.fire(WorkerTimer::JobStart);
        let reply = RedisMsg::SetReply {
            key: "lock".into(),
            ok: true,
            counter: Some(token),
        };
        let fx = w.deliver(STORE, ClientMsg::Redis(reply));
        assert_eq!(sent::<_, LeaseMsg>(&fx), vec![(LEDGER, LeaseMsg::ReadProgress)]);
    }

    #[test]
    fn a_granted_worker_writes_with_its_token_and_stops_when_the_ledger_refuses() {
        let mut w = worker();
        granted(&mut w, 42);
        assert!(w.node.believes_it_holds());
        w.deliver(LEDGER, ClientMsg::Ledger(LeaseMsg::Progress { steps_done: 0 }));
        let fx = w.fire(WorkerTimer::StepDone { step: 1 });
        assert_eq!(
            sent::<_, LeaseMsg>(&fx),
            vec![(
                LEDGER,
                LeaseMsg::Write {
                    step: 1,
                    amount: 10,
                    token: FencingToken(42),
                    check: WriteCheck::TokenPredicate,
                }
            )]
        );
        let refused = LeaseMsg::WriteResult {
            step: 1,
            token: FencingToken(42),
            accepted: false,
            reason: None,
        };
        w.deliver(LEDGER, ClientMsg::Ledger(refused));
        assert_eq!(w.node.phase, Phase::Stopped);
        assert!(!w.node.believes_it_holds());
    }

    #[test]
    fn a_job_the_ledger_has_finished_is_recorded_done_and_the_lock_released() {
        let mut w = worker();
        granted(&mut w, 42);
        let fx = w.deliver(LEDGER, ClientMsg::Ledger(LeaseMsg::Progress { steps_done: 2 }));
        assert_eq!(persisted(&fx), vec![&JobDurable { finished: true }]);
        let release = sent::<_, RedisMsg>(&fx);
        assert!(
            matches!(&release[..], [(STORE, RedisMsg::CompareAndDelete { key, value })] if key == "lock" && value.starts_with("a-")),
            "{release:?}"
        );
        assert_eq!(w.node.phase, Phase::Releasing);
    }
}
