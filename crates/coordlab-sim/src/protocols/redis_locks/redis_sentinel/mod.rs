//! Redis Sentinel, as one of three. Each sentinel pings every Redis node; a primary silent for
//! longer than `down_after_ms` by the sentinel's own clock is *subjectively down* to it. It then
//! asks the other sentinels; once `quorum` of them (itself included) find the primary down, it
//! is *objectively down*. A sentinel that finds it objectively down starts an election in a new
//! epoch: it votes for itself and asks the others for their vote, and each sentinel gives one
//! vote per epoch, to the first that asks. With a majority of the votes it performs the
//! failover: it promotes the replica with the most data it has heard of (`REPLICAOF NO ONE`),
//! points the other nodes at it, tells the clients once the new primary confirms, and tells the
//! other sentinels (a hello), which adopt the configuration with the highest epoch.
//!
//! The quorum decides *that* the primary is down; the majority decides *who* fails over, so
//! that two sentinels never promote two replicas in one epoch. Nothing asks whether the
//! promoted replica has every write the old primary acknowledged — which is the point.
//!
//! One job per file: this one pings, corrects nodes in the wrong role, answers clients and
//! draws the card; `agreement` counts who finds the primary down, runs the vote and performs
//! the failover.

mod agreement;

use super::redis_msg::RedisMsg;
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::presentation::narration::redis_locks::redis_sentinel::SentinelSaw;
use rand::Rng;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentinelConfig {
    /// Every Redis node it watches.
    pub nodes: Vec<NodeId>,
    /// Every sentinel, itself included.
    pub sentinels: Vec<NodeId>,
    /// Told whenever the primary changes; may also ask.
    pub clients: Vec<NodeId>,
    /// How many sentinels must find the primary down for it to be objectively down.
    pub quorum: u32,
    pub ping_ms: u64,
    pub down_after_ms: u64,
    /// How long an election may take before its candidate gives up; a sentinel that started
    /// one, or voted for another, starts no election of its own for twice this long.
    pub failover_timeout_ms: u64,
    /// It stops pinging at this reading of its clock, so that a run ends.
    pub stop_at_ms: u64,
}

impl SentinelConfig {
    /// The votes a candidate needs: a majority of the sentinels, and at least the quorum.
    pub fn votes_needed(&self) -> usize {
        (self.sentinels.len() / 2 + 1).max(self.quorum as usize)
    }
}

/// A sentinel's configuration file, rewritten at every failover and every vote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentinelDurable {
    pub primary: NodeId,
    /// The epoch of the failover that made `primary` the primary (0: the initial setup).
    pub config_epoch: u64,
    /// The newest epoch it has seen.
    pub current_epoch: u64,
    /// Its vote in the newest epoch it voted in: for whom, and the epoch.
    pub vote: Option<(NodeId, u64)>,
}

impl SentinelDurable {
    /// A sentinel before its first start, watching `primary`.
    pub fn fresh(primary: NodeId) -> SentinelDurable {
        SentinelDurable {
            primary,
            config_epoch: 0,
            current_epoch: 0,
            vote: None,
        }
    }
}

/// A sentinel's one timer: time for the next round of pings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PingRound;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failover {
    pub from: NodeId,
    pub to: NodeId,
    pub epoch: u64,
    /// The promoted node's offset as the sentinel knew it.
    pub offset: u64,
}

/// This sentinel's own candidacy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Election {
    pub epoch: u64,
    /// The sentinels that voted for it in `epoch`, itself first.
    pub votes: Vec<NodeId>,
    pub started_us: u64,
}

/// Every how many rounds a sentinel that knows of a failover repeats it to the others.
const HELLO_EVERY: u32 = 5;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sentinel {
    pub config: SentinelConfig,
    pub primary: NodeId,
    pub config_epoch: u64,
    pub current_epoch: u64,
    pub vote: Option<(NodeId, u64)>,
    pub(crate) last_pong_us: VecMap<NodeId, u64>,
    /// The stream offset each node reported in its last PONG.
    pub offsets: VecMap<NodeId, u64>,
    /// The primary has been silent too long by this sentinel's clock.
    pub sdown: bool,
    /// A quorum of sentinels find the primary down.
    pub odown: bool,
    /// When each other sentinel last said the primary is down.
    said_down_us: VecMap<NodeId, u64>,
    pub election: Option<Election>,
    /// It starts no election of its own before this reading of its clock.
    no_election_before_us: u64,
    /// The failovers this sentinel performed.
    pub failovers: Vec<Failover>,
    /// Promoted, but not yet confirmed by the new primary: clients are told once it is.
    announce_pending: bool,
    /// When each node was last given a role, so that answers still in flight from before
    /// an order do not trigger the same order again.
    ordered_at_us: VecMap<NodeId, u64>,
    /// Since when each node has answered in a role other than this sentinel's configuration.
    wrong_since_us: VecMap<NodeId, u64>,
    rounds: u32,
    pub(crate) stopped: bool,
}

impl Sentinel {
    pub fn recover(config: &SentinelConfig, d: &SentinelDurable) -> Sentinel {
        Sentinel {
            config: config.clone(),
            primary: d.primary,
            config_epoch: d.config_epoch,
            current_epoch: d.current_epoch,
            vote: d.vote,
            last_pong_us: VecMap::new(),
            offsets: VecMap::new(),
            sdown: false,
            odown: false,
            said_down_us: VecMap::new(),
            election: None,
            no_election_before_us: 0,
            failovers: Vec::new(),
            announce_pending: false,
            ordered_at_us: VecMap::new(),
            wrong_since_us: VecMap::new(),
            rounds: 0,
            stopped: false,
        }
    }

    pub fn durable(&self) -> SentinelDurable {
        SentinelDurable {
            primary: self.primary,
            config_epoch: self.config_epoch,
            current_epoch: self.current_epoch,
            vote: self.vote,
        }
    }

    fn persist(&self, ctx: &mut Ctx<'_, Self>) {
        ctx.persist(self.durable());
    }

    /// The other sentinels.
    fn peers(&self, me: NodeId) -> Vec<NodeId> {
        self.config
            .sentinels
            .iter()
            .copied()
            .filter(|s| *s != me)
            .collect()
    }

    fn pong(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        claims_primary: bool,
        replica_of: Option<NodeId>,
        offset: u64,
    ) {
        let now = ctx.local_now_us;
        self.last_pong_us.insert(from, now);
        self.offsets.insert(from, offset);
        if from == self.primary && claims_primary && self.announce_pending {
            self.announce(ctx);
        }
        let wrong = if from == self.primary {
            !claims_primary
        } else {
            claims_primary || replica_of != Some(self.primary)
        };
        if !wrong {
            self.wrong_since_us.remove(&from);
            return;
        }
        let since = *self.wrong_since_us.get_or_insert_with(from, || now);
        let ping_us = self.config.ping_ms * MS_US;
        // An order may still be on its way, or another sentinel's failover may not have
        // reached this one yet: a node is corrected only once it has stayed wrong a while.
        let settled = self.ordered_at_us.get(&from).is_none_or(|at| now >= at + ping_us);
        if self.stopped || self.sdown || !settled || now < since + 2 * ping_us {
            return;
        }
        self.ordered_at_us.insert(from, now);
        let order = if from == self.primary {
            None
        } else {
            Some((self.primary, ctx.name(self.primary).to_string()))
        };
        if claims_primary && from != self.primary {
            ctx.note(SentinelSaw::ToldToBecomeReplica {
                me: ctx.me(),
                node: ctx.name(from),
                primary: ctx.name(self.primary),
            });
        }
        ctx.send(
            from,
            RedisMsg::ReplicaOf {
                primary: order,
                epoch: self.config_epoch,
            },
        );
    }

    /// Tells the other sentinels which node is the primary, and since which epoch.
    fn send_hello(&self, ctx: &mut Ctx<'_, Self>) {
        for s in self.peers(ctx.node) {
            ctx.send(
                s,
                RedisMsg::Hello {
                    primary: self.primary,
                    name: ctx.name(self.primary).to_string(),
                    epoch: self.config_epoch,
                },
            );
        }
    }

    /// Tells every client where the primary is, once the promoted node has confirmed.
    fn announce(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.announce_pending = false;
        let name = ctx.name(self.primary);
        ctx.note(SentinelSaw::Announces {
            me: ctx.me(),
            primary: name,
        });
        for c in self.config.clients.clone() {
            ctx.send(
                c,
                RedisMsg::PrimaryIs {
                    primary: self.primary,
                    name: name.to_string(),
                    epoch: self.config_epoch,
                },
            );
        }
    }
}

impl Participant for Sentinel {
    type Msg = RedisMsg;
    type Timer = PingRound;
    type Durable = SentinelDurable;
    type Config = SentinelConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        // Everyone gets a full grace period from the moment the sentinel starts.
        for n in &self.config.nodes {
            self.last_pong_us.insert(*n, ctx.local_now_us);
        }
        if self.config.sentinels.first() == Some(&ctx.node) {
            ctx.note(SentinelSaw::Watching {
                sentinels: self.config.sentinels.len(),
                primary: ctx.name(self.primary),
                ping_ms: self.config.ping_ms,
                down_after_ms: self.config.down_after_ms,
                quorum: self.config.quorum,
            });
        }
        // Each sentinel starts its rounds at its own moment, as real ones drift apart.
        let first_ms = ctx.rng.gen_range(1..=self.config.ping_ms);
        ctx.set_timer(PingRound, first_ms * MS_US);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RedisMsg) {
        match msg {
            RedisMsg::Pong {
                primary: claims_primary,
                replica_of,
                offset,
            } => self.pong(ctx, from, claims_primary, replica_of, offset),
            RedisMsg::WhoIsPrimary => ctx.send(
                from,
                RedisMsg::PrimaryIs {
                    primary: self.primary,
                    name: ctx.name(self.primary).to_string(),
                    epoch: self.config_epoch,
                },
            ),
            RedisMsg::IsPrimaryDown {
                primary,
                epoch,
                candidate,
                ..
            } => self.asked(ctx, from, primary, epoch, candidate),
            RedisMsg::PrimaryDownReply {
                primary, down, vote, ..
            } => self.answered(ctx, from, primary, down, vote),
            RedisMsg::Hello { primary, epoch, .. } => self.hello(ctx, from, primary, epoch),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, _: PingRound) {
        if self.stopped {
            return;
        }
        if ctx.local_now_us >= self.config.stop_at_ms * MS_US {
            self.stopped = true;
            if self.config.sentinels.first() == Some(&ctx.node) {
                ctx.note(SentinelSaw::RoundsStop);
            }
            return;
        }
        self.rounds += 1;
        self.watch_primary(ctx);
        for n in self.config.nodes.clone() {
            ctx.send(n, RedisMsg::Ping);
        }
        if self.config_epoch > 0 && self.rounds.is_multiple_of(HELLO_EVERY) {
            self.send_hello(ctx);
        }
        ctx.set_timer(PingRound, self.config.ping_ms * MS_US);
    }

    fn recover(config: &SentinelConfig, _id: NodeId, durable: &SentinelDurable) -> Self {
        Sentinel::recover(config, durable)
    }
}
