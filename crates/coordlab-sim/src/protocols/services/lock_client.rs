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
//!
//! The job itself is the [`JobRunner`]'s; this file is the lock side, [`EtcdMutex`].

use super::lock_service::{EtcdMsg, LockServerMsg};
use super::lock_store::{lock_key, LeaseId, LockOp, LockResult};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::presentation::narration::services::lock_client::EtcdMutexSaw;
use crate::protocols::job::{plans_job, At, JobCtx, JobRunner, JobTimer, LockClient, Phase, Turn};
use crate::protocols::lease::lease_msg::{RejectReason, WriteCheck};
use crate::protocols::raft::{next_server, ClientAnswer, Command, RaftMsg};
use crate::protocols::redis_locks::redis_job::{Job, JobDurable, JobPlan, Next};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdTimer {
    /// Time to send its lease's keep-alive.
    KeepAlive,
    /// Its keep-alive got no answer in time (or was redirected): send it again.
    KeepAliveResend,
    /// Its request got no answer in time (or was redirected): send it again.
    Resend,
}

/// A worker's configuration: the job (its `key` is the mutex's prefix: each contender's key is
/// `<prefix>/<lease id>`; its `ttl_ms` is the session lease's) and how it reaches the service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdPlan {
    pub job: JobPlan,
    pub servers: Vec<NodeId>,
    /// The server it asks first.
    pub first_guess: NodeId,
    pub keepalive_ms: u64,
    pub request_timeout_ms: u64,
    /// End of the demo by its clock: no more requests after it, so the run drains.
    pub stop_at_ms: u64,
}

plans_job!(EtcdPlan);

/// A worker: the job runner with etcd's mutex.
pub type EtcdWorker = JobRunner<EtcdMutex>;

/// Where an attempt is in the recipe, before it waits in line or holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Asking for a lease (its session).
    Granting,
    /// The acquire transaction is on its way.
    Putting,
    /// Reading which key is just ahead of its own.
    Looking,
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

/// The lock side of a worker: its session, its key, what it watches, its requests on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdMutex {
    pub stage: Stage,
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
    /// The next request's id; kept on disk, so a restarted worker never reuses one.
    next_id: u32,
}

type Ctx<'a, 'b> = JobCtx<'a, 'b, EtcdMutex>;

impl EtcdMutex {
    /// Whether the demo is over by its clock.
    fn over(plan: &EtcdPlan, local_now_us: u64) -> bool {
        local_now_us >= plan.stop_at_ms * MS_US
    }

    fn my_key(&self, plan: &EtcdPlan) -> Option<String> {
        self.lease.map(|l| lock_key(&plan.job.key, l))
    }

    fn in_stage(&self, at: At<'_, Self>, stage: Stage) -> bool {
        *at.phase == Phase::Acquiring && self.stage == stage
    }

    /// Sends `request` under a new id to the server it believes leads.
    fn request(&mut self, ctx: Ctx, at: At<'_, Self>, request: Request) {
        let id = self.next_id;
        self.next_id += 1;
        ctx.persist(JobDurable {
            finished: at.job.finished,
            requests: self.next_id,
        });
        let keepalive = matches!(request, Request::KeepAlive(_));
        let flight = Some(InFlight {
            id,
            request,
            redirected: false,
        });
        if keepalive {
            self.keepalive = flight;
        } else {
            self.outstanding = flight;
        }
        self.send(ctx, at.plan, keepalive);
    }

    fn slot(&mut self, keepalive: bool) -> (&mut Option<InFlight>, EtcdTimer) {
        if keepalive {
            (&mut self.keepalive, EtcdTimer::KeepAliveResend)
        } else {
            (&mut self.outstanding, EtcdTimer::Resend)
        }
    }

    /// Sends (again) the keep-alive or the other request on its way.
    fn send(&mut self, ctx: Ctx, plan: &EtcdPlan, keepalive: bool) {
        let guess = self.guess;
        let (slot, timer) = self.slot(keepalive);
        let Some(flight) = slot.clone() else { return };
        if Self::over(plan, ctx.local_now_us) {
            *slot = None;
            ctx.note(EtcdMutexSaw::DemoOver { me: ctx.me() });
            return;
        }
        let id = flight.id;
        match flight.request {
            Request::Write(op) => ctx.send(
                guess,
                RaftMsg::ClientRequest {
                    id,
                    command: Command::Lock(op),
                },
            ),
            Request::Read { below, mine } => ctx.send(
                guess,
                EtcdMsg::Range {
                    id,
                    prefix: plan.job.key.clone(),
                    below,
                    mine,
                },
            ),
            Request::KeepAlive(lease) => ctx.send(guess, EtcdMsg::KeepAlive { id, lease }),
        }
        ctx.set_timer(JobTimer::Lock(timer), plan.request_timeout_ms.max(1) * MS_US);
    }

    fn rotate(&mut self, plan: &EtcdPlan) {
        self.guess = next_server(&plan.servers, self.guess);
    }

    /// A request got no answer in time, or was redirected: send it again.
    fn resend(&mut self, ctx: Ctx, plan: &EtcdPlan, keepalive: bool) {
        let Some(flight) = self.slot(keepalive).0.as_mut() else {
            return;
        };
        let redirected = std::mem::take(&mut flight.redirected);
        if !redirected {
            let silent = self.guess;
            self.rotate(plan);
            ctx.note(EtcdMutexSaw::NoAnswer {
                me: ctx.me(),
                silent: ctx.name(silent),
                next: ctx.name(self.guess),
            });
        }
        self.send(ctx, plan, keepalive);
    }

    /// "Not the leader": resend shortly where it points (or to the next server).
    fn redirect(&mut self, ctx: Ctx, plan: &EtcdPlan, from: NodeId, leader: Option<NodeId>, keepalive: bool) {
        match leader {
            Some(l) if l != from => self.guess = l,
            _ => self.rotate(plan),
        }
        let (slot, timer) = self.slot(keepalive);
        if let Some(f) = slot.as_mut() {
            f.redirected = true;
        }
        ctx.set_timer(JobTimer::Lock(timer), 10 * MS_US);
    }

    /// Takes the answer to request `id` off the slot it belongs to, if it is the one on its
    /// way; `None` for an answer to a request it has moved on from.
    fn answer_to(&mut self, ctx: Ctx, id: u32) -> Option<Request> {
        for keepalive in [true, false] {
            let (slot, timer) = self.slot(keepalive);
            if slot.as_ref().is_some_and(|f| f.id == id) {
                ctx.cancel_timer(JobTimer::Lock(timer));
                return slot.take().map(|f| f.request);
            }
        }
        None
    }

    fn is_keepalive(&self, id: u32) -> bool {
        self.keepalive.as_ref().is_some_and(|f| f.id == id)
    }

    /// Asks for a new lease: the start of a session (a restart, or a lost one, starts over).
    fn open_session(&mut self, ctx: Ctx, at: At<'_, Self>) -> Turn {
        self.stage = Stage::Granting;
        self.lease = None;
        self.my_revision = None;
        self.watching = None;
        ctx.cancel_timer(JobTimer::Lock(EtcdTimer::KeepAlive));
        self.keepalive = None;
        let op = LockOp::LeaseGrant {
            ttl_ms: at.plan.job.ttl_ms,
            owner: ctx.node,
            owner_name: ctx.me().to_string(),
        };
        self.request(ctx, at, Request::Write(op));
        Turn::Ask
    }

    fn etcd(&mut self, ctx: Ctx, at: At<'_, Self>, from: NodeId, msg: EtcdMsg) -> Turn {
        match msg {
            EtcdMsg::NotLeader { id, leader } => {
                let keepalive = self.is_keepalive(id);
                if keepalive || self.outstanding.as_ref().is_some_and(|f| f.id == id) {
                    self.redirect(ctx, at.plan, from, leader, keepalive);
                }
                Turn::Stay
            }
            EtcdMsg::KeepAliveReply { id, ttl_ms, lease } => {
                let answered = self.answer_to(ctx, id).is_some();
                if answered && ttl_ms == 0 && self.lease == Some(lease) {
                    self.lease_gone(ctx, at, lease)
                } else {
                    Turn::Stay
                }
            }
            EtcdMsg::RangeReply {
                id,
                header,
                ahead,
                mine_exists,
            } => {
                let answered = self.answer_to(ctx, id).is_some();
                if answered && self.in_stage(at, Stage::Looking) {
                    self.looked(ctx, at, from, header, ahead, mine_exists)
                } else {
                    Turn::Stay
                }
            }
            EtcdMsg::Deleted { key, revision }
                if *at.phase == Phase::Watching && self.watching.as_ref().is_some_and(|w| w.key == key) =>
            {
                self.watching = None;
                ctx.note(EtcdMutexSaw::KeyDeleted {
                    me: ctx.me(),
                    key: &key,
                    revision,
                });
                self.look(ctx, at)
            }
            _ => Turn::Stay,
        }
    }

    /// Its lease is gone: its key went with it.
    fn lease_gone(&mut self, ctx: Ctx, at: At<'_, Self>, lease: LeaseId) -> Turn {
        match at.phase {
            Phase::Acquiring | Phase::Watching => {
                ctx.note(EtcdMutexSaw::LostPlace { me: ctx.me(), lease });
                self.open_session(ctx, at)
            }
            phase if self.held.is_some() => {
                ctx.note(EtcdMutexSaw::LeaseGoneWhileHolding { me: ctx.me(), lease });
                phase.stop_work(ctx);
                self.stop(ctx);
                Turn::Lost
            }
            _ => Turn::Stay,
        }
    }

    /// The answer to a write it sent through the log.
    fn written(&mut self, ctx: Ctx, at: At<'_, Self>, from: NodeId, op: &LockOp, result: LockResult) -> Turn {
        match (op, result) {
            (LockOp::LeaseGrant { .. }, LockResult::LeaseGranted { lease, header, .. })
                if self.in_stage(at, Stage::Granting) =>
            {
                let plan = at.plan;
                self.lease = Some(lease);
                ctx.set_timer(JobTimer::Lock(EtcdTimer::KeepAlive), plan.keepalive_ms * MS_US);
                let key = lock_key(&plan.job.key, lease);
                ctx.note(EtcdMutexSaw::HasLease {
                    me: ctx.me(),
                    lease,
                    keepalive_ms: plan.keepalive_ms,
                    header,
                    key: &key,
                });
                self.stage = Stage::Putting;
                let op = LockOp::Acquire {
                    prefix: plan.job.key.clone(),
                    lease,
                    owner: ctx.node,
                    owner_name: ctx.me().to_string(),
                };
                self.request(ctx, at, Request::Write(op));
                Turn::Stay
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
            ) if self.in_stage(at, Stage::Putting) => {
                self.my_revision = Some(create_revision);
                if first_revision == create_revision {
                    ctx.note(EtcdMutexSaw::Holds {
                        put,
                        create_revision,
                        me: ctx.me(),
                        server: ctx.name(from),
                    });
                    self.hold(from, create_revision)
                } else {
                    ctx.note(EtcdMutexSaw::Queued {
                        put,
                        create_revision,
                        first_key: &first_key,
                        first_revision,
                        me: ctx.me(),
                    });
                    self.look(ctx, at)
                }
            }
            (LockOp::Acquire { .. }, LockResult::LeaseNotFound { lease })
                if self.in_stage(at, Stage::Putting) =>
            {
                self.lease_gone(ctx, at, lease)
            }
            (LockOp::LeaseRevoke { .. }, _) if *at.phase == Phase::Releasing => {
                ctx.note(EtcdMutexSaw::LetGo { me: ctx.me() });
                Turn::Released
            }
            _ => Turn::Stay,
        }
    }

    /// Reads which key is just ahead of its own.
    fn look(&mut self, ctx: Ctx, at: At<'_, Self>) -> Turn {
        let (Some(below), Some(mine)) = (self.my_revision, self.my_key(at.plan)) else {
            return Turn::Stay;
        };
        self.stage = Stage::Looking;
        self.request(ctx, at, Request::Read { below, mine });
        Turn::Ask
    }

    fn looked(
        &mut self,
        ctx: Ctx,
        at: At<'_, Self>,
        from: NodeId,
        header: u64,
        ahead: Option<(String, u64)>,
        mine_exists: bool,
    ) -> Turn {
        let Some(mine) = self.my_revision else {
            return Turn::Stay;
        };
        match ahead {
            Some((key, rev)) => {
                ctx.note(EtcdMutexSaw::Watches {
                    me: ctx.me(),
                    key: &key,
                    rev,
                    mine,
                    header,
                });
                let on = WatchOn {
                    server: self.guess,
                    key,
                    from: header,
                };
                self.watch(ctx, at.plan, on);
                Turn::Watch
            }
            None if mine_exists => {
                ctx.note(EtcdMutexSaw::NothingAhead { me: ctx.me(), mine });
                self.hold(from, mine)
            }
            None => {
                let lease = self.lease.unwrap_or_default();
                self.lease_gone(ctx, at, lease)
            }
        }
    }

    fn watch(&mut self, ctx: Ctx, plan: &EtcdPlan, on: WatchOn) {
        if Self::over(plan, ctx.local_now_us) {
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

    fn hold(&mut self, from: NodeId, revision: u64) -> Turn {
        self.held = Some(HeldLock {
            revision,
            granted_by: from,
        });
        Turn::Granted
    }

    fn stop_keepalives(&mut self, ctx: Ctx) {
        ctx.cancel_timer(JobTimer::Lock(EtcdTimer::KeepAlive));
        ctx.cancel_timer(JobTimer::Lock(EtcdTimer::KeepAliveResend));
        self.keepalive = None;
    }

    /// It holds nothing any more: its keep-alives stop.
    fn stop(&mut self, ctx: Ctx) {
        self.stop_keepalives(ctx);
        self.held = None;
    }
}

impl LockClient for EtcdMutex {
    type Plan = EtcdPlan;
    type Timer = EtcdTimer;
    type Reply = LockServerMsg;

    fn recover(plan: &EtcdPlan, durable: &JobDurable) -> Self {
        EtcdMutex {
            stage: Stage::Granting,
            lease: None,
            my_revision: None,
            held: None,
            watching: None,
            guess: plan.first_guess,
            outstanding: None,
            keepalive: None,
            next_id: durable.requests.max(1),
        }
    }

    /// Its job fires at its hour from every start, a restart included.
    fn start(ctx: Ctx, plan: &EtcdPlan, job: &Job) {
        if job.finished {
            ctx.note(EtcdMutexSaw::UpJobDone { me: ctx.me() });
            return;
        }
        ctx.set_timer(JobTimer::JobStart, plan.job.start_at_ms * MS_US);
    }

    fn resume(ctx: Ctx, plan: &EtcdPlan, steps_done: u32) -> Next {
        let steps = plan.job.steps;
        plan.job.resume_saying(
            ctx,
            steps_done,
            |me| format!("The ledger already records all {steps} steps: the job is done, so {me} only releases the lock."),
            |me, step| format!("{me} takes over a half-done job and continues at step {step}."),
        )
    }

    fn request(&mut self, ctx: Ctx, at: At<'_, Self>) {
        ctx.note(EtcdMutexSaw::Fires {
            me: ctx.me(),
            ttl_ms: at.plan.job.ttl_ms,
        });
        self.open_session(ctx, at);
    }

    fn on_reply(&mut self, ctx: Ctx, at: At<'_, Self>, from: NodeId, msg: LockServerMsg) -> Turn {
        match msg {
            LockServerMsg::Raft(RaftMsg::ClientReply { id, answer }) => match answer {
                ClientAnswer::NotLeader { leader } => {
                    if self.outstanding.as_ref().is_some_and(|f| f.id == id) {
                        self.redirect(ctx, at.plan, from, leader, false);
                    }
                    Turn::Stay
                }
                ClientAnswer::Committed { .. } => Turn::Stay,
                ClientAnswer::Locked { result, .. } => match self.answer_to(ctx, id) {
                    Some(Request::Write(op)) => self.written(ctx, at, from, &op, result),
                    _ => Turn::Stay,
                },
            },
            LockServerMsg::Etcd(m) => self.etcd(ctx, at, from, m),
            _ => Turn::Stay,
        }
    }

    fn on_timer(&mut self, ctx: Ctx, at: At<'_, Self>, timer: EtcdTimer) -> Turn {
        match timer {
            EtcdTimer::Resend => self.resend(ctx, at.plan, false),
            EtcdTimer::KeepAliveResend => self.resend(ctx, at.plan, true),
            EtcdTimer::KeepAlive => {
                if let (Some(lease), false) = (self.lease, Self::over(at.plan, ctx.local_now_us)) {
                    // A keep-alive still on its way is replaced: only the newest answer counts.
                    self.request(ctx, at, Request::KeepAlive(lease));
                    let every_us = at.plan.keepalive_ms * MS_US;
                    ctx.set_timer(JobTimer::Lock(EtcdTimer::KeepAlive), every_us);
                }
            }
        }
        Turn::Stay
    }

    /// Its watch lives on one server: if that server crashes, it watches again from another,
    /// from the same revision.
    fn on_peer_down(&mut self, ctx: Ctx, at: At<'_, Self>, peer: NodeId) -> Turn {
        let Some(mut on) = self.watching.take().filter(|w| w.server == peer) else {
            return Turn::Stay;
        };
        if self.guess == peer {
            self.rotate(at.plan);
        }
        on.server = self.guess;
        ctx.note(EtcdMutexSaw::WatchMoved {
            me: ctx.me(),
            down: ctx.name(peer),
            key: &on.key,
            server: ctx.name(on.server),
            from: on.from,
        });
        self.watch(ctx, at.plan, on);
        Turn::Stay
    }

    fn watches(&self, _plan: &EtcdPlan, peer: NodeId) -> bool {
        self.watching.as_ref().is_some_and(|w| w.server == peer)
    }

    /// It never backs off: it waits in line.
    fn fence(&self, ctx: Ctx, step: u32) -> (FencingToken, WriteCheck) {
        let revision = self.held.map_or(0, |h| h.revision);
        ctx.note(EtcdMutexSaw::Writes {
            me: ctx.me(),
            step,
            revision,
        });
        (FencingToken(revision), WriteCheck::TokenPredicate)
    }

    fn refused(&mut self, ctx: Ctx, _: At<'_, Self>, _: u32, reason: Option<RejectReason>) -> Option<Turn> {
        ctx.note(EtcdMutexSaw::Refused {
            me: ctx.me(),
            why: reason.as_ref(),
        });
        self.stop(ctx);
        Some(Turn::Stop)
    }

    /// The job is done: it closes its session, and the revoke deletes its key.
    fn release(&mut self, ctx: Ctx, at: At<'_, Self>) -> bool {
        self.stop_keepalives(ctx);
        let (Some(h), Some(lease)) = (self.held.take(), self.lease) else {
            return false;
        };
        ctx.note(EtcdMutexSaw::Finished {
            me: ctx.me(),
            lease,
            revision: h.revision,
        });
        let revoke = LockOp::LeaseRevoke {
            lease,
            expired: false,
        };
        self.request(ctx, at, Request::Write(revoke));
        true
    }

    fn requests(&self) -> u32 {
        self.next_id
    }

    fn holds(&self) -> bool {
        self.held.is_some()
    }
}
