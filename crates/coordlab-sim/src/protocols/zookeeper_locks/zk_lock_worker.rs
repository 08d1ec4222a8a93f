//! A worker that takes a ZooKeeper lock with the classic recipe and then posts its batch of
//! debits to the fenced ledger, each carrying its lock node's sequence number as the token.
//!
//! The recipe: create `/lock/n-` as an ephemeral sequential node; list `/lock`; the lowest
//! number holds the lock. Otherwise wait — either for the one node just below its own to
//! go ([`WatchMode::Predecessor`]) or for any change under `/lock` ([`WatchMode::LockNode`],
//! the herd) — and list again. Its session is kept alive by pings; a worker frozen in a pause
//! sends none, so the service expires the session and deletes the node.
//!
//! The job itself is the [`JobRunner`]'s; this file is the lock side, [`ZkLock`].

use super::zookeeper::{base_name, sequence_of, SessionId, WatchEvent, ZkMsg};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::presentation::narration::zookeeper_locks::zk_lock_worker::ZkLockWorkerSaw;
use crate::protocols::job::{plans_job, At, JobCtx, JobRunner, JobTimer, LockClient, Phase, Turn};
use crate::protocols::lease::lease_msg::{RejectReason, WriteCheck};
use crate::protocols::redis_locks::redis_job::{Job, JobDurable, JobPlan, Next};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchMode {
    /// `exists(predecessor, watch)`: a release wakes only the next in line.
    Predecessor,
    /// `getChildren(/lock, watch)`: every change wakes every waiter.
    LockNode,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkWorkerPlan {
    pub service: NodeId,
    pub ledger: NodeId,
    pub lock_path: String,
    pub watch: WatchMode,
    pub session_timeout_ms: u64,
    pub start_ms: u64,
    pub steps: u32,
    pub step_ms: u64,
    pub amount_per_step: i64,
    /// The ledger step number of this worker's first debit: each worker posts its own batch,
    /// numbered so that no two workers' debits share a step.
    pub first_step: u32,
}

/// The worker's configuration as the runner holds it: the job, and the recipe's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkPlan {
    pub job: JobPlan,
    pub zk: ZkWorkerPlan,
}

plans_job!(ZkPlan);

impl From<ZkWorkerPlan> for ZkPlan {
    fn from(zk: ZkWorkerPlan) -> ZkPlan {
        let job = JobPlan {
            key: zk.lock_path.clone(),
            ttl_ms: zk.session_timeout_ms,
            start_at_ms: zk.start_ms,
            max_attempts: 1,
            ..JobPlan::of_steps(zk.steps, zk.step_ms, zk.amount_per_step, zk.ledger)
        };
        ZkPlan { job, zk }
    }
}

/// A worker: the job runner with a ZooKeeper lock.
pub type ZkLockWorker = JobRunner<ZkLock>;

/// Time to ping so the session stays alive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ping;

/// Where an attempt is in the recipe, before it is queued or holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stage {
    #[default]
    Connecting,
    Creating,
    Listing,
}

/// The lock side of a worker: its session, its lock node, and what it waits on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZkLock {
    pub stage: Stage,
    /// While queued: the node just ahead that it watches (none: the whole lock node).
    pub ahead: Option<String>,
    /// Its node is deleted and it is closing its session.
    pub closing: bool,
    pub session: Option<SessionId>,
    /// Full path of its lock node.
    pub node: Option<String>,
    /// Set once it concluded it holds the lock.
    pub token: Option<FencingToken>,
    /// Watch notifications it received while waiting.
    pub wakeups: u32,
}

type Ctx<'a, 'b> = JobCtx<'a, 'b, ZkLock>;

impl ZkLock {
    /// A third of the session timeout, as ZooKeeper clients do.
    fn ping_every_us(plan: &ZkWorkerPlan) -> u64 {
        (plan.session_timeout_ms * MS_US / 3).max(MS_US)
    }

    fn list(&mut self, ctx: Ctx, plan: &ZkWorkerPlan) -> Turn {
        let Some(session) = self.session else {
            return Turn::Stay;
        };
        self.stage = Stage::Listing;
        ctx.send(
            plan.service,
            ZkMsg::GetChildren {
                session,
                path: plan.lock_path.clone(),
                watch: plan.watch == WatchMode::LockNode,
            },
        );
        Turn::Ask
    }

    fn listed(&mut self, ctx: Ctx, plan: &ZkWorkerPlan, children: Vec<String>) -> Turn {
        let Some(node) = self.node.clone() else {
            return Turn::Stay;
        };
        let mine = base_name(&node).to_string();
        let Some(pos) = children.iter().position(|c| *c == mine) else {
            // Our node is gone: the session must have expired; the expiry answer follows.
            return Turn::Stay;
        };
        if pos == 0 {
            let token = FencingToken(sequence_of(&mine).unwrap_or(0));
            self.token = Some(token);
            ctx.note(ZkLockWorkerSaw::HoldsLock {
                me: ctx.me(),
                node: &mine,
                lock_path: &plan.lock_path,
                token,
            });
            return Turn::Work(plan.first_step);
        }
        let Some(session) = self.session else {
            return Turn::Stay;
        };
        match plan.watch {
            WatchMode::Predecessor => {
                let before = format!("{}/{}", plan.lock_path, children[pos - 1]);
                ctx.note(ZkLockWorkerSaw::WatchesPredecessor {
                    me: ctx.me(),
                    place: pos + 1,
                    ahead: &children[pos - 1],
                });
                self.ahead = Some(before.clone());
                ctx.send(
                    plan.service,
                    ZkMsg::Exists {
                        session,
                        path: before,
                        watch: true,
                    },
                );
            }
            WatchMode::LockNode => {
                ctx.note(ZkLockWorkerSaw::WaitsForAnyChange {
                    me: ctx.me(),
                    place: pos + 1,
                    lock_path: &plan.lock_path,
                });
                self.ahead = None;
            }
        }
        Turn::Watch
    }

    fn woken(&mut self, ctx: Ctx, plan: &ZkWorkerPlan, path: &str, event: WatchEvent) -> Turn {
        let waiting = match (&self.ahead, event) {
            (Some(p), WatchEvent::NodeDeleted) => p == path,
            (None, WatchEvent::ChildrenChanged) => true,
            _ => false,
        };
        if !waiting {
            return Turn::Stay;
        }
        self.wakeups += 1;
        ctx.note(ZkLockWorkerSaw::Woken {
            me: ctx.me(),
            event,
            wakeups: self.wakeups,
            lock_path: &plan.lock_path,
        });
        self.list(ctx, plan)
    }

    fn expired(&mut self, ctx: Ctx, plan: &ZkWorkerPlan, phase: &Phase) -> Turn {
        if matches!(phase, Phase::Lost | Phase::Done) {
            return Turn::Stay;
        }
        // A worker that expired while releasing had held the lock, not a place in line (it
        // dropped its token when it began to release).
        let held = (self.token.is_some() && phase.in_job()) || *phase == Phase::Releasing;
        ctx.note(ZkLockWorkerSaw::LearnsSessionExpired {
            me: ctx.me(),
            held_lock: held || *phase == Phase::Stopped,
            session_timeout_ms: plan.session_timeout_ms,
        });
        phase.stop_work(ctx);
        ctx.cancel_timer(JobTimer::Lock(Ping));
        self.session = None;
        self.token = None;
        Turn::Lost
    }
}

impl LockClient for ZkLock {
    type Plan = ZkPlan;
    type Timer = Ping;
    type Reply = ZkMsg;

    fn recover(_plan: &ZkPlan, _durable: &JobDurable) -> Self {
        ZkLock::default()
    }

    fn start(ctx: Ctx, plan: &ZkPlan, job: &Job) {
        if job.finished {
            ctx.note(ZkLockWorkerSaw::UpAgainBatchPosted { me: ctx.me() });
            return;
        }
        ctx.set_timer(JobTimer::JobStart, plan.zk.start_ms * MS_US);
    }

    fn request(&mut self, ctx: Ctx, at: At<'_, Self>) {
        self.stage = Stage::Connecting;
        ctx.note(ZkLockWorkerSaw::OpensSession { me: ctx.me() });
        let plan = &at.plan.zk;
        ctx.send(
            plan.service,
            ZkMsg::Connect {
                timeout_ms: plan.session_timeout_ms,
            },
        );
    }

    fn on_reply(&mut self, ctx: Ctx, at: At<'_, Self>, _from: NodeId, msg: ZkMsg) -> Turn {
        let (plan, phase) = (&at.plan.zk, at.phase);
        let stage = (*phase == Phase::Acquiring).then_some(self.stage);
        match msg {
            ZkMsg::Connected { session, .. } if stage == Some(Stage::Connecting) => {
                self.session = Some(session);
                self.stage = Stage::Creating;
                ctx.set_timer(JobTimer::Lock(Ping), Self::ping_every_us(plan));
                ctx.send(
                    plan.service,
                    ZkMsg::CreateSequential {
                        session,
                        prefix: format!("{}/n-", plan.lock_path),
                    },
                );
                Turn::Stay
            }
            ZkMsg::Created { path, .. } if stage == Some(Stage::Creating) => {
                self.node = Some(path);
                self.list(ctx, plan)
            }
            ZkMsg::Children { children, .. } if stage == Some(Stage::Listing) => {
                self.listed(ctx, plan, children)
            }
            ZkMsg::ExistsReply { exists, path } => {
                if *phase != Phase::Watching || self.ahead.as_ref() != Some(&path) {
                    return Turn::Stay;
                }
                if exists {
                    ctx.note(ZkLockWorkerSaw::WaitsOnNode {
                        me: ctx.me(),
                        node: base_name(&path),
                    });
                    return Turn::Stay;
                }
                ctx.note(ZkLockWorkerSaw::NodeWentBeforeWatch {
                    me: ctx.me(),
                    node: base_name(&path),
                });
                self.list(ctx, plan)
            }
            ZkMsg::Watch { path, event } if *phase == Phase::Watching => self.woken(ctx, plan, &path, event),
            ZkMsg::DeleteReply { .. } if *phase == Phase::Releasing && !self.closing => {
                let Some(session) = self.session else {
                    return Turn::Stay;
                };
                self.closing = true;
                ctx.send(plan.service, ZkMsg::Close { session });
                Turn::Stay
            }
            ZkMsg::Closed if *phase == Phase::Releasing && self.closing => {
                self.session = None;
                ctx.cancel_timer(JobTimer::Lock(Ping));
                ctx.note(ZkLockWorkerSaw::ClosesSession { me: ctx.me() });
                Turn::Released
            }
            ZkMsg::SessionExpired { .. } => self.expired(ctx, plan, phase),
            _ => Turn::Stay,
        }
    }

    fn on_timer(&mut self, ctx: Ctx, at: At<'_, Self>, _timer: Ping) -> Turn {
        if let Some(session) = self.session {
            ctx.send(at.plan.zk.service, ZkMsg::Ping { session });
            ctx.set_timer(JobTimer::Lock(Ping), Self::ping_every_us(&at.plan.zk));
        }
        Turn::Stay
    }

    /// It never backs off: it queues.
    fn written(_ctx: Ctx, plan: &ZkPlan, step: u32) -> Next {
        if step + 1 < plan.zk.first_step + plan.zk.steps {
            Next::Step(step + 1)
        } else {
            Next::Finish
        }
    }

    fn fence(&self, ctx: Ctx, step: u32) -> (FencingToken, WriteCheck) {
        let token = self.token.unwrap_or(FencingToken(0));
        ctx.note(ZkLockWorkerSaw::SendsDebit {
            me: ctx.me(),
            step,
            token,
        });
        (token, WriteCheck::TokenPredicate)
    }

    fn refused(&mut self, ctx: Ctx, _: At<'_, Self>, _: u32, reason: Option<RejectReason>) -> Option<Turn> {
        ctx.note(ZkLockWorkerSaw::DebitRefused {
            me: ctx.me(),
            reason: reason.as_ref(),
        });
        self.token = None;
        Some(Turn::Stop)
    }

    fn release(&mut self, ctx: Ctx, at: At<'_, Self>) -> bool {
        self.token = None;
        let (Some(session), Some(node)) = (self.session, self.node.clone()) else {
            return false;
        };
        ctx.note(ZkLockWorkerSaw::Releases {
            me: ctx.me(),
            node: base_name(&node),
        });
        ctx.send(at.plan.zk.service, ZkMsg::Delete { session, path: node });
        true
    }

    fn holds(&self) -> bool {
        self.token.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::message::{Inbox, Message};
    use crate::kernel::testing::{narration, persisted, sent, Harness};
    use crate::protocols::job::JobMsg;
    use crate::protocols::lease::lease_msg::LeaseMsg;
    use crate::protocols::lease::lease_msg::RejectReason;
    use crate::protocols::zookeeper_locks::zookeeper::Zxid;

    const SERVICE: NodeId = NodeId(0);
    const LEDGER: NodeId = NodeId(1);
    const ME: NodeId = NodeId(2);

    fn plan(steps: u32) -> ZkWorkerPlan {
        ZkWorkerPlan {
            service: SERVICE,
            ledger: LEDGER,
            lock_path: "/lock".into(),
            watch: WatchMode::Predecessor,
            session_timeout_ms: 3_000,
            start_ms: 100,
            steps,
            step_ms: 1_000,
            amount_per_step: 10,
            first_step: 1,
        }
    }

    /// A worker that has connected, created `n-0000000000` and found it first in line.
    fn holder(steps: u32) -> Harness<ZkLockWorker> {
        let w = ZkLockWorker::recover(&plan(steps).into(), &JobDurable::default());
        let mut h = Harness::new(ME, w, &["zookeeper", "ledger", "worker-1"]);
        h.fire(JobTimer::JobStart);
        h.deliver(
            SERVICE,
            JobMsg::Lock(ZkMsg::Connected {
                session: SessionId(1),
                timeout_ms: 3_000,
            }),
        );
        h.deliver(
            SERVICE,
            JobMsg::Lock(ZkMsg::Created {
                path: "/lock/n-0000000000".into(),
                zxid: Zxid(2),
            }),
        );
        let fx = h.deliver(
            SERVICE,
            JobMsg::Lock(ZkMsg::Children {
                path: "/lock".into(),
                children: vec!["n-0000000000".into()],
            }),
        );
        assert!(narration(&fx).contains("worker-1 holds the lock"));
        h
    }

    #[test]
    fn it_takes_both_protocols_off_the_wire_and_nothing_else() {
        let zk: Box<dyn Message> = Box::new(ZkMsg::Pong);
        assert_eq!(JobMsg::<ZkMsg>::accept(zk), Some(JobMsg::Lock(ZkMsg::Pong)));
        let ledger: Box<dyn Message> = Box::new(LeaseMsg::ReadToken);
        assert_eq!(
            JobMsg::<ZkMsg>::accept(ledger),
            Some(JobMsg::Ledger(LeaseMsg::ReadToken))
        );
        let other: Box<dyn Message> = Box::new(Ping);
        assert_eq!(JobMsg::<ZkMsg>::accept(other), None);
    }

    /// The ledger's answer to step 1's debit, made with token 0 (the first node's sequence
    /// number): accepted unless a `reason` refuses it.
    fn step_1_result(reason: Option<RejectReason>) -> JobMsg<ZkMsg> {
        JobMsg::Ledger(LeaseMsg::WriteResult {
            step: 1,
            token: FencingToken(0),
            accepted: reason.is_none(),
            reason,
        })
    }

    #[test]
    fn the_holder_debits_the_ledger_directly_with_its_sequence_number() {
        let mut h = holder(1);
        assert_eq!(h.node.phase, Phase::Working { step: 1 });
        let fx = h.fire(JobTimer::StepDone { step: 1 });
        assert_eq!(
            sent::<_, LeaseMsg>(&fx),
            vec![(
                LEDGER,
                LeaseMsg::Write {
                    step: 1,
                    amount: 10,
                    token: FencingToken(0),
                    check: WriteCheck::TokenPredicate,
                }
            )]
        );
        let fx = h.deliver(LEDGER, step_1_result(None));
        assert_eq!(
            persisted(&fx),
            vec![&JobDurable {
                finished: true,
                requests: 0
            }]
        );
        assert_eq!(
            sent::<_, ZkMsg>(&fx),
            vec![(
                SERVICE,
                ZkMsg::Delete {
                    session: SessionId(1),
                    path: "/lock/n-0000000000".into(),
                }
            )]
        );
    }

    #[test]
    fn a_refused_debit_stops_the_worker() {
        let mut h = holder(2);
        h.fire(JobTimer::StepDone { step: 1 });
        let stale = RejectReason::StaleToken {
            token: FencingToken(0),
            highest: FencingToken(1),
            by_writer: false,
        };
        let fx = h.deliver(LEDGER, step_1_result(Some(stale)));
        assert!(narration(&fx).contains("worker-1's debit was refused (token 0 < 1"));
        assert_eq!(h.node.phase, Phase::Stopped);
        assert!(!h.node.believes_it_holds());
    }

    #[test]
    fn it_pings_every_third_of_the_session_timeout() {
        assert_eq!(ZkLock::ping_every_us(&plan(1)), 1_000 * MS_US);
    }
}
