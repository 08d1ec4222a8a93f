//! The named lock services of chapter 6, reduced to what their stories need: a lock server
//! that grants one named lock with a lease, renews it while the holder keeps asking, numbers
//! every grant, and (Chubby) refuses the lock for a lock-delay after a holder's lease lapses;
//! and the resource the holders write to, which checks the number or does not.
//!
//! The server's flavour only changes its words: Redis with Redisson's lock (the number is
//! kept for the checker and never handed out), a Chubby cell (the number is the sequencer's
//! generation), Hazelcast's CP subsystem (the number is the fence `lockAndGetFence()` returns).

use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::presentation::narration::services::service_lock::{GuardedResourceSaw, LockServerSaw};

/// Which real service the lock server stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// Redis, used through Redisson's `RLock` (a hash with a TTL; no token).
    Redisson,
    /// A Chubby cell: locks in sessions kept alive by KeepAlives; sequencers; lock-delay.
    Chubby,
    /// Hazelcast's CP subsystem: a FencedLock in a Raft group; CP sessions; fences.
    Hazelcast,
}

/// What travels between clients, the lock server and the resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServiceMsg {
    Acquire,
    Granted {
        number: u64,
    },
    /// The lock is held, or still inside its lock-delay; `left_us` is how long that lasts
    /// by the server's clock (Redisson's script returns the key's remaining TTL).
    Busy {
        delayed: bool,
        left_us: u64,
    },
    /// Redisson: the unlock message published on the lock's channel to subscribed waiters.
    UnlockPublished,
    Renew {
        number: u64,
    },
    Renewed,
    RenewRefused,
    Release {
        number: u64,
    },
    Released {
        ok: bool,
    },
    /// A write of step `step` of the holder's job. `number` is what the client sends with
    /// it (a sequencer or a fence), if anything; `grant` is the grant the writer really holds,
    /// for the checker only: the resource never reads it.
    Write {
        step: u32,
        number: Option<u64>,
        grant: u64,
    },
    WriteResult {
        step: u32,
        accepted: bool,
    },
}

crate::inbox!(ServiceMsg);

/// The lock server's rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    pub flavour: Flavour,
    /// How long a grant or renewal lasts by the server's clock.
    pub lease_ms: u64,
    /// After a lease lapses (not after an unlock), how long nobody may take the lock.
    pub lock_delay_ms: u64,
    /// Where the run stops watching: a lease that lapses after this (by the server's clock)
    /// is left alone, so the end of the story is not mistaken for part of it.
    pub horizon_ms: u64,
}

/// The current holder as the server records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub node: NodeId,
    pub number: u64,
    pub expires_at_us: u64,
}

/// What the server keeps (a replicated store: it survives a restart).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerDurable {
    pub holder: Option<Holder>,
    /// The last number issued.
    pub last_number: u64,
    /// While the server's clock is below this, the lock is in its lock-delay.
    pub delay_until_us: u64,
    /// Whether a refusal inside the current lock-delay has been narrated (once is enough).
    pub delay_told: bool,
    pub renewals: u32,
}

/// Chubby's master answers a held KeepAlive this long before the lease would end.
pub const KEEPALIVE_EARLY_MS: u64 = 1_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockServer {
    pub config: ServerConfig,
    pub durable: ServerDurable,
    /// Chubby: the grant whose KeepAlive the master is holding, unanswered.
    pub held_keepalive: Option<u64>,
    /// Redisson: clients subscribed to the lock's channel while they wait.
    pub subscribers: Vec<NodeId>,
}

/// The server's timers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expire {
    /// The lease of grant `number` may have lapsed.
    Lease(u64),
    /// Chubby: the lease of this grant nears its end; answer its held KeepAlive.
    AnswerKeepAlive(u64),
}

impl LockServer {
    pub fn initial(last_number: u64) -> ServerDurable {
        ServerDurable {
            last_number,
            ..ServerDurable::default()
        }
    }

    /// The holder whose lease is still in force at the server's clock `now_us`.
    pub fn holder_at(&self, now_us: u64) -> Option<&Holder> {
        self.durable.holder.as_ref().filter(|h| h.expires_at_us > now_us)
    }

    fn lapse(&mut self, ctx: &mut Ctx<'_, Self>) {
        let Some(h) = self.durable.holder.take() else {
            return;
        };
        let delay = self.config.lock_delay_ms;
        if delay > 0 {
            self.durable.delay_until_us = ctx.local_now_us + delay * MS_US;
            self.durable.delay_told = false;
        }
        ctx.note(LockServerSaw::Lapsed {
            flavour: self.config.flavour,
            who: ctx.name(h.node),
            number: h.number,
            delay_ms: delay,
        });
        ctx.persist(self.durable.clone());
    }

    /// Chubby: the lease nears its end, so the master answers the KeepAlive it has been
    /// holding, with a new lease. It cannot know whether the client is still there.
    fn answer_keepalive(&mut self, ctx: &mut Ctx<'_, Self>, number: u64) {
        if self.held_keepalive != Some(number) {
            return;
        }
        let lease_us = self.config.lease_ms * MS_US;
        let now = ctx.local_now_us;
        let Some(h) = self.durable.holder.as_mut().filter(|h| h.number == number) else {
            return;
        };
        self.held_keepalive = None;
        h.expires_at_us = now + lease_us;
        let node = h.node;
        self.durable.renewals += 1;
        if self.durable.renewals == 1 {
            ctx.note(LockServerSaw::KeepAliveAnswered {
                who: ctx.name(node),
                lease_ms: self.config.lease_ms,
            });
        }
        ctx.set_timer(Expire::Lease(number), lease_us);
        ctx.persist(self.durable.clone());
        ctx.send(node, ServiceMsg::Renewed);
    }

    fn grant(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId) {
        self.durable.last_number += 1;
        let number = self.durable.last_number;
        let lease_us = self.config.lease_ms * MS_US;
        self.durable.holder = Some(Holder {
            node: from,
            number,
            expires_at_us: ctx.local_now_us + lease_us,
        });
        ctx.note(LockServerSaw::Granted {
            flavour: self.config.flavour,
            who: ctx.name(from),
            number,
            lease_ms: self.config.lease_ms,
        });
        ctx.set_timer(Expire::Lease(number), lease_us);
        ctx.persist(self.durable.clone());
        ctx.send(from, ServiceMsg::Granted { number });
    }
}

impl Participant for LockServer {
    type Msg = ServiceMsg;
    type Timer = Expire;
    type Durable = ServerDurable;
    type Config = ServerConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if let Some(h) = self.durable.holder.clone() {
            let left = h.expires_at_us.saturating_sub(ctx.local_now_us);
            ctx.set_timer(Expire::Lease(h.number), left);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ServiceMsg) {
        let now = ctx.local_now_us;
        if self
            .durable
            .holder
            .as_ref()
            .is_some_and(|h| h.expires_at_us <= now)
        {
            self.lapse(ctx);
        }
        let who = ctx.name(from);
        match msg {
            ServiceMsg::Acquire => {
                if let Some(h) = self.holder_at(now) {
                    let (holder, number, left_us) = (h.node, h.number, h.expires_at_us - now);
                    if holder == from {
                        ctx.send(from, ServiceMsg::Granted { number });
                    } else {
                        if self.config.flavour == Flavour::Redisson && !self.subscribers.contains(&from) {
                            // Redisson subscribes the waiter to the lock's channel.
                            self.subscribers.push(from);
                        }
                        ctx.send(
                            from,
                            ServiceMsg::Busy {
                                delayed: false,
                                left_us,
                            },
                        );
                    }
                } else if now < self.durable.delay_until_us {
                    if !self.durable.delay_told {
                        self.durable.delay_told = true;
                        let left_ms = (self.durable.delay_until_us - now) / MS_US;
                        ctx.note(LockServerSaw::InLockDelay { who, left_ms });
                    }
                    let left_us = self.durable.delay_until_us - now;
                    ctx.send(
                        from,
                        ServiceMsg::Busy {
                            delayed: true,
                            left_us,
                        },
                    );
                } else {
                    self.grant(ctx, from);
                }
            }
            ServiceMsg::Renew { number } => {
                let lease_us = self.config.lease_ms * MS_US;
                match self.durable.holder.as_mut() {
                    Some(h)
                        if h.node == from && h.number == number && self.config.flavour == Flavour::Chubby =>
                    {
                        // The master holds the KeepAlive and answers it when the lease nears
                        // its end, granting the next lease then.
                        let left = h.expires_at_us.saturating_sub(now);
                        self.held_keepalive = Some(number);
                        ctx.set_timer(
                            Expire::AnswerKeepAlive(number),
                            left.saturating_sub(KEEPALIVE_EARLY_MS * MS_US),
                        );
                    }
                    Some(h) if h.node == from && h.number == number => {
                        h.expires_at_us = now + lease_us;
                        self.durable.renewals += 1;
                        ctx.set_timer(Expire::Lease(number), lease_us);
                        ctx.persist(self.durable.clone());
                        ctx.send(from, ServiceMsg::Renewed);
                    }
                    _ => {
                        ctx.note(LockServerSaw::RenewalRefused {
                            who,
                            number,
                            flavour: self.config.flavour,
                        });
                        ctx.send(from, ServiceMsg::RenewRefused);
                    }
                }
            }
            ServiceMsg::Release { number } => {
                let ok = self
                    .durable
                    .holder
                    .as_ref()
                    .is_some_and(|h| h.node == from && h.number == number);
                if ok {
                    self.durable.holder = None;
                    self.held_keepalive = None;
                    ctx.cancel_timer(Expire::Lease(number));
                    ctx.cancel_timer(Expire::AnswerKeepAlive(number));
                    ctx.persist(self.durable.clone());
                    let waiters = std::mem::take(&mut self.subscribers);
                    ctx.note(LockServerSaw::Released {
                        who,
                        published: !waiters.is_empty(),
                    });
                    for w in waiters {
                        ctx.send(w, ServiceMsg::UnlockPublished);
                    }
                }
                ctx.send(from, ServiceMsg::Released { ok });
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: Expire) {
        if ctx.local_now_us > self.config.horizon_ms * MS_US {
            return;
        }
        match timer {
            Expire::Lease(number) => {
                let lapsed = self
                    .durable
                    .holder
                    .as_ref()
                    .is_some_and(|h| h.number == number && h.expires_at_us <= ctx.local_now_us);
                if lapsed {
                    self.lapse(ctx);
                }
            }
            Expire::AnswerKeepAlive(number) => self.answer_keepalive(ctx, number),
        }
    }

    fn recover(config: &ServerConfig, _id: NodeId, durable: &ServerDurable) -> Self {
        LockServer {
            config: config.clone(),
            durable: durable.clone(),
            held_keepalive: None,
            subscribers: Vec::new(),
        }
    }
}

/// What the resource does with the number that comes with a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Applies every write (it cannot, or does not, look at a token).
    None,
    /// Remembers the highest number it has seen and refuses anything lower.
    Highest,
}

/// One write as the resource saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteSeen {
    pub writer: NodeId,
    pub step: u32,
    pub number: Option<u64>,
    /// The writer's real grant (for the checker).
    pub grant: u64,
    pub accepted: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceState {
    pub highest: u64,
    pub writes: Vec<WriteSeen>,
}

/// The storage the holders write to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardedResource {
    pub check: Check,
    pub flavour: Flavour,
    pub durable: ResourceState,
}

impl Participant for GuardedResource {
    type Msg = ServiceMsg;
    type Timer = crate::kernel::participant::NoTimer;
    type Durable = ResourceState;
    type Config = (Check, Flavour);

    fn on_start(&mut self, _ctx: &mut Ctx<'_, Self>) {}

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ServiceMsg) {
        let ServiceMsg::Write { step, number, grant } = msg else {
            return;
        };
        let who = ctx.name(from);
        let word = self.flavour.number_word();
        let accepted = match (self.check, number) {
            (Check::Highest, Some(n)) if n < self.durable.highest => {
                ctx.note(GuardedResourceSaw::Lower {
                    word,
                    highest: self.durable.highest,
                    who,
                    number: n,
                });
                false
            }
            (Check::Highest, Some(n)) => {
                self.durable.highest = n;
                ctx.note(GuardedResourceSaw::Highest {
                    word,
                    number: n,
                    who,
                    step,
                });
                true
            }
            (Check::Highest, None) => {
                ctx.note(GuardedResourceSaw::NoNumber { who, step });
                true
            }
            (Check::None, _) => {
                let stale = self.durable.writes.iter().any(|w| w.accepted && w.grant > grant);
                ctx.note(GuardedResourceSaw::Unchecked { who, step, stale });
                true
            }
        };
        self.durable.writes.push(WriteSeen {
            writer: from,
            step,
            number,
            grant,
            accepted,
        });
        ctx.persist(self.durable.clone());
        ctx.send(from, ServiceMsg::WriteResult { step, accepted });
    }

    fn recover(config: &(Check, Flavour), _id: NodeId, durable: &ResourceState) -> Self {
        GuardedResource {
            check: config.0,
            flavour: config.1,
            durable: durable.clone(),
        }
    }
}
