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
//!
//! The job itself is the [`JobRunner`]'s; this file is the lock side, [`RedisLock`].

use super::redis_job::{Job, JobDurable, JobPlan};
use super::redis_msg::RedisMsg;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::presentation::narration::redis_locks::redis_worker::RedisWorkerSaw;
use crate::protocols::job::{plans_job, At, JobCtx, JobRunner, JobTimer, LockClient, Turn};
use crate::protocols::lease::lease_msg::{RejectReason, ReleaseMode, WriteCheck};

pub use crate::protocols::job::Phase;

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

plans_job!(WorkerPlan);

/// A worker: the job runner with a Redis lock.
pub type RedisWorker = JobRunner<RedisLock>;
pub type WorkerTimer = JobTimer<RequestTimeout>;

/// No answer to a request of this attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestTimeout {
    pub attempt: u32,
}

/// The lock as the worker holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub value: String,
    pub token: u64,
    pub granted_by: NodeId,
}

/// The lock side of a Redis worker: where the primary is, and the lock it holds there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisLock {
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
    pub held: Option<Held>,
}

type Ctx<'a, 'b> = JobCtx<'a, 'b, RedisLock>;

impl RedisLock {
    fn timeout(job: &Job) -> WorkerTimer {
        JobTimer::Lock(RequestTimeout { attempt: job.attempt })
    }

    /// A sentinel says where the primary is.
    fn primary_is(
        &mut self,
        ctx: Ctx,
        job: &Job,
        phase: &Phase,
        primary: NodeId,
        name: &str,
        epoch: u64,
    ) -> Turn {
        if epoch < self.epoch {
            return Turn::Stay; // a sentinel that has not heard of the latest failover
        }
        self.epoch = epoch;
        let changed = primary != self.primary;
        self.primary = primary;
        self.primary_down = false;
        if !changed {
            return Turn::Stay;
        }
        match phase {
            Phase::Working { .. } | Phase::Writing { .. } => {
                ctx.note(RedisWorkerSaw::NewPrimary {
                    me: ctx.me(),
                    name,
                    working: true,
                });
                Turn::Stay
            }
            Phase::BackingOff => Turn::RetryNow,
            Phase::Acquiring | Phase::Confirming => {
                ctx.note(RedisWorkerSaw::NewPrimary {
                    me: ctx.me(),
                    name,
                    working: false,
                });
                ctx.cancel_timer(Self::timeout(job));
                self.held = None;
                Turn::Acquire
            }
            _ => Turn::Stay,
        }
    }

    fn lose_connection(&mut self, ctx: Ctx, plan: &WorkerPlan) -> Turn {
        self.held = None;
        self.primary_down = true;
        self.ask_sentinel(ctx, plan);
        Turn::BackOff
    }

    /// Asks the next sentinel in its list where the primary is.
    fn ask_sentinel(&mut self, ctx: Ctx, plan: &WorkerPlan) {
        let sentinels = &plan.sentinels;
        if sentinels.is_empty() {
            return;
        }
        let to = sentinels[self.asked % sentinels.len()];
        self.asked += 1;
        ctx.send(to, RedisMsg::WhoIsPrimary);
    }

    fn send_release(&self, ctx: Ctx, plan: &WorkerPlan, job: &Job) {
        let key = plan.job.key.clone();
        let msg = match plan.release {
            ReleaseMode::NaiveDelete => RedisMsg::Del { key },
            ReleaseMode::CompareAndDelete => RedisMsg::CompareAndDelete {
                key,
                value: job.value.clone(),
            },
        };
        ctx.send(self.primary, msg);
    }
}

impl LockClient for RedisLock {
    type Plan = WorkerPlan;
    type Timer = RequestTimeout;
    type Reply = RedisMsg;
    /// Each attempt draws a fresh lock value, as many as the plan's `max_attempts`.
    const BOUNDED: bool = true;

    fn recover(plan: &WorkerPlan, _durable: &JobDurable) -> Self {
        RedisLock {
            primary: plan.first_primary,
            epoch: 0,
            asked: 0,
            wait_acks: Vec::new(),
            primary_down: false,
            held: None,
        }
    }

    fn ready(&mut self, ctx: Ctx, plan: &WorkerPlan) -> bool {
        if self.primary_down {
            // Ask a sentinel first; its answer (or the next retry) moves things on.
            self.ask_sentinel(ctx, plan);
        }
        !self.primary_down
    }

    fn request(&mut self, ctx: Ctx, at: At<'_, Self>) {
        let At { plan, job, .. } = at;
        let (me, primary) = (ctx.me(), ctx.name(self.primary));
        ctx.note(if job.attempt == 1 {
            RedisWorkerSaw::Fires {
                me,
                primary,
                value: &job.value,
                fence_key: &plan.fence_key,
            }
        } else {
            RedisWorkerSaw::AsksAgain {
                me,
                primary,
                attempt: job.attempt,
                value: &job.value,
            }
        });
        ctx.send(
            self.primary,
            RedisMsg::Set {
                key: plan.job.key.clone(),
                value: job.value.clone(),
                nx: true,
                px_ms: plan.job.ttl_ms,
                incr: Some(plan.fence_key.clone()),
            },
        );
        ctx.set_timer(Self::timeout(job), plan.request_timeout_ms * MS_US);
    }

    fn on_reply(&mut self, ctx: Ctx, at: At<'_, Self>, from: NodeId, msg: RedisMsg) -> Turn {
        let At { plan, job, phase } = at;
        match msg {
            RedisMsg::SetReply { ok, counter, .. } if *phase == Phase::Acquiring && from == self.primary => {
                ctx.cancel_timer(Self::timeout(job));
                if !ok {
                    ctx.note(RedisWorkerSaw::HeldElsewhere {
                        me: ctx.me(),
                        retry_ms: plan.job.retry_ms,
                    });
                    return Turn::BackOff;
                }
                let token = counter.unwrap_or(0);
                self.held = Some(Held {
                    value: job.value.clone(),
                    token,
                    granted_by: from,
                });
                match plan.wait {
                    Some((replicas, timeout_ms)) => {
                        ctx.note(RedisWorkerSaw::GotOkSendsWait {
                            me: ctx.me(),
                            from: ctx.name(from),
                            token,
                            replicas,
                            timeout_ms,
                        });
                        ctx.send(from, RedisMsg::Wait { replicas, timeout_ms });
                        ctx.set_timer(Self::timeout(job), (timeout_ms + plan.request_timeout_ms) * MS_US);
                        Turn::Confirm
                    }
                    None => {
                        ctx.note(RedisWorkerSaw::Holds {
                            me: ctx.me(),
                            from: ctx.name(from),
                            token,
                            ttl_ms: plan.job.ttl_ms,
                        });
                        Turn::Granted
                    }
                }
            }
            RedisMsg::WaitReply { acked } if *phase == Phase::Confirming && from == self.primary => {
                ctx.cancel_timer(Self::timeout(job));
                self.wait_acks.push(acked);
                let needed = plan.wait.map_or(0, |w| w.0);
                if acked >= needed {
                    ctx.note(RedisWorkerSaw::WaitConfirmed {
                        me: ctx.me(),
                        acked,
                        token: self.held.as_ref().map_or(0, |h| h.token),
                        ttl_ms: plan.job.ttl_ms,
                    });
                    Turn::Granted
                } else {
                    ctx.note(RedisWorkerSaw::WaitShort {
                        me: ctx.me(),
                        acked,
                        from: ctx.name(from),
                    });
                    self.send_release(ctx, plan, job);
                    self.held = None;
                    Turn::BackOff
                }
            }
            RedisMsg::Error { text } if from == self.primary => {
                ctx.note(RedisWorkerSaw::NotPrimary {
                    me: ctx.me(),
                    from: ctx.name(from),
                    text: &text,
                });
                ctx.cancel_timer(Self::timeout(job));
                if matches!(phase, Phase::Acquiring | Phase::Confirming) {
                    self.held = None;
                    self.ask_sentinel(ctx, plan);
                    Turn::BackOff
                } else {
                    Turn::Stay
                }
            }
            RedisMsg::PrimaryIs { primary, name, epoch } => {
                self.primary_is(ctx, job, phase, primary, &name, epoch)
            }
            RedisMsg::DelReply { deleted, .. } if *phase == Phase::Releasing => {
                ctx.note(RedisWorkerSaw::ReleaseAnswered {
                    me: ctx.me(),
                    deleted,
                });
                Turn::Released
            }
            _ => Turn::Stay,
        }
    }

    fn on_timer(&mut self, ctx: Ctx, at: At<'_, Self>, timer: RequestTimeout) -> Turn {
        let At { plan, job, phase } = at;
        if timer.attempt != job.attempt || !matches!(phase, Phase::Acquiring | Phase::Confirming) {
            return Turn::Stay;
        }
        ctx.note(RedisWorkerSaw::NoAnswer {
            me: ctx.me(),
            primary: ctx.name(self.primary),
        });
        self.lose_connection(ctx, plan)
    }

    fn on_peer_down(&mut self, ctx: Ctx, at: At<'_, Self>, peer: NodeId) -> Turn {
        let At { plan, job, phase } = at;
        if peer != self.primary {
            return Turn::Stay;
        }
        let (me, primary) = (ctx.me(), ctx.name(peer));
        match phase {
            Phase::Acquiring | Phase::Confirming => {
                ctx.note(if *phase == Phase::Acquiring {
                    RedisWorkerSaw::DropsBeforeAnswer { me, primary }
                } else {
                    RedisWorkerSaw::DropsWhileWaiting { me, primary }
                });
                ctx.cancel_timer(Self::timeout(job));
                self.lose_connection(ctx, plan)
            }
            _ => {
                self.primary_down = true;
                if matches!(phase, Phase::Working { .. } | Phase::Writing { .. }) {
                    ctx.note(RedisWorkerSaw::DropsWhileWorking { me, primary });
                }
                Turn::Stay
            }
        }
    }

    fn watches(&self, _plan: &WorkerPlan, peer: NodeId) -> bool {
        peer == self.primary
    }

    fn fence(&self, ctx: Ctx, step: u32) -> (FencingToken, WriteCheck) {
        let token = self.held.as_ref().map_or(0, |h| h.token);
        ctx.note(RedisWorkerSaw::SendsDebit {
            me: ctx.me(),
            step,
            token,
        });
        (FencingToken(token), WriteCheck::TokenPredicate)
    }

    fn refused(&mut self, ctx: Ctx, _: At<'_, Self>, step: u32, _: Option<RejectReason>) -> Option<Turn> {
        ctx.note(RedisWorkerSaw::Refused { me: ctx.me(), step });
        self.held = None;
        Some(Turn::Stop)
    }

    fn release(&mut self, ctx: Ctx, at: At<'_, Self>) -> bool {
        let At { plan, job, .. } = at;
        ctx.note(RedisWorkerSaw::Releases {
            me: ctx.me(),
            primary: ctx.name(self.primary),
            how: plan.release,
        });
        self.send_release(ctx, plan, job);
        self.held = None;
        true
    }

    fn holds(&self) -> bool {
        self.held.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{persisted, sent, Harness};
    use crate::protocols::lease::lease_msg::LeaseMsg;
    use crate::protocols::redis_locks::redis_job::{ClientMsg, JobDurable};

    const STORE: NodeId = NodeId(0);
    const LEDGER: NodeId = NodeId(1);
    const SENTINEL: NodeId = NodeId(2);

    fn worker() -> Harness<RedisWorker> {
        let plan = WorkerPlan {
            job: JobPlan {
                short: "a".into(),
                key: "lock".into(),
                ttl_ms: 30_000,
                retry_ms: 500,
                max_attempts: 3,
                ..JobPlan::of_steps(2, 500, 10, LEDGER)
            },
            fence_key: "fence".into(),
            wait: None,
            release: ReleaseMode::CompareAndDelete,
            request_timeout_ms: 300,
            sentinels: vec![SENTINEL],
            first_primary: STORE,
        };
        let w = RedisWorker::recover(&plan, &JobDurable::default());
        Harness::new(NodeId(3), w, &["store-1", "ledger", "sentinel", "worker-a"])
    }

    fn granted(w: &mut Harness<RedisWorker>, token: u64) {
        w.fire(WorkerTimer::JobStart);
        let reply = RedisMsg::SetReply {
            key: "lock".into(),
            ok: true,
            counter: Some(token),
        };
        let fx = w.deliver(STORE, ClientMsg::Lock(reply));
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
        assert_eq!(
            persisted(&fx),
            vec![&JobDurable {
                finished: true,
                requests: 0
            }]
        );
        let release = sent::<_, RedisMsg>(&fx);
        assert!(
            matches!(&release[..], [(STORE, RedisMsg::CompareAndDelete { key, value })] if key == "lock" && value.starts_with("a-")),
            "{release:?}"
        );
        assert_eq!(w.node.phase, Phase::Releasing);
    }
}
