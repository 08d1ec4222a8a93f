//! A worker that takes a Redis lock the common way and then does a multi-step job on the
//! ledger. It acquires with the acquire script (`SET lock <random value> NX PX ttl` plus an
//! `INCR` of a counter in the same step, whose result is its fencing token), optionally
//! follows with `WAIT`, writes each step carrying the token, and releases with `DEL` or with
//! the compare-and-delete script. It learns where the primary is from the failover monitor.
//!
//! It trusts its lock from the moment it trusts the answer: nothing afterwards tells it the
//! key has vanished from the store.

use super::lease_msg::{LeaseMsg, ReleaseMode, WriteCheck};
use super::redis_msg::{tenths, RedisMsg, RedisParticipant, RedisTimer};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::Ctx;
use crate::kernel::time::MS_US;
use rand::Rng;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerPlan {
    pub names: Vec<String>,
    /// Prefix of its lock values, e.g. `a`.
    pub short: String,
    pub key: String,
    /// The counter the acquire script increments; its value is the fencing token.
    pub fence_key: String,
    pub ttl_ms: u64,
    /// `WAIT replicas timeout_ms` after a successful acquire; proceed only if enough confirm.
    pub wait: Option<(u32, u64)>,
    pub release: ReleaseMode,
    /// When the job fires, by the worker's clock.
    pub start_at_ms: u64,
    pub retry_ms: u64,
    pub request_timeout_ms: u64,
    pub max_attempts: u32,
    pub steps: u32,
    pub step_ms: u64,
    pub amount: i64,
    pub ledger: NodeId,
    pub sentinel: NodeId,
    pub first_primary: NodeId,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerDurable {
    pub name: String,
    pub plan: WorkerPlan,
    pub finished: bool,
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
    pub name: String,
    pub plan: WorkerPlan,
    pub phase: Phase,
    /// Where it sends commands.
    pub primary: NodeId,
    /// Its connection to `primary` dropped, or a request went unanswered.
    pub primary_down: bool,
    pub attempt: u32,
    value: String,
    pub held: Option<Held>,
    pub finished: bool,
}

impl RedisWorker {
    pub fn recover(d: &WorkerDurable) -> RedisWorker {
        RedisWorker {
            name: d.name.clone(),
            plan: d.plan.clone(),
            phase: if d.finished { Phase::Done } else { Phase::Idle },
            primary: d.plan.first_primary,
            primary_down: false,
            attempt: 0,
            value: String::new(),
            held: None,
            finished: d.finished,
        }
    }

    fn durable(&self) -> WorkerDurable {
        WorkerDurable {
            name: self.name.clone(),
            plan: self.plan.clone(),
            finished: self.finished,
        }
    }

    fn node(&self, id: NodeId) -> String {
        self.plan
            .names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
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

    pub fn start<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        if self.finished {
            ctx.note(format!("{} is up again; its job is already done.", self.name));
            return;
        }
        let at_us = self.plan.start_at_ms * MS_US;
        ctx.set_timer(RedisTimer::JobStart, at_us.saturating_sub(ctx.local_now_us));
    }

    pub fn timer<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, timer: RedisTimer)
    where
        P::Durable: From<WorkerDurable>,
    {
        match (timer, &self.phase) {
            (RedisTimer::JobStart, Phase::Idle) | (RedisTimer::Retry, Phase::BackingOff) => {
                if self.primary_down {
                    // Ask the monitor first; its answer (or the next retry) moves things on.
                    ctx.send(self.plan.sentinel, RedisMsg::WhoIsPrimary);
                    self.back_off(ctx);
                } else {
                    self.acquire(ctx);
                }
            }
            (RedisTimer::RequestTimeout { attempt }, Phase::Acquiring | Phase::Confirming)
                if attempt == self.attempt =>
            {
                ctx.note(format!(
                    "{} gets no answer from {}. It cannot tell whether its lock was set, so it treats it as not held and asks the sentinel where the primary is.",
                    self.name,
                    self.node(self.primary)
                ));
                self.lose_connection(ctx);
            }
            (RedisTimer::StepDone { step }, Phase::Working { step: s }) if step == *s => {
                self.write(ctx, step)
            }
            _ => {}
        }
    }

    fn acquire<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        if self.attempt >= self.plan.max_attempts {
            ctx.note(format!("{} gives up after {} attempts.", self.name, self.attempt));
            self.phase = Phase::GaveUp;
            return;
        }
        self.attempt += 1;
        // A fresh random value per attempt, so a release can tell this lock from any other.
        self.value = format!("{}-{:04x}", self.plan.short, ctx.rng.gen::<u16>());
        self.phase = Phase::Acquiring;
        ctx.note(if self.attempt == 1 {
            format!(
                "{}'s job fires. It asks {} for the lock with a random value of its own, {}. Redis has no fencing tokens, so the same script also increments the counter `{}` and hands back its new value as one.",
                self.name,
                self.node(self.primary),
                self.value,
                self.plan.fence_key
            )
        } else {
            format!(
                "{} asks {} for the lock again (attempt {}), as {}.",
                self.name,
                self.node(self.primary),
                self.attempt,
                self.value
            )
        });
        ctx.send(
            self.primary,
            RedisMsg::Set {
                key: self.plan.key.clone(),
                value: self.value.clone(),
                nx: true,
                px_ms: self.plan.ttl_ms,
                incr: Some(self.plan.fence_key.clone()),
            },
        );
        ctx.set_timer(
            RedisTimer::RequestTimeout {
                attempt: self.attempt,
            },
            self.plan.request_timeout_ms * MS_US,
        );
    }

    pub fn message<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, msg: RedisMsg)
    where
        P::Durable: From<WorkerDurable>,
    {
        match msg {
            RedisMsg::SetReply { ok, counter, .. }
                if self.phase == Phase::Acquiring && from == self.primary =>
            {
                ctx.cancel_timer(RedisTimer::RequestTimeout {
                    attempt: self.attempt,
                });
                if !ok {
                    ctx.note(format!(
                        "Someone else holds the lock; {} will try again in {}.",
                        self.name,
                        tenths(self.plan.retry_ms)
                    ));
                    self.back_off(ctx);
                    return;
                }
                let token = counter.unwrap_or(0);
                self.held = Some(Held {
                    value: self.value.clone(),
                    token,
                    granted_by: from,
                });
                match self.plan.wait {
                    Some((replicas, timeout_ms)) => {
                        ctx.note(format!(
                            "{} got OK and token {token} from {}. Before trusting it, it sends WAIT {replicas} {timeout_ms} to hear that a replica has the lock too.",
                            self.name,
                            self.node(from)
                        ));
                        self.phase = Phase::Confirming;
                        ctx.send(from, RedisMsg::Wait { replicas, timeout_ms });
                        ctx.set_timer(
                            RedisTimer::RequestTimeout {
                                attempt: self.attempt,
                            },
                            (timeout_ms + self.plan.request_timeout_ms) * MS_US,
                        );
                    }
                    None => {
                        ctx.note(format!(
                            "{} holds the lock: OK from {}, token {token}, {} TTL. It starts on the job at once.",
                            self.name,
                            self.node(from),
                            tenths(self.plan.ttl_ms)
                        ));
                        self.read_progress(ctx);
                    }
                }
            }
            RedisMsg::WaitReply { acked } if self.phase == Phase::Confirming && from == self.primary => {
                ctx.cancel_timer(RedisTimer::RequestTimeout {
                    attempt: self.attempt,
                });
                let needed = self.plan.wait.map_or(0, |w| w.0);
                if acked >= needed {
                    ctx.note(format!(
                        "WAIT says {acked} replica(s) have the write: {} trusts its lock (token {}) and starts the job.",
                        self.name,
                        self.held.as_ref().map_or(0, |h| h.token)
                    ));
                    self.read_progress(ctx);
                } else {
                    ctx.note(format!(
                        "WAIT says only {acked} replica(s) have the write. The key is still set on {} — WAIT cannot take it back — so {} removes it itself and will try again.",
                        self.node(from),
                        self.name
                    ));
                    self.send_release(ctx);
                    self.held = None;
                    self.back_off(ctx);
                }
            }
            RedisMsg::Error { text } if from == self.primary => {
                ctx.note(format!(
                    "{} answers {text}: it is not the primary. {} asks the sentinel.",
                    self.node(from),
                    self.name
                ));
                ctx.cancel_timer(RedisTimer::RequestTimeout {
                    attempt: self.attempt,
                });
                if matches!(self.phase, Phase::Acquiring | Phase::Confirming) {
                    self.held = None;
                    ctx.send(self.plan.sentinel, RedisMsg::WhoIsPrimary);
                    self.back_off(ctx);
                }
            }
            RedisMsg::PrimaryIs { primary, name, .. } => {
                let changed = primary != self.primary;
                self.primary = primary;
                self.primary_down = false;
                if !changed {
                    return;
                }
                match self.phase {
                    Phase::Working { .. } | Phase::Writing { .. } => ctx.note(format!(
                        "{} hears that {name} is the primary now and will send its commands there. Nothing in that news says whether its own lock survived.",
                        self.name
                    )),
                    Phase::BackingOff => {
                        ctx.cancel_timer(RedisTimer::Retry);
                        self.acquire(ctx);
                    }
                    Phase::Acquiring | Phase::Confirming => {
                        ctx.note(format!(
                            "{} hears that {name} is the primary now and abandons its unanswered request.",
                            self.name
                        ));
                        ctx.cancel_timer(RedisTimer::RequestTimeout { attempt: self.attempt });
                        self.held = None;
                        self.acquire(ctx);
                    }
                    _ => {}
                }
            }
            RedisMsg::DelReply { deleted, .. } if self.phase == Phase::Releasing => {
                ctx.note(if deleted {
                    format!("{}'s release removed a key; it is done.", self.name)
                } else {
                    format!("{}'s release removed nothing; it is done.", self.name)
                });
                self.phase = Phase::Done;
            }
            RedisMsg::Ledger(LeaseMsg::Progress { steps_done }) if self.phase == Phase::ReadingProgress => {
                if steps_done >= self.plan.steps {
                    ctx.note(format!(
                        "The ledger has all {steps_done} steps recorded: the job is already done, so {} only gives the lock back.",
                        self.name
                    ));
                    self.finish(ctx);
                } else {
                    if steps_done > 0 {
                        ctx.note(format!(
                            "{steps_done} step(s) are recorded already: {} takes the job up at step {}.",
                            self.name,
                            steps_done + 1
                        ));
                    }
                    self.start_step(ctx, steps_done + 1);
                }
            }
            RedisMsg::Ledger(LeaseMsg::WriteResult { step, accepted, .. }) => {
                if self.phase != (Phase::Writing { step }) {
                    return;
                }
                if accepted {
                    self.step_finished(ctx, step);
                } else {
                    ctx.note(format!(
                        "The ledger refused {}'s step {step}: a higher token has written there, so another holder exists. It stops.",
                        self.name
                    ));
                    self.held = None;
                    self.phase = Phase::Stopped;
                }
            }
            _ => {}
        }
    }

    pub fn peer_down<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, peer: NodeId) {
        if peer != self.primary {
            return;
        }
        match self.phase {
            Phase::Confirming => {
                ctx.note(format!(
                    "{}'s connection to {} drops while its WAIT is still blocked. Its lock was set, and visible to every client of {}, from the moment of the OK; WAIT only reports how far replication got and could never have taken it back. Did a replica get it? {} cannot know, so it does not act on it.",
                    self.name,
                    self.node(peer),
                    self.node(peer),
                    self.name
                ));
                ctx.cancel_timer(RedisTimer::RequestTimeout {
                    attempt: self.attempt,
                });
                self.lose_connection(ctx);
            }
            Phase::Acquiring => {
                ctx.note(format!(
                    "{}'s connection to {} drops before the answer came. Was the lock set? It cannot know, so it does not act on it.",
                    self.name,
                    self.node(peer)
                ));
                ctx.cancel_timer(RedisTimer::RequestTimeout {
                    attempt: self.attempt,
                });
                self.lose_connection(ctx);
            }
            Phase::Working { .. } | Phase::Writing { .. } => {
                self.primary_down = true;
                ctx.note(format!(
                    "{}'s connection to {} drops. It carries on working: its lock is a key in {}'s memory, and nothing tells it whether any replica has that key.",
                    self.name,
                    self.node(peer),
                    self.node(peer)
                ));
            }
            _ => self.primary_down = true,
        }
    }

    fn lose_connection<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        self.held = None;
        self.primary_down = true;
        ctx.send(self.plan.sentinel, RedisMsg::WhoIsPrimary);
        self.back_off(ctx);
    }

    fn back_off<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        self.phase = Phase::BackingOff;
        ctx.set_timer(RedisTimer::Retry, self.plan.retry_ms * MS_US);
    }

    /// Asks the ledger how far the job got, so that a second holder in turn continues it.
    fn read_progress<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        self.phase = Phase::ReadingProgress;
        ctx.send(self.plan.ledger, RedisMsg::Ledger(LeaseMsg::ReadProgress));
    }

    fn start_step<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, step: u32) {
        self.phase = Phase::Working { step };
        ctx.set_timer(RedisTimer::StepDone { step }, self.plan.step_ms * MS_US);
    }

    fn write<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, step: u32) {
        let token = self.held.as_ref().map_or(0, |h| h.token);
        self.phase = Phase::Writing { step };
        ctx.note(format!(
            "{} has done step {step}'s work and sends the debit with token {token} in its WHERE clause.",
            self.name
        ));
        ctx.send(
            self.plan.ledger,
            RedisMsg::Ledger(LeaseMsg::Write {
                step,
                amount: self.plan.amount,
                token: FencingToken(token),
                check: WriteCheck::TokenPredicate,
            }),
        );
    }

    fn step_finished<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, step: u32)
    where
        P::Durable: From<WorkerDurable>,
    {
        if step < self.plan.steps {
            self.start_step(ctx, step + 1);
        } else {
            self.finish(ctx);
        }
    }

    fn finish<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P::Durable: From<WorkerDurable>,
    {
        self.finished = true;
        ctx.persist(self.durable().into());
        let how = match self.plan.release {
            ReleaseMode::NaiveDelete => "DEL".to_string(),
            ReleaseMode::CompareAndDelete => {
                "the release script (delete only if the value is still mine)".into()
            }
        };
        ctx.note(format!(
            "{} is done with the job and releases the lock on {} with {how}.",
            self.name,
            self.node(self.primary)
        ));
        self.send_release(ctx);
        self.held = None;
        self.phase = Phase::Releasing;
    }

    fn send_release<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        let key = self.plan.key.clone();
        let msg = match self.plan.release {
            ReleaseMode::NaiveDelete => RedisMsg::Del { key },
            ReleaseMode::CompareAndDelete => RedisMsg::CompareAndDelete {
                key,
                value: self.value.clone(),
            },
        };
        ctx.send(self.primary, msg);
    }

    pub fn summary(&self) -> Vec<String> {
        let phase = match &self.phase {
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
        };
        let mut lines = vec![phase];
        if let Some(h) = &self.held {
            lines.push(format!("lock {} · token {}", h.value, h.token));
        }
        lines.push(format!("talks to {}", self.node(self.primary)));
        lines
    }
}
