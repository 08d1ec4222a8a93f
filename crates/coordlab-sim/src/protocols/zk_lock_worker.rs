//! A worker that takes a ZooKeeper lock with the classic recipe and then posts its batch of
//! debits to the fenced ledger, each carrying its lock node's sequence number as the token.
//!
//! The recipe: create `/lock/n-` as an ephemeral sequential node; list `/lock`; the lowest
//! number holds the lock. Otherwise wait — either for the one node just below its own to
//! go ([`WatchMode::Predecessor`]) or for any change under `/lock` ([`WatchMode::LockNode`],
//! the herd) — and list again. Its session is kept alive by pings; a worker frozen in a pause
//! sends none, so the service expires the session and deletes the node.

use super::lease_msg::{LeaseMsg, WriteCheck};
use super::zookeeper::{base_name, secs, sequence_of, SessionId, WatchEvent, ZkMsg, ZkTimer};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;

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

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkWorkerDurable {
    pub name: String,
    pub plan: ZkWorkerPlan,
    pub finished: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkLockWorker {
    pub name: String,
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
    pub fn recover(d: &ZkWorkerDurable) -> ZkLockWorker {
        ZkLockWorker {
            name: d.name.clone(),
            plan: d.plan.clone(),
            phase: if d.finished { ZkPhase::Done } else { ZkPhase::Idle },
            session: None,
            node: None,
            token: None,
            wakeups: 0,
            finished: d.finished,
        }
    }

    pub fn durable(&self) -> ZkWorkerDurable {
        ZkWorkerDurable {
            name: self.name.clone(),
            plan: self.plan.clone(),
            finished: self.finished,
        }
    }

    /// Whether it currently acts as the lock holder.
    pub fn believes_it_holds(&self) -> bool {
        self.token.is_some() && matches!(self.phase, ZkPhase::Working { .. } | ZkPhase::Writing { .. })
    }

    pub fn start<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
    {
        if self.finished {
            ctx.note(format!("{} is up again; its batch is already posted.", self.name));
            return;
        }
        ctx.set_timer(ZkTimer::Start, self.plan.start_ms * MS_US);
    }

    pub fn timer<P>(&mut self, ctx: &mut Ctx<'_, P>, timer: ZkTimer)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
    {
        match timer {
            ZkTimer::Start if self.phase == ZkPhase::Idle => {
                self.phase = ZkPhase::Connecting;
                ctx.note(format!(
                    "{}'s job fires. It opens a ZooKeeper session before touching the lock.",
                    self.name
                ));
                ctx.send(
                    self.plan.service,
                    ZkMsg::Connect {
                        timeout_ms: self.plan.session_timeout_ms,
                    },
                );
            }
            ZkTimer::Ping => {
                if let Some(session) = self.session {
                    ctx.send(self.plan.service, ZkMsg::Ping { session });
                    ctx.set_timer(ZkTimer::Ping, self.ping_every_us());
                }
            }
            ZkTimer::StepDone { step } if self.phase == (ZkPhase::Working { step }) => {
                let Some(token) = self.token else { return };
                self.phase = ZkPhase::Writing { step };
                ctx.note(format!(
                    "{} has done step {step}'s work and sends the debit; its token {token} is part of the write's WHERE clause.",
                    self.name
                ));
                ctx.send(
                    self.plan.ledger,
                    ZkMsg::Ledger(LeaseMsg::Write {
                        step,
                        amount: self.plan.amount_per_step,
                        token,
                        check: WriteCheck::TokenPredicate,
                    }),
                );
            }
            _ => {}
        }
    }

    /// A third of the session timeout, as ZooKeeper clients do.
    fn ping_every_us(&self) -> u64 {
        (self.plan.session_timeout_ms * MS_US / 3).max(MS_US)
    }

    fn list<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
    {
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

    pub fn message<P>(&mut self, ctx: &mut Ctx<'_, P>, msg: ZkMsg)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
        P::Durable: From<ZkWorkerDurable>,
    {
        match msg {
            ZkMsg::Connected { session, .. } if self.phase == ZkPhase::Connecting => {
                self.session = Some(session);
                self.phase = ZkPhase::Creating;
                ctx.set_timer(ZkTimer::Ping, self.ping_every_us());
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
                        self.name,
                        base_name(&path)
                    ));
                } else {
                    ctx.note(format!(
                        "{} went before the watch was set: {} lists again.",
                        base_name(&path),
                        self.name
                    ));
                    self.list(ctx);
                }
            }
            ZkMsg::Watch { path, event } => self.woken(ctx, &path, event),
            ZkMsg::Ledger(LeaseMsg::WriteResult { accepted, reason, .. }) => {
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
                        self.name,
                        reason.map(|r| r.text()).unwrap_or_default()
                    ));
                    self.token = None;
                    self.phase = ZkPhase::Fenced;
                }
            }
            ZkMsg::DeleteReply { .. } if self.phase == ZkPhase::Releasing => {
                let Some(session) = self.session else { return };
                self.phase = ZkPhase::Closing;
                ctx.send(self.plan.service, ZkMsg::Close { session });
            }
            ZkMsg::Closed if self.phase == ZkPhase::Closing => {
                self.session = None;
                ctx.cancel_timer(ZkTimer::Ping);
                self.phase = ZkPhase::Done;
                ctx.note(format!("{} closes its session and is done.", self.name));
            }
            ZkMsg::SessionExpired { .. } => self.expired(ctx),
            _ => {}
        }
    }

    fn listed<P>(&mut self, ctx: &mut Ctx<'_, P>, children: Vec<String>)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
    {
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
                self.plan.lock_path, self.name
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
                    self.name,
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
                    self.name,
                    pos + 1,
                    self.plan.lock_path
                ));
                self.phase = ZkPhase::WatchingLockNode;
            }
        }
    }

    fn woken<P>(&mut self, ctx: &mut Ctx<'_, P>, path: &str, event: WatchEvent)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
    {
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
                self.name, self.plan.lock_path
            ),
            WatchEvent::ChildrenChanged => format!(
                "{} wakes (wake-up number {} for it) and lists {} again, though most likely it is still not first.",
                self.name, self.wakeups, self.plan.lock_path
            ),
        });
        self.list(ctx);
    }

    fn work<P>(&mut self, ctx: &mut Ctx<'_, P>, step: u32)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
    {
        self.phase = ZkPhase::Working { step };
        ctx.set_timer(ZkTimer::StepDone { step }, self.plan.step_ms * MS_US);
    }

    fn release<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
        P::Durable: From<ZkWorkerDurable>,
    {
        self.finished = true;
        ctx.persist(self.durable().into());
        self.token = None;
        let (Some(session), Some(node)) = (self.session, self.node.clone()) else {
            return;
        };
        ctx.note(format!(
            "{} has posted its whole batch and releases the lock by deleting {}.",
            self.name,
            base_name(&node)
        ));
        self.phase = ZkPhase::Releasing;
        ctx.send(self.plan.service, ZkMsg::Delete { session, path: node });
    }

    fn expired<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = ZkMsg, Timer = ZkTimer>,
    {
        if matches!(self.phase, ZkPhase::Expired | ZkPhase::Done) {
            return;
        }
        ctx.note(if self.believes_it_holds() || self.phase == ZkPhase::Fenced {
            format!(
                "{} learns that its session expired. It has not held the lock since ZooKeeper deleted its node — {} of its silence, long before it found out.",
                self.name,
                secs(self.plan.session_timeout_ms)
            )
        } else {
            format!("{} learns that its session expired; its place in line is gone.", self.name)
        });
        if let ZkPhase::Working { step } = self.phase {
            ctx.cancel_timer(ZkTimer::StepDone { step });
        }
        ctx.cancel_timer(ZkTimer::Ping);
        self.session = None;
        self.token = None;
        self.phase = ZkPhase::Expired;
    }

    pub fn summary(&self) -> Vec<String> {
        let phase = match &self.phase {
            ZkPhase::Idle => "waiting for its job".to_string(),
            ZkPhase::Connecting => "connecting".into(),
            ZkPhase::Creating => "creating its lock node".into(),
            ZkPhase::Listing => "listing the lock's children".into(),
            ZkPhase::WatchingPredecessor(p) => format!("watching {}", base_name(p)),
            ZkPhase::WatchingLockNode => "watching the lock node".into(),
            ZkPhase::Working { step } => format!("step {step}: working"),
            ZkPhase::Writing { step } => format!("step {step}: writing"),
            ZkPhase::Releasing => "releasing".into(),
            ZkPhase::Closing => "closing its session".into(),
            ZkPhase::Done => "done".into(),
            ZkPhase::Expired => "session expired".into(),
            ZkPhase::Fenced => "stopped: write rejected".into(),
        };
        let mut lines = vec![phase];
        match (self.token, &self.node) {
            (Some(t), _) => lines.push(format!("holds the lock · token {t}")),
            (None, Some(n)) if self.session.is_some() => lines.push(format!("node {}", base_name(n))),
            _ => {}
        }
        if self.wakeups > 0 {
            lines.push(format!("woken {} time(s)", self.wakeups));
        }
        lines
    }
}
