//! A worker that takes a lock from the consensus-backed lock service and then does a
//! multi-step job on the fenced ledger, each write carrying the lock's revision as its token.
//!
//! It talks to whichever server it believes leads, follows "not the leader" redirects, and
//! resends a request that gets no answer (the server may have crashed) to the next server.
//! A resent request is the same operation: acquiring a lock it already holds answers with the
//! revision it already has. Found the lock held, it asks again later. Holding it, it renews on
//! a timer; a renewal answered "not yours any more" means it lost the lock and stops.

use super::lease_msg::{LeaseMsg, WriteCheck};
use super::lock_store::{LockOp, LockResult};
use super::raft::{ClientAnswer, Command, RaftMsg};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::message::{Inbox, Message};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::time::MS_US;

/// What a worker takes off the wire: the lock service's replies (Raft's client protocol) and
/// the ledger's answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockClientMsg {
    Raft(RaftMsg),
    Ledger(LeaseMsg),
}

impl Inbox for LockClientMsg {
    fn accept(msg: Box<dyn Message>) -> Option<Self> {
        match msg.downcast::<RaftMsg>() {
            Ok(m) => Some(LockClientMsg::Raft(m)),
            Err(msg) => msg.downcast::<LeaseMsg>().ok().map(LockClientMsg::Ledger),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockClientTimer {
    /// The job fires.
    Start,
    /// It asks for the lock again after finding it held.
    Retry,
    /// It renews its lease.
    KeepAlive,
    /// Its request got no answer in time (or was redirected): send it again.
    Resend,
    StepDone {
        step: u32,
    },
}

impl Label for LockClientTimer {
    fn label(&self) -> String {
        match self {
            LockClientTimer::Start => "the job fires".into(),
            LockClientTimer::Retry => "asks for the lock again".into(),
            LockClientTimer::KeepAlive => "time to renew the lease".into(),
            LockClientTimer::Resend => "no answer yet: resend".into(),
            LockClientTimer::StepDone { step } => format!("finishes the work of step {step}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockClientPlan {
    pub servers: Vec<NodeId>,
    /// The server it asks first.
    pub first_guess: NodeId,
    pub ledger: NodeId,
    pub key: String,
    pub ttl_ms: u64,
    pub keepalive_ms: u64,
    pub start_ms: u64,
    pub retry_ms: u64,
    pub request_timeout_ms: u64,
    pub steps: u32,
    pub step_ms: u64,
    pub amount_per_step: i64,
    /// End of the demo by its clock: no more requests after it, so the run drains.
    pub stop_at_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientPhase {
    Idle,
    Acquiring,
    /// The lock was held by someone else; it asks again later.
    Waiting,
    ReadingProgress,
    Working {
        step: u32,
    },
    Writing {
        step: u32,
    },
    Releasing,
    Done,
    /// A renewal said the lock is no longer its own.
    Lost,
    /// The ledger refused a write: a newer holder exists.
    Fenced,
}

/// What the worker believes it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldLock {
    pub revision: u64,
    pub granted_by: NodeId,
}

/// Survives a crash. (Its plan is its configuration, kept by the engine.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockClientDurable {
    pub finished: bool,
    /// Request ids already used, so a restarted worker never reuses one.
    pub next_id: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockClient {
    pub plan: LockClientPlan,
    pub phase: ClientPhase,
    pub held: Option<HeldLock>,
    pub guess: NodeId,
    /// The request in flight and what it asked for.
    pub outstanding: Option<(u32, LockOp)>,
    next_id: u32,
    redirected: bool,
    pub finished: bool,
    /// How often it found the lock held.
    pub refusals: u32,
}

impl LockClient {
    fn durable(&self) -> LockClientDurable {
        LockClientDurable {
            finished: self.finished,
            next_id: self.next_id,
        }
    }

    pub fn believes_it_holds(&self) -> bool {
        self.held.is_some()
            && matches!(
                self.phase,
                ClientPhase::ReadingProgress | ClientPhase::Working { .. } | ClientPhase::Writing { .. }
            )
    }

    fn over(&self, ctx: &Ctx<'_, Self>) -> bool {
        ctx.local_now_us >= self.plan.stop_at_ms * MS_US
    }

    /// Sends `op` as a new request to the server it believes leads.
    fn request(&mut self, ctx: &mut Ctx<'_, Self>, op: LockOp) {
        let id = self.next_id;
        self.next_id += 1;
        ctx.persist(self.durable());
        self.outstanding = Some((id, op));
        self.redirected = false;
        self.send(ctx);
    }

    fn send(&mut self, ctx: &mut Ctx<'_, Self>) {
        let Some((id, op)) = self.outstanding.clone() else {
            return;
        };
        if self.over(ctx) {
            self.outstanding = None;
            ctx.note(format!("The demo is over; {} stops asking.", ctx.me()));
            return;
        }
        ctx.send(
            self.guess,
            RaftMsg::ClientRequest {
                id,
                command: Command::Lock(op),
            },
        );
        ctx.set_timer(
            LockClientTimer::Resend,
            self.plan.request_timeout_ms.max(1) * MS_US,
        );
    }

    fn rotate(&mut self) {
        let s = &self.plan.servers;
        if s.is_empty() {
            return;
        }
        let pos = s.iter().position(|x| *x == self.guess).unwrap_or(0);
        self.guess = s[(pos + 1) % s.len()];
    }

    fn timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: LockClientTimer) {
        match timer {
            LockClientTimer::Start if self.phase == ClientPhase::Idle => {
                ctx.note(format!(
                    "{}'s job fires. It asks the lock service for {} before doing anything.",
                    ctx.me(),
                    self.plan.key
                ));
                self.acquire(ctx);
            }
            LockClientTimer::Retry if self.phase == ClientPhase::Waiting => {
                if self.over(ctx) {
                    ctx.note(format!("The demo is over; {} gives up waiting.", ctx.me()));
                    return;
                }
                self.acquire(ctx);
            }
            LockClientTimer::Resend if self.outstanding.is_some() => {
                if !self.redirected {
                    let silent = self.guess;
                    self.rotate();
                    ctx.note(format!(
                        "{} heard nothing back from {}; it sends the same request to {}.",
                        ctx.me(),
                        ctx.name(silent),
                        ctx.name(self.guess)
                    ));
                }
                self.redirected = false;
                self.send(ctx);
            }
            LockClientTimer::KeepAlive => {
                let Some(h) = self.held else { return };
                if self.over(ctx) {
                    return;
                }
                // A renewal in flight is replaced: only the newest answer counts.
                self.request(
                    ctx,
                    LockOp::KeepAlive {
                        key: self.plan.key.clone(),
                        owner: ctx.node,
                        revision: h.revision,
                    },
                );
                ctx.set_timer(LockClientTimer::KeepAlive, self.plan.keepalive_ms * MS_US);
            }
            LockClientTimer::StepDone { step } if self.phase == (ClientPhase::Working { step }) => {
                let Some(h) = self.held else { return };
                self.phase = ClientPhase::Writing { step };
                ctx.note(format!(
                    "{} has done step {step}'s work and sends the debit; revision {} is its token, part of the write's WHERE clause.",
                    ctx.me(), h.revision
                ));
                ctx.send(
                    self.plan.ledger,
                    LeaseMsg::Write {
                        step,
                        amount: self.plan.amount_per_step,
                        token: FencingToken(h.revision),
                        check: WriteCheck::TokenPredicate,
                    },
                );
            }
            _ => {}
        }
    }

    fn acquire(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = ClientPhase::Acquiring;
        let op = LockOp::Acquire {
            key: self.plan.key.clone(),
            owner: ctx.node,
            owner_name: ctx.me().to_string(),
            ttl_ms: self.plan.ttl_ms,
        };
        self.request(ctx, op);
    }

    fn message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LockClientMsg) {
        match msg {
            LockClientMsg::Raft(RaftMsg::ClientReply { id, answer }) => {
                let Some((want, op)) = self.outstanding.clone() else {
                    return;
                };
                if want != id {
                    return; // an answer to a request it has moved on from
                }
                match answer {
                    ClientAnswer::NotLeader { leader } => {
                        match leader {
                            Some(l) if l != from => self.guess = l,
                            _ => self.rotate(),
                        }
                        self.redirected = true;
                        ctx.set_timer(LockClientTimer::Resend, 10 * MS_US);
                    }
                    ClientAnswer::Committed { .. } => {}
                    ClientAnswer::Locked { result, .. } => {
                        self.outstanding = None;
                        ctx.cancel_timer(LockClientTimer::Resend);
                        self.answered(ctx, from, &op, result);
                    }
                }
            }
            LockClientMsg::Ledger(LeaseMsg::Progress { steps_done })
                if self.phase == ClientPhase::ReadingProgress =>
            {
                if steps_done >= self.plan.steps {
                    ctx.note(format!(
                        "The ledger already records all {} steps: the job is done, so {} only releases the lock.",
                        self.plan.steps,
                        ctx.me()
                    ));
                    self.finish(ctx);
                } else {
                    if steps_done > 0 {
                        ctx.note(format!(
                            "{} takes over a half-done job and continues at step {}.",
                            ctx.me(),
                            steps_done + 1
                        ));
                    }
                    self.work(ctx, steps_done + 1);
                }
            }
            LockClientMsg::Ledger(LeaseMsg::WriteResult {
                step,
                accepted,
                reason,
                ..
            }) => {
                if self.phase != (ClientPhase::Writing { step }) {
                    return;
                }
                if accepted {
                    if step < self.plan.steps {
                        self.work(ctx, step + 1);
                    } else {
                        self.finish(ctx);
                    }
                } else {
                    ctx.note(format!(
                        "{}'s write was refused ({}). A refusal means a newer holder exists: it stops at once. Consensus kept the lock service's own leaders in line; only this token check could stop a worker that never knew it had been frozen.",
                        ctx.me(),
                        reason.map(|r| r.text()).unwrap_or_default()
                    ));
                    self.stop(ctx, ClientPhase::Fenced);
                }
            }
            _ => {}
        }
    }

    fn answered(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, op: &LockOp, result: LockResult) {
        match (op, result) {
            (
                LockOp::Acquire { .. },
                LockResult::Granted { revision } | LockResult::AlreadyYours { revision },
            ) if self.phase == ClientPhase::Acquiring => {
                self.held = Some(HeldLock {
                    revision,
                    granted_by: from,
                });
                ctx.note(format!(
                    "{} holds {} with revision {revision}: the log index of the entry that granted it, committed on a majority before {} said yes. That number is its fencing token.",
                    ctx.me(),
                    self.plan.key,
                    ctx.name(from)
                ));
                ctx.set_timer(LockClientTimer::KeepAlive, self.plan.keepalive_ms * MS_US);
                self.phase = ClientPhase::ReadingProgress;
                ctx.send(self.plan.ledger, LeaseMsg::ReadProgress);
            }
            (
                LockOp::Acquire { .. },
                LockResult::Held {
                    owner_name, revision, ..
                },
            ) if self.phase == ClientPhase::Acquiring => {
                self.refusals += 1;
                self.phase = ClientPhase::Waiting;
                ctx.note(format!(
                    "{} tells {} that {} is held by {owner_name} (revision {revision}); it waits and asks again in {}.",
                    ctx.name(from),
                    ctx.me(),
                    self.plan.key,
                    super::lease_msg::seconds(self.plan.retry_ms)
                ));
                ctx.set_timer(LockClientTimer::Retry, self.plan.retry_ms * MS_US);
            }
            (LockOp::KeepAlive { .. }, LockResult::Renewed { .. }) => {}
            (LockOp::KeepAlive { revision, .. }, LockResult::NotHeld) if self.held.is_some() => {
                ctx.note(format!(
                    "{}'s renewal of revision {revision} is refused: the lock is no longer its own. It stops.",
                    ctx.me()
                ));
                self.stop(ctx, ClientPhase::Lost);
            }
            (LockOp::Release { .. }, _) if self.phase == ClientPhase::Releasing => {
                ctx.note(format!("{} has let go of {}.", ctx.me(), self.plan.key));
                self.phase = ClientPhase::Done;
            }
            _ => {}
        }
    }

    fn work(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.phase = ClientPhase::Working { step };
        ctx.set_timer(LockClientTimer::StepDone { step }, self.plan.step_ms * MS_US);
    }

    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.finished = true;
        ctx.cancel_timer(LockClientTimer::KeepAlive);
        let Some(h) = self.held.take() else { return };
        ctx.note(format!(
            "{} has finished the job and releases {} (revision {}).",
            ctx.me(),
            self.plan.key,
            h.revision
        ));
        self.phase = ClientPhase::Releasing;
        self.request(
            ctx,
            LockOp::Release {
                key: self.plan.key.clone(),
                owner: ctx.node,
                revision: h.revision,
            },
        );
    }

    fn stop(&mut self, ctx: &mut Ctx<'_, Self>, phase: ClientPhase) {
        if let ClientPhase::Working { step } = self.phase {
            ctx.cancel_timer(LockClientTimer::StepDone { step });
        }
        ctx.cancel_timer(LockClientTimer::KeepAlive);
        self.held = None;
        if !matches!(self.phase, ClientPhase::Fenced | ClientPhase::Lost) {
            self.phase = phase;
        }
    }

    /// What it is doing, in a few words (its card's first line); `name` gives a node's
    /// display name.
    pub fn doing<'n>(&self, name: impl Fn(NodeId) -> &'n str) -> String {
        match &self.phase {
            ClientPhase::Idle => "waiting for the job".to_string(),
            ClientPhase::Acquiring => format!("asking {}", name(self.guess)),
            ClientPhase::Waiting => format!("lock held elsewhere · refused {}×", self.refusals),
            ClientPhase::ReadingProgress => "checking the job's progress".into(),
            ClientPhase::Working { step } => format!("step {step}: working"),
            ClientPhase::Writing { step } => format!("step {step}: writing"),
            ClientPhase::Releasing => "releasing".into(),
            ClientPhase::Done => "done".into(),
            ClientPhase::Lost => "stopped: lock lost".into(),
            ClientPhase::Fenced => "stopped: write rejected".into(),
        }
    }
}

impl Participant for LockClient {
    type Msg = LockClientMsg;
    type Timer = LockClientTimer;
    type Durable = LockClientDurable;
    type Config = LockClientPlan;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.finished {
            ctx.note(format!("{} is up again; its job is already done.", ctx.me()));
            return;
        }
        ctx.set_timer(LockClientTimer::Start, self.plan.start_ms * MS_US);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LockClientMsg) {
        self.message(ctx, from, msg);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: LockClientTimer) {
        self.timer(ctx, timer);
    }

    fn recover(plan: &LockClientPlan, _id: NodeId, d: &LockClientDurable) -> Self {
        LockClient {
            plan: plan.clone(),
            phase: if d.finished {
                ClientPhase::Done
            } else {
                ClientPhase::Idle
            },
            held: None,
            guess: plan.first_guess,
            outstanding: None,
            next_id: d.next_id.max(1),
            redirected: false,
            finished: d.finished,
            refusals: 0,
        }
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Vec<String> {
        let mut lines = vec![self.doing(|id| view.name(id))];
        if let Some(h) = self.held {
            lines.push(format!(
                "holds rev {} (from {})",
                h.revision,
                view.name(h.granted_by)
            ));
        }
        lines
    }

    fn durable_summary(
        _plan: &LockClientPlan,
        durable: &LockClientDurable,
        _view: &ViewCtx<'_>,
    ) -> Vec<String> {
        vec![
            "down".into(),
            if durable.finished {
                "job done".into()
            } else {
                "job not done".into()
            },
        ]
    }
}
