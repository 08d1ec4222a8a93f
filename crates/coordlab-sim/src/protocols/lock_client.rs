//! A worker that takes the lock as etcd's `concurrency.Mutex` does, then does a multi-step job
//! on the fenced ledger, each write carrying its key's create revision as its token.
//!
//! 1. It opens a session: a lease (`LeaseGrant`), kept alive every third of its TTL.
//! 2. It puts its own key `<prefix>/<lease id>` with
//!    `Txn(If(CreateRevision(key) == 0), Then(Put(key, me, lease)))`. The answer names the
//!    key first in line (lowest create revision); if that is its own, it holds the lock.
//! 3. Otherwise it reads which key was created just before its own and watches that one key
//!    for its deletion — no polling, and a release wakes only the next in line. When it is
//!    deleted it reads again: no key ahead and its own still there means it holds the lock.
//!
//! It talks to whichever server it believes leads, follows "not the leader" answers, and
//! resends a request that gets no answer (the server may have crashed) to the next server. A
//! resent acquire is the same transaction: its compare fails and it reads back the key it
//! already put. A watch lost with its server is set up again elsewhere from the same revision.
//! A keep-alive answered "lease not found" means its key is gone: holding, it stops; waiting,
//! it starts again with a new session.

use super::card;
use super::lease_msg::{seconds, LeaseMsg, WriteCheck};
use super::lock_service::EtcdMsg;
use super::lock_store::{lock_key, LeaseId, LockOp, LockResult};
use super::raft::{ClientAnswer, Command, RaftMsg};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::message::{Inbox, Message};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::time::MS_US;
use crate::kernel::view::Summary;

/// What a worker takes off the wire: the lock service's replies (writes answer through Raft's
/// client protocol, the rest through etcd's), and the ledger's answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockClientMsg {
    Raft(RaftMsg),
    Etcd(EtcdMsg),
    Ledger(LeaseMsg),
}

impl Inbox for LockClientMsg {
    fn accept(msg: Box<dyn Message>) -> Option<Self> {
        let msg = match msg.downcast::<RaftMsg>() {
            Ok(m) => return Some(LockClientMsg::Raft(m)),
            Err(msg) => msg,
        };
        match msg.downcast::<EtcdMsg>() {
            Ok(m) => Some(LockClientMsg::Etcd(m)),
            Err(msg) => msg.downcast::<LeaseMsg>().ok().map(LockClientMsg::Ledger),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockClientTimer {
    /// The job fires.
    Start,
    /// Time to send its lease's keep-alive.
    KeepAlive,
    /// Its keep-alive got no answer in time (or was redirected): send it again.
    KeepAliveResend,
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
            LockClientTimer::KeepAlive => "time for a keep-alive".into(),
            LockClientTimer::KeepAliveResend => "no answer to the keep-alive: resend".into(),
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
    /// The mutex's prefix: each contender's key is `<prefix>/<lease id>`.
    pub prefix: String,
    pub ttl_ms: u64,
    pub keepalive_ms: u64,
    pub start_ms: u64,
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
    /// Asking for a lease (its session).
    Granting,
    /// The acquire transaction is on its way.
    Acquiring,
    /// Reading which key is just ahead of its own.
    Looking,
    /// Watching the key just ahead of its own.
    Watching,
    ReadingProgress,
    Working {
        step: u32,
    },
    Writing {
        step: u32,
    },
    Releasing,
    Done,
    /// Its lease is gone, and its key with it.
    Lost,
    /// The ledger refused a write: a newer holder exists.
    Fenced,
}

/// What the worker believes it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldLock {
    /// Its key's create revision: its fencing token.
    pub revision: u64,
    /// The server whose answer told it so.
    pub granted_by: NodeId,
}

/// The watch it holds: on which server, on which key, from which revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchOn {
    pub server: NodeId,
    pub key: String,
    pub from: u64,
}

/// Survives a crash. (Its plan is its configuration, kept by the engine.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockClientDurable {
    pub finished: bool,
    /// Request ids already used, so a restarted worker never reuses one.
    pub next_id: u32,
}

/// A request on its way; it is resent as it is until answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// A write, through the Raft log.
    Write(LockOp),
    /// The mutex's read: the key created last before `below`, and whether `mine` exists.
    Read {
        below: u64,
        mine: String,
    },
    KeepAlive(LeaseId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFlight {
    pub id: u32,
    pub request: Request,
    /// The last answer was "not the leader": the resend goes where it pointed.
    redirected: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockClient {
    pub plan: LockClientPlan,
    pub phase: ClientPhase,
    /// Its session's lease.
    pub lease: Option<LeaseId>,
    /// Its key's create revision, once the acquire transaction answered.
    pub my_revision: Option<u64>,
    pub held: Option<HeldLock>,
    pub watching: Option<WatchOn>,
    pub guess: NodeId,
    /// The acquire, read or release on its way.
    pub outstanding: Option<InFlight>,
    /// The keep-alive on its way.
    pub keepalive: Option<InFlight>,
    next_id: u32,
    pub finished: bool,
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

    fn my_key(&self) -> Option<String> {
        self.lease.map(|l| lock_key(&self.plan.prefix, l))
    }

    /// Sends `request` under a new id to the server it believes leads.
    fn request(&mut self, ctx: &mut Ctx<'_, Self>, request: Request) {
        let id = self.next_id;
        self.next_id += 1;
        ctx.persist(self.durable());
        let flight = InFlight {
            id,
            request,
            redirected: false,
        };
        if matches!(flight.request, Request::KeepAlive(_)) {
            self.keepalive = Some(flight);
            self.send(ctx, true);
        } else {
            self.outstanding = Some(flight);
            self.send(ctx, false);
        }
    }

    /// Sends (again) the keep-alive or the other request on its way.
    fn send(&mut self, ctx: &mut Ctx<'_, Self>, keepalive: bool) {
        let (slot, timer) = if keepalive {
            (&mut self.keepalive, LockClientTimer::KeepAliveResend)
        } else {
            (&mut self.outstanding, LockClientTimer::Resend)
        };
        let Some(flight) = slot.clone() else { return };
        if ctx.local_now_us >= self.plan.stop_at_ms * MS_US {
            *slot = None;
            ctx.note(format!("The demo is over; {} stops asking.", ctx.me()));
            return;
        }
        let id = flight.id;
        match flight.request {
            Request::Write(op) => ctx.send(
                self.guess,
                RaftMsg::ClientRequest {
                    id,
                    command: Command::Lock(op),
                },
            ),
            Request::Read { below, mine } => ctx.send(
                self.guess,
                EtcdMsg::Range {
                    id,
                    prefix: self.plan.prefix.clone(),
                    below,
                    mine,
                },
            ),
            Request::KeepAlive(lease) => ctx.send(self.guess, EtcdMsg::KeepAlive { id, lease }),
        }
        ctx.set_timer(timer, self.plan.request_timeout_ms.max(1) * MS_US);
    }

    fn rotate(&mut self) {
        let s = &self.plan.servers;
        if s.is_empty() {
            return;
        }
        let pos = s.iter().position(|x| *x == self.guess).unwrap_or(0);
        self.guess = s[(pos + 1) % s.len()];
    }

    /// A request got no answer in time, or was redirected: send it again.
    fn resend(&mut self, ctx: &mut Ctx<'_, Self>, keepalive: bool) {
        let slot = if keepalive {
            &mut self.keepalive
        } else {
            &mut self.outstanding
        };
        let Some(flight) = slot.as_mut() else { return };
        let redirected = std::mem::take(&mut flight.redirected);
        if !redirected {
            let silent = self.guess;
            self.rotate();
            ctx.note(format!(
                "{} heard nothing back from {}; it sends the same request to {}.",
                ctx.me(),
                ctx.name(silent),
                ctx.name(self.guess)
            ));
        }
        self.send(ctx, keepalive);
    }

    /// "Not the leader": resend shortly where it points (or to the next server).
    fn redirect(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, leader: Option<NodeId>, keepalive: bool) {
        match leader {
            Some(l) if l != from => self.guess = l,
            _ => self.rotate(),
        }
        let (slot, timer) = if keepalive {
            (&mut self.keepalive, LockClientTimer::KeepAliveResend)
        } else {
            (&mut self.outstanding, LockClientTimer::Resend)
        };
        if let Some(f) = slot.as_mut() {
            f.redirected = true;
        }
        ctx.set_timer(timer, 10 * MS_US);
    }

    /// Takes the answer to request `id` off the slot it belongs to, if it is the one on its
    /// way; `None` for an answer to a request it has moved on from.
    fn answer_to(&mut self, ctx: &mut Ctx<'_, Self>, id: u32) -> Option<Request> {
        if self.keepalive.as_ref().is_some_and(|f| f.id == id) {
            ctx.cancel_timer(LockClientTimer::KeepAliveResend);
            return self.keepalive.take().map(|f| f.request);
        }
        if self.outstanding.as_ref().is_some_and(|f| f.id == id) {
            ctx.cancel_timer(LockClientTimer::Resend);
            return self.outstanding.take().map(|f| f.request);
        }
        None
    }

    fn is_keepalive(&self, id: u32) -> bool {
        self.keepalive.as_ref().is_some_and(|f| f.id == id)
    }

    fn timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: LockClientTimer) {
        match timer {
            LockClientTimer::Start if self.phase == ClientPhase::Idle => {
                ctx.note(format!(
                    "{}'s job fires. Before anything else it opens a session with the lock service: a lease of {}.",
                    ctx.me(),
                    seconds(self.plan.ttl_ms)
                ));
                self.open_session(ctx);
            }
            LockClientTimer::Resend => self.resend(ctx, false),
            LockClientTimer::KeepAliveResend => self.resend(ctx, true),
            LockClientTimer::KeepAlive => {
                let Some(lease) = self.lease else { return };
                if self.over(ctx) {
                    return;
                }
                // A keep-alive still on its way is replaced: only the newest answer counts.
                self.request(ctx, Request::KeepAlive(lease));
                ctx.set_timer(LockClientTimer::KeepAlive, self.plan.keepalive_ms * MS_US);
            }
            LockClientTimer::StepDone { step } if self.phase == (ClientPhase::Working { step }) => {
                let Some(h) = self.held else { return };
                self.phase = ClientPhase::Writing { step };
                ctx.note(format!(
                    "{} has done step {step}'s work and sends the debit; its key's create revision {} is its token, part of the write's WHERE clause.",
                    ctx.me(),
                    h.revision
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

    /// Asks for a new lease: the start of a session (a restart, or a lost one, starts over).
    fn open_session(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.phase = ClientPhase::Granting;
        self.lease = None;
        self.my_revision = None;
        self.watching = None;
        ctx.cancel_timer(LockClientTimer::KeepAlive);
        self.keepalive = None;
        let op = LockOp::LeaseGrant {
            ttl_ms: self.plan.ttl_ms,
            owner: ctx.node,
            owner_name: ctx.me().to_string(),
        };
        self.request(ctx, Request::Write(op));
    }

    fn message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LockClientMsg) {
        match msg {
            LockClientMsg::Raft(RaftMsg::ClientReply { id, answer }) => match answer {
                ClientAnswer::NotLeader { leader } => {
                    if self.outstanding.as_ref().is_some_and(|f| f.id == id) {
                        self.redirect(ctx, from, leader, false);
                    }
                }
                ClientAnswer::Committed { .. } => {}
                ClientAnswer::Locked { result, .. } => {
                    if let Some(Request::Write(op)) = self.answer_to(ctx, id) {
                        self.written(ctx, from, &op, result);
                    }
                }
            },
            LockClientMsg::Etcd(m) => self.etcd(ctx, from, m),
            LockClientMsg::Ledger(m) => self.ledger(ctx, m),
            _ => {}
        }
    }

    fn etcd(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: EtcdMsg) {
        match msg {
            EtcdMsg::NotLeader { id, leader } => {
                let keepalive = self.is_keepalive(id);
                if keepalive || self.outstanding.as_ref().is_some_and(|f| f.id == id) {
                    self.redirect(ctx, from, leader, keepalive);
                }
            }
            EtcdMsg::KeepAliveReply { id, ttl_ms, lease } => {
                if self.answer_to(ctx, id).is_none() || ttl_ms > 0 || self.lease != Some(lease) {
                    return;
                }
                self.lease_gone(ctx, lease);
            }
            EtcdMsg::RangeReply {
                id,
                header,
                ahead,
                mine_exists,
            } => {
                if self.answer_to(ctx, id).is_none() || self.phase != ClientPhase::Looking {
                    return;
                }
                self.looked(ctx, from, header, ahead, mine_exists);
            }
            EtcdMsg::Deleted { key, revision } => {
                if self.phase != ClientPhase::Watching || self.watching.as_ref().is_none_or(|w| w.key != key)
                {
                    return;
                }
                self.watching = None;
                ctx.note(format!(
                    "{} hears that {key} was deleted at revision {revision}. A key ahead may remain, so it reads again before it believes anything (etcd's mutex loops the same way).",
                    ctx.me()
                ));
                self.look(ctx);
            }
            _ => {}
        }
    }

    /// Its lease is gone: its key went with it.
    fn lease_gone(&mut self, ctx: &mut Ctx<'_, Self>, lease: LeaseId) {
        match self.phase {
            ClientPhase::Granting | ClientPhase::Acquiring | ClientPhase::Looking | ClientPhase::Watching => {
                ctx.note(format!(
                    "{}'s lease {lease} is gone, and its key with it: it has lost its place in line. It starts again with a new session.",
                    ctx.me()
                ));
                self.open_session(ctx);
            }
            _ if self.held.is_some() => {
                ctx.note(format!(
                    "{}'s keep-alive finds lease {lease} gone: its key was deleted with it, so the lock is no longer its own. It stops.",
                    ctx.me()
                ));
                self.stop(ctx, ClientPhase::Lost);
            }
            _ => {}
        }
    }

    /// The answer to a write it sent through the log.
    fn written(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, op: &LockOp, result: LockResult) {
        match (op, result) {
            (LockOp::LeaseGrant { .. }, LockResult::LeaseGranted { lease, header, .. })
                if self.phase == ClientPhase::Granting =>
            {
                self.lease = Some(lease);
                ctx.set_timer(LockClientTimer::KeepAlive, self.plan.keepalive_ms * MS_US);
                let key = lock_key(&self.plan.prefix, lease);
                ctx.note(format!(
                    "{} has lease {lease}; it will send a keep-alive every {}. The grant went through the log but changed no key, so the store's revision stays {header}. Now it puts its own key, {key}, only if that key does not exist yet.",
                    ctx.me(),
                    seconds(self.plan.keepalive_ms)
                ));
                self.phase = ClientPhase::Acquiring;
                let op = LockOp::Acquire {
                    prefix: self.plan.prefix.clone(),
                    lease,
                    owner: ctx.node,
                    owner_name: ctx.me().to_string(),
                };
                self.request(ctx, Request::Write(op));
            }
            (
                LockOp::Acquire { .. },
                LockResult::Acquired {
                    put,
                    create_revision,
                    first_key,
                    first_revision,
                    ..
                },
            ) if self.phase == ClientPhase::Acquiring => {
                self.my_revision = Some(create_revision);
                let how = if put {
                    format!("The put created its key at revision {create_revision}")
                } else {
                    format!(
                        "Its key already existed (a retried request), created at revision {create_revision}"
                    )
                };
                if first_revision == create_revision {
                    ctx.note(format!(
                        "{how}, and no key under the prefix is older: {} holds the lock. Its token is that create revision — assigned by the store, committed on a majority before {} answered.",
                        ctx.me(),
                        ctx.name(from)
                    ));
                    self.hold(ctx, from, create_revision);
                } else {
                    ctx.note(format!(
                        "{how}; {first_key} (revision {first_revision}) is older and holds the lock. {} does not poll: it looks up the key created just before its own and waits for that one to go.",
                        ctx.me()
                    ));
                    self.look(ctx);
                }
            }
            (LockOp::Acquire { .. }, LockResult::LeaseNotFound { lease })
                if self.phase == ClientPhase::Acquiring =>
            {
                self.lease_gone(ctx, lease);
            }
            (LockOp::LeaseRevoke { .. }, _) if self.phase == ClientPhase::Releasing => {
                ctx.note(format!("{} has let go of the lock.", ctx.me()));
                self.phase = ClientPhase::Done;
            }
            _ => {}
        }
    }

    /// Reads which key is just ahead of its own.
    fn look(&mut self, ctx: &mut Ctx<'_, Self>) {
        let (Some(below), Some(mine)) = (self.my_revision, self.my_key()) else {
            return;
        };
        self.phase = ClientPhase::Looking;
        self.request(ctx, Request::Read { below, mine });
    }

    fn looked(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        header: u64,
        ahead: Option<(String, u64)>,
        mine_exists: bool,
    ) {
        let Some(mine) = self.my_revision else { return };
        match ahead {
            Some((key, rev)) => {
                ctx.note(format!(
                    "{} watches {key} (revision {rev}), the key just ahead of its own (revision {mine}), from revision {header}: it will hear of its deletion, even one that happened a moment ago.",
                    ctx.me()
                ));
                self.phase = ClientPhase::Watching;
                self.watch(
                    ctx,
                    WatchOn {
                        server: self.guess,
                        key,
                        from: header,
                    },
                );
            }
            None if mine_exists => {
                ctx.note(format!(
                    "No key ahead of {}'s, and its own is still there: it holds the lock. Its token is its key's create revision, {mine}.",
                    ctx.me()
                ));
                self.hold(ctx, from, mine);
            }
            None => {
                let lease = self.lease.unwrap_or_default();
                self.lease_gone(ctx, lease);
            }
        }
    }

    fn watch(&mut self, ctx: &mut Ctx<'_, Self>, on: WatchOn) {
        if self.over(ctx) {
            return;
        }
        ctx.send(
            on.server,
            EtcdMsg::Watch {
                key: on.key.clone(),
                from: on.from,
            },
        );
        self.watching = Some(on);
    }

    fn hold(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, revision: u64) {
        self.held = Some(HeldLock {
            revision,
            granted_by: from,
        });
        self.phase = ClientPhase::ReadingProgress;
        ctx.send(self.plan.ledger, LeaseMsg::ReadProgress);
    }

    fn ledger(&mut self, ctx: &mut Ctx<'_, Self>, msg: LeaseMsg) {
        match msg {
            LeaseMsg::Progress { steps_done } if self.phase == ClientPhase::ReadingProgress => {
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
            LeaseMsg::WriteResult {
                step,
                accepted,
                reason,
                ..
            } => {
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

    fn work(&mut self, ctx: &mut Ctx<'_, Self>, step: u32) {
        self.phase = ClientPhase::Working { step };
        ctx.set_timer(LockClientTimer::StepDone { step }, self.plan.step_ms * MS_US);
    }

    /// The job is done: it closes its session, and the revoke deletes its key.
    fn finish(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.finished = true;
        self.stop_keepalives(ctx);
        let (Some(h), Some(lease)) = (self.held.take(), self.lease) else {
            return;
        };
        ctx.note(format!(
            "{} has finished the job and closes its session: revoking lease {lease} deletes its key (revision {}), which lets the next in line go.",
            ctx.me(),
            h.revision
        ));
        self.phase = ClientPhase::Releasing;
        self.request(
            ctx,
            Request::Write(LockOp::LeaseRevoke {
                lease,
                expired: false,
            }),
        );
    }

    fn stop_keepalives(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.cancel_timer(LockClientTimer::KeepAlive);
        ctx.cancel_timer(LockClientTimer::KeepAliveResend);
        self.keepalive = None;
    }

    fn stop(&mut self, ctx: &mut Ctx<'_, Self>, phase: ClientPhase) {
        if let ClientPhase::Working { step } = self.phase {
            ctx.cancel_timer(LockClientTimer::StepDone { step });
        }
        self.stop_keepalives(ctx);
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
            ClientPhase::Granting => format!("asking {} for a lease", name(self.guess)),
            ClientPhase::Acquiring => format!("putting its key via {}", name(self.guess)),
            ClientPhase::Looking => "reading which key is ahead".into(),
            ClientPhase::Watching => match &self.watching {
                Some(w) => format!("watching {}", w.key),
                None => "watching".into(),
            },
            ClientPhase::ReadingProgress => "checking the job's progress".into(),
            ClientPhase::Working { step } => format!("step {step}: working"),
            ClientPhase::Writing { step } => format!("step {step}: writing"),
            ClientPhase::Releasing => "releasing".into(),
            ClientPhase::Done => "done".into(),
            ClientPhase::Lost => "stopped: lease lost".into(),
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

    /// Its watch lives on one server: if that server crashes, it watches again from another,
    /// from the same revision.
    fn watches(&self, peer: NodeId) -> bool {
        self.watching.as_ref().is_some_and(|w| w.server == peer)
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        let Some(mut on) = self.watching.take().filter(|w| w.server == peer) else {
            return;
        };
        if self.guess == peer {
            self.rotate();
        }
        on.server = self.guess;
        ctx.note(format!(
            "{}'s watch went down with {}. It watches {} again on {}, from the same revision {}, so it misses no deletion.",
            ctx.me(),
            ctx.name(peer),
            on.key,
            ctx.name(on.server),
            on.from
        ));
        self.watch(ctx, on);
    }

    fn recover(plan: &LockClientPlan, _id: NodeId, d: &LockClientDurable) -> Self {
        LockClient {
            plan: plan.clone(),
            phase: if d.finished {
                ClientPhase::Done
            } else {
                ClientPhase::Idle
            },
            lease: None,
            my_revision: None,
            held: None,
            watching: None,
            guess: plan.first_guess,
            outstanding: None,
            keepalive: None,
            next_id: d.next_id.max(1),
            finished: d.finished,
        }
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let via = view.name(self.guess);
        let s = match &self.phase {
            ClientPhase::Idle => card::idle(),
            ClientPhase::Granting => card::asking(format!("lease via {via}")),
            ClientPhase::Acquiring => card::asking(format!("putting its key via {via}")),
            ClientPhase::Looking => card::asking("reading which key is ahead"),
            ClientPhase::Watching => card::waiting(match &self.watching {
                Some(w) => format!("watching …/{}", w.key.rsplit('/').next().unwrap_or_default()),
                None => "watching".into(),
            }),
            ClientPhase::ReadingProgress => card::holder("checking progress"),
            ClientPhase::Working { step } => card::holder(card::step(*step, "working")),
            ClientPhase::Writing { step } => card::holder(card::step(*step, "writing")),
            ClientPhase::Releasing => card::releasing(),
            ClientPhase::Done => card::done(),
            ClientPhase::Lost => card::stopped("lease lost"),
            ClientPhase::Fenced => card::stopped("write rejected"),
        };
        if let Some(h) = self.held {
            // Its key's create revision is its fencing token.
            s.badge("token", h.revision).detail(format!(
                "key rev {} via {}",
                h.revision,
                view.name(h.granted_by)
            ))
        } else if let (Some(lease), Some(rev)) = (self.lease, self.my_revision) {
            s.detail(format!("lease {lease} · key rev {rev}"))
        } else {
            s
        }
    }

    fn durable_summary(_plan: &LockClientPlan, durable: &LockClientDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down_with_job(durable.finished)
    }
}
