//! A worker that takes a ZooKeeper lock with the classic recipe and then posts its batch of
//! debits to the fenced ledger, each carrying its lock node's sequence number as the token.
//!
//! The recipe: create `/lock/n-` as an ephemeral sequential node; list `/lock`; the lowest
//! number holds the lock. Otherwise wait — either for the one node just below its own to
//! go ([`WatchMode::Predecessor`]) or for any change under `/lock` ([`WatchMode::LockNode`],
//! the herd) — and list again. Its session is kept alive by pings; a worker frozen in a pause
//! sends none, so the service expires the session and deletes the node.

use super::card;
use super::lease_msg::{LeaseMsg, WriteCheck};
use super::zookeeper::{base_name, secs, sequence_of, short_name, SessionId, WatchEvent, ZkMsg};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::message::{Inbox, Message};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::time::MS_US;
use crate::kernel::view::{Summary, Tone};

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

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkPhase {
    Idle,
    Connecting,
    Creating,
    Listing,
    /// Waiting for the watch on this predecessor.
    WatchingPredecessor(String),
    /// Waiting for any change under the lock path.
    WatchingLockNode,
    Working {
        step: u32,
    },
    Writing {
        step: u32,
    },
    Releasing,
    Closing,
    Done,
    /// The session expired under it; the lock was gone since the service deleted the node.
    Expired,
    /// The ledger refused a write: a newer holder exists.
    Fenced,
}

/// Survives a crash: whether its batch is posted. (Its plan is its configuration, kept by
/// the engine.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkWorkerDurable {
    pub finished: bool,
}

/// What a worker takes off the wire: ZooKeeper's replies and watches, and the ledger's
/// answers to its debits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkWorkerMsg {
    Zk(ZkMsg),
    Ledger(LeaseMsg),
}

impl Inbox for ZkWorkerMsg {
    fn accept(msg: Box<dyn Message>) -> Option<Self> {
        match msg.downcast::<ZkMsg>() {
            Ok(m) => Some(ZkWorkerMsg::Zk(m)),
            Err(msg) => msg.downcast::<LeaseMsg>().ok().map(ZkWorkerMsg::Ledger),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkWorkerTimer {
    /// Its job fires.
    Start,
    /// Time to ping so the session stays alive.
    Ping,
    /// The work of one step is done.
    StepDone { step: u32 },
}

impl Label for ZkWorkerTimer {
    fn label(&self) -> String {
        match self {
            ZkWorkerTimer::Start => "the job fires".into(),
            ZkWorkerTimer::Ping => "time to ping".into(),
            ZkWorkerTimer::StepDone { step } => format!("finishes the work of step {step}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkLockWorker {
    pub plan: ZkWorkerPlan,
    pub phase: ZkPhase,
    pub session: Option<SessionId>,
    /// Full path of its lock node.
    pub node: Option<String>,
    /// Set once it concluded it holds the lock.
    pub token: Option<FencingToken>,
    /// Watch notifications it received while waiting.
    pub wakeups: u32,
    pub finished: bool,
}

impl ZkLockWorker {
    pub fn recover(plan: ZkWorkerPlan, d: &ZkWorkerDurable) -> ZkLockWorker {
        ZkLockWorker {
            plan,
            phase: if d.finished { ZkPhase::Done } else { ZkPhase::Idle },
            session: None,
            node: None,
            token: None,
            wakeups: 0,
            finished: d.finished,
        }
    }

    /// Whether it currently acts as the lock holder.
    pub fn believes_it_holds(&self) -> bool {
        self.token.is_some() && matches!(self.phase, ZkPhase::Working { .. } | ZkPhase::Writing { .. })
    }

    pub fn start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.finished {
            ctx.note(format!("{} is up again; its batch is already posted.", ctx.me()));
            return;
        }
        ctx.set_timer(ZkWorkerTimer::Start, self.plan.start_ms * MS_US);
    }

    pub fn timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ZkWorkerTimer) {
        match timer {
            ZkWorkerTimer::Start if self.phase == ZkPhase::Idle => {
                self.phase = ZkPhase::Connecting;
                ctx.note(format!(
                    "{}'s job fires. It opens a ZooKeeper session before touching the lock.",
                    ctx.me()
                ));
                ctx.send(
                    self.plan.service,
                    ZkMsg::Connect {
                        timeout_ms: self.plan.session_timeout_ms,
                    },
                );
            }
            ZkWorkerTimer::Ping => {
                if let Some(session) = self.session {
                    ctx.send(self.plan.service, ZkMsg::Ping { session });
                    ctx.set_timer(ZkWorkerTimer::Ping, self.ping_every_us());
                }
            }
            ZkWorkerTimer::StepDone { step } if self.phase == (ZkPhase::Working { step }) => {
                let Some(token) = self.token else { return };
                self.phase = ZkPhase::Writing { step };
                ctx.note(format!(
                    "{} has done step {step}'s work and sends the debit; its token {token} is part of the write's WHERE clause.",
                    ctx.me()
                ));
                ctx.send(
                    self.plan.ledger,
                    LeaseMsg::Write {
                        step,
                        amount: self.plan.amount_per_step,
                        token,
                        check: WriteCheck::TokenPredicate,
                    },
                );
            }
            _ => {}
        }
    }

    /// A third of the session timeout, as ZooKeeper clients do.
    fn ping_every_us(&self) -> u64 {
        (self.plan.session_timeout_ms * MS_US / 3).max(MS_US)
    }

    fn list(&mut self, ctx: &mut Ctx<'_, Self>) {
        let Some(session) = self.session else { return };
        self.phase = ZkPhase::Listing;
        ctx.send(
            self.plan.service,
            ZkMsg::GetChildren {
                session,
                path: self.plan.lock_path.clone(),
                watch: self.plan.watch == WatchMode::LockNode,
            },
        );
    }

    pub fn message(&mut self, ctx: &mut Ctx<'_, Self>, msg: ZkMsg) {
        match msg {
            ZkMsg::Connected { session, .. } if self.phase == ZkPhase::Connecting => {
                self.session = Some(session);
                self.phase = ZkPhase::Creating;
                ctx.set_timer(ZkWorkerTimer::Ping, self.ping_every_us());
                ctx.send(
                    self.plan.service,
                    ZkMsg::CreateSequential {
                        session,
                        prefix: format!("{}/n-", self.plan.lock_path),
                    },
                );
            }
            ZkMsg::Created { path, .. } if self.phase == ZkPhase::Creating => {
                self.node = Some(path);
                self.list(ctx);
            }
            ZkMsg::Children { children, .. } if self.phase == ZkPhase::Listing => self.listed(ctx, children),
            ZkMsg::ExistsReply { exists, path } => {
                if self.phase != ZkPhase::WatchingPredecessor(path.clone()) {
                    return;
                }
                if exists {
                    ctx.note(format!(
                        "{} waits. Its watch is on {} alone, so only that node's deletion will wake it.",
                        ctx.me(),
                        base_name(&path)
                    ));
                } else {
                    ctx.note(format!(
                        "{} went before the watch was set: {} lists again.",
                        base_name(&path),
                        ctx.me()
                    ));
                    self.list(ctx);
                }
            }
            ZkMsg::Watch { path, event } => self.woken(ctx, &path, event),
            ZkMsg::DeleteReply { .. } if self.phase == ZkPhase::Releasing => {
                let Some(session) = self.session else { return };
                self.phase = ZkPhase::Closing;
                ctx.send(self.plan.service, ZkMsg::Close { session });
            }
            ZkMsg::Closed if self.phase == ZkPhase::Closing => {
                self.session = None;
                ctx.cancel_timer(ZkWorkerTimer::Ping);
                self.phase = ZkPhase::Done;
                ctx.note(format!("{} closes its session and is done.", ctx.me()));
            }
            ZkMsg::SessionExpired { .. } => self.expired(ctx),
            _ => {}
        }
    }

    /// The ledger's answer to a debit: go on with the next step (or release), or stop if the
    /// fence refused it.
    pub fn ledger_reply(&mut self, ctx: &mut Ctx<'_, Self>, msg: LeaseMsg) {
        let LeaseMsg::WriteResult { accepted, reason, .. } = msg else {
            return;
        };
        let ZkPhase::Writing { step } = self.phase else {
            return;
        };
        if accepted {
            if step + 1 < self.plan.first_step + self.plan.steps {
                self.work(ctx, step + 1);
            } else {
                self.release(ctx);
            }
        } else {
            ctx.note(format!(
                "{}'s debit was refused ({}). It does not hold the lock any more, whatever it believed; it stops.",
                ctx.me(),
                reason.map(|r| r.text()).unwrap_or_default()
            ));
            self.token = None;
            self.phase = ZkPhase::Fenced;
        }
    }

    fn listed(&mut self, ctx: &mut Ctx<'_, Self>, children: Vec<String>) {
        let Some(node) = self.node.clone() else { return };
        let mine = base_name(&node).to_string();
        let Some(pos) = children.iter().position(|c| *c == mine) else {
            // Our node is gone: the session must have expired; the expiry answer follows.
            return;
        };
        if pos == 0 {
            let token = FencingToken(sequence_of(&mine).unwrap_or(0));
            self.token = Some(token);
            ctx.note(format!(
                "{mine} is the lowest child of {}: {} holds the lock. Its sequence number {token} is its fencing token.",
                self.plan.lock_path, ctx.me()
            ));
            self.work(ctx, self.plan.first_step);
            return;
        }
        let Some(session) = self.session else { return };
        match self.plan.watch {
            WatchMode::Predecessor => {
                let before = format!("{}/{}", self.plan.lock_path, children[pos - 1]);
                ctx.note(format!(
                    "{} is number {} in line. It watches only {}, the node just ahead of its own.",
                    ctx.me(),
                    pos + 1,
                    children[pos - 1]
                ));
                self.phase = ZkPhase::WatchingPredecessor(before.clone());
                ctx.send(
                    self.plan.service,
                    ZkMsg::Exists {
                        session,
                        path: before,
                        watch: true,
                    },
                );
            }
            WatchMode::LockNode => {
                ctx.note(format!(
                    "{} is number {} in line and waits for any change under {}, like every other waiter.",
                    ctx.me(),
                    pos + 1,
                    self.plan.lock_path
                ));
                self.phase = ZkPhase::WatchingLockNode;
            }
        }
    }

    fn woken(&mut self, ctx: &mut Ctx<'_, Self>, path: &str, event: WatchEvent) {
        let waiting = match (&self.phase, event) {
            (ZkPhase::WatchingPredecessor(p), WatchEvent::NodeDeleted) => p == path,
            (ZkPhase::WatchingLockNode, WatchEvent::ChildrenChanged) => true,
            _ => false,
        };
        if !waiting {
            return;
        }
        self.wakeups += 1;
        ctx.note(match event {
            WatchEvent::NodeDeleted => format!(
                "{} wakes: the node ahead of it is gone. It lists {} to see whether it is first now.",
                ctx.me(), self.plan.lock_path
            ),
            WatchEvent::ChildrenChanged => format!(
                "{} wakes (wake-up number {} for it) and lists {} again, though most likely it is still not first.",
                ctx.me(), self.wakeups, self.plan.lock_path
            ),
        });
        self.list(ctx);
    }

    fn work(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.phase = ZkPhase::Working { step };
        ctx.set_timer(ZkWorkerTimer::StepDone { step }, self.plan.step_ms * MS_US);
    }

    fn release(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.finished = true;
        ctx.persist(ZkWorkerDurable { finished: true });
        self.token = None;
        let (Some(session), Some(node)) = (self.session, self.node.clone()) else {
            return;
        };
        ctx.note(format!(
            "{} has posted its whole batch and releases the lock by deleting {}.",
            ctx.me(),
            base_name(&node)
        ));
        self.phase = ZkPhase::Releasing;
        ctx.send(self.plan.service, ZkMsg::Delete { session, path: node });
    }

    fn expired(&mut self, ctx: &mut Ctx<'_, Self>) {
        if matches!(self.phase, ZkPhase::Expired | ZkPhase::Done) {
            return;
        }
        ctx.note(if self.believes_it_holds() || self.phase == ZkPhase::Fenced {
            format!(
                "{} learns that its session expired. It has not held the lock since ZooKeeper deleted its node — {} of its silence, long before it found out.",
                ctx.me(),
                secs(self.plan.session_timeout_ms)
            )
        } else {
            format!("{} learns that its session expired; its place in line is gone.", ctx.me())
        });
        if let ZkPhase::Working { step } = self.phase {
            ctx.cancel_timer(ZkWorkerTimer::StepDone { step });
        }
        ctx.cancel_timer(ZkWorkerTimer::Ping);
        self.session = None;
        self.token = None;
        self.phase = ZkPhase::Expired;
    }

    pub fn summary(&self) -> Summary {
        let mut s = match &self.phase {
            ZkPhase::Idle => card::idle(),
            ZkPhase::Connecting => card::asking("connecting"),
            ZkPhase::Creating => card::asking("creating its lock node"),
            ZkPhase::Listing => card::asking("listing the lock's children"),
            ZkPhase::WatchingPredecessor(p) => {
                card::waiting(format!("watching {}", short_name(base_name(p))))
            }
            ZkPhase::WatchingLockNode => card::waiting("watching the lock node"),
            ZkPhase::Working { step } => card::holder(card::step(*step, "working")),
            ZkPhase::Writing { step } => card::holder(card::step(*step, "writing")),
            ZkPhase::Releasing => card::releasing(),
            ZkPhase::Closing => Summary::new("closing", Tone::Quiet).detail("closing its session"),
            ZkPhase::Done => card::done(),
            ZkPhase::Expired => Summary::new("expired", Tone::Failed).detail("its session expired"),
            ZkPhase::Fenced => card::stopped("write rejected"),
        };
        match (self.token, &self.node) {
            (Some(t), _) => s = s.badge("token", t),
            (None, Some(n)) if self.session.is_some() => {
                s = s
                    .badge("node", short_name(base_name(n)))
                    .minor(base_name(n).to_string())
            }
            _ => {}
        }
        if self.wakeups > 0 {
            s = s.badge("woken", self.wakeups);
        }
        s
    }
}

impl Participant for ZkLockWorker {
    type Msg = ZkWorkerMsg;
    type Timer = ZkWorkerTimer;
    type Durable = ZkWorkerDurable;
    type Config = ZkWorkerPlan;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.start(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, _from: NodeId, msg: ZkWorkerMsg) {
        match msg {
            ZkWorkerMsg::Zk(m) => self.message(ctx, m),
            ZkWorkerMsg::Ledger(m) => self.ledger_reply(ctx, m),
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ZkWorkerTimer) {
        self.timer(ctx, timer);
    }

    fn recover(plan: &ZkWorkerPlan, _id: NodeId, durable: &ZkWorkerDurable) -> Self {
        ZkLockWorker::recover(plan.clone(), durable)
    }

    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        ZkLockWorker::summary(self)
    }

    fn durable_summary(_plan: &ZkWorkerPlan, durable: &ZkWorkerDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down(if durable.finished {
            "batch posted"
        } else {
            "batch not posted"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{narration, persisted, sent, Harness};
    use crate::kernel::time::MS_US;
    use crate::protocols::lease_msg::RejectReason;
    use crate::protocols::zookeeper::Zxid;

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
        let w = ZkLockWorker::recover(plan(steps), &ZkWorkerDurable { finished: false });
        let mut h = Harness::new(ME, w, &["zookeeper", "ledger", "worker-1"]);
        h.fire(ZkWorkerTimer::Start);
        h.deliver(
            SERVICE,
            ZkWorkerMsg::Zk(ZkMsg::Connected {
                session: SessionId(1),
                timeout_ms: 3_000,
            }),
        );
        h.deliver(
            SERVICE,
            ZkWorkerMsg::Zk(ZkMsg::Created {
                path: "/lock/n-0000000000".into(),
                zxid: Zxid(2),
            }),
        );
        let fx = h.deliver(
            SERVICE,
            ZkWorkerMsg::Zk(ZkMsg::Children {
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
        assert_eq!(ZkWorkerMsg::accept(zk), Some(ZkWorkerMsg::Zk(ZkMsg::Pong)));
        let ledger: Box<dyn Message> = Box::new(LeaseMsg::ReadToken);
        assert_eq!(
            ZkWorkerMsg::accept(ledger),
            Some(ZkWorkerMsg::Ledger(LeaseMsg::ReadToken))
        );
        let other: Box<dyn Message> = Box::new(ZkWorkerTimer::Ping);
        assert_eq!(ZkWorkerMsg::accept(other), None);
    }

    #[test]
    fn the_holder_debits_the_ledger_directly_with_its_sequence_number() {
        let mut h = holder(1);
        assert_eq!(h.node.phase, ZkPhase::Working { step: 1 });
        let fx = h.fire(ZkWorkerTimer::StepDone { step: 1 });
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
        let fx = h.deliver(
            LEDGER,
            ZkWorkerMsg::Ledger(LeaseMsg::WriteResult {
                step: 1,
                token: FencingToken(0),
                accepted: true,
                reason: None,
            }),
        );
        assert_eq!(persisted(&fx), vec![&ZkWorkerDurable { finished: true }]);
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
        h.fire(ZkWorkerTimer::StepDone { step: 1 });
        let fx = h.deliver(
            LEDGER,
            ZkWorkerMsg::Ledger(LeaseMsg::WriteResult {
                step: 1,
                token: FencingToken(0),
                accepted: false,
                reason: Some(RejectReason::StaleToken {
                    token: FencingToken(0),
                    highest: FencingToken(1),
                }),
            }),
        );
        assert!(narration(&fx).contains("worker-1's debit was refused (token 0 < 1"));
        assert_eq!(h.node.phase, ZkPhase::Fenced);
        assert!(!h.node.believes_it_holds());
    }

    #[test]
    fn it_pings_every_third_of_the_session_timeout() {
        let w = ZkLockWorker::recover(plan(1), &ZkWorkerDurable { finished: false });
        assert_eq!(w.ping_every_us(), 1_000 * MS_US);
    }
}
