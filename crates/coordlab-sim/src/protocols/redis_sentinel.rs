//! A Sentinel-like failover monitor. It pings every Redis node; when the primary has been
//! silent for longer than `down_after_ms` by the monitor's own clock, it promotes the replica
//! with the highest stream offset it has heard of, points every other node at it, and tells
//! the clients where the primary is now. A node that comes back claiming to be primary is
//! turned into a replica of the new one.
//!
//! One monitor stands in for the usual three: their vote only decides *that* a failover
//! happens. Nothing in it makes the replicas agree on the data first — which is the point.

use super::redis_msg::{tenths, RedisMsg};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::time::MS_US;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentinelConfig {
    /// Every Redis node it watches.
    pub nodes: Vec<NodeId>,
    /// Told whenever the primary changes; may also ask.
    pub clients: Vec<NodeId>,
    pub ping_ms: u64,
    pub down_after_ms: u64,
    /// It stops pinging at this reading of its clock, so that a run ends.
    pub stop_at_ms: u64,
}

/// The monitor's configuration file, rewritten at every failover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentinelDurable {
    pub primary: NodeId,
    pub epoch: u64,
}

/// The monitor's one timer: time for the next round of pings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PingRound;

impl Label for PingRound {
    fn label(&self) -> String {
        "pings every node".to_string()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failover {
    pub from: NodeId,
    pub to: NodeId,
    pub epoch: u64,
    /// The promoted node's offset as the monitor knew it.
    pub offset: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sentinel {
    pub config: SentinelConfig,
    pub primary: NodeId,
    pub epoch: u64,
    last_pong_us: VecMap<NodeId, u64>,
    /// The stream offset each node reported in its last PONG.
    pub offsets: VecMap<NodeId, u64>,
    pub failovers: Vec<Failover>,
    /// Promoted, but not yet confirmed by the new primary: clients are told once it is.
    announce_pending: bool,
    /// When each node was last given a role, so that answers still in flight from before
    /// an order do not trigger the same order again.
    ordered_at_us: VecMap<NodeId, u64>,
    stopped: bool,
}

impl Sentinel {
    pub fn recover(config: &SentinelConfig, d: &SentinelDurable) -> Sentinel {
        Sentinel {
            config: config.clone(),
            primary: d.primary,
            epoch: d.epoch,
            last_pong_us: VecMap::new(),
            offsets: VecMap::new(),
            failovers: Vec::new(),
            announce_pending: false,
            ordered_at_us: VecMap::new(),
            stopped: false,
        }
    }

    pub fn durable(&self) -> SentinelDurable {
        SentinelDurable {
            primary: self.primary,
            epoch: self.epoch,
        }
    }

    pub fn start(&mut self, ctx: &mut Ctx<'_, Self>) {
        // Everyone gets a full grace period from the moment the monitor starts.
        for n in &self.config.nodes {
            self.last_pong_us.insert(*n, ctx.local_now_us);
        }
        ctx.note(format!(
            "The sentinel watches {}: it pings every node every {} ms and declares the primary down after {} of silence. (Production setups default to 30 s and run three monitors that vote; the vote decides that a failover happens, not what data survives it.)",
            ctx.name(self.primary),
            self.config.ping_ms,
            tenths(self.config.down_after_ms)
        ));
        ctx.set_timer(PingRound, self.config.ping_ms * MS_US);
    }

    pub fn message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RedisMsg) {
        match msg {
            RedisMsg::Pong {
                primary: claims_primary,
                replica_of,
                offset,
            } => {
                self.last_pong_us.insert(from, ctx.local_now_us);
                self.offsets.insert(from, offset);
                if from == self.primary && claims_primary && self.announce_pending {
                    self.announce(ctx);
                }
                let wrong = if from == self.primary {
                    !claims_primary
                } else {
                    claims_primary || replica_of != Some(self.primary)
                };
                let ordered_us = self.ordered_at_us.get(&from).copied();
                let settled =
                    ordered_us.is_none_or(|at| ctx.local_now_us >= at + self.config.ping_ms * MS_US);
                if wrong && settled && !self.stopped {
                    self.ordered_at_us.insert(from, ctx.local_now_us);
                    let order = if from == self.primary {
                        None
                    } else {
                        Some((self.primary, ctx.name(self.primary).to_string()))
                    };
                    if claims_primary && from != self.primary {
                        ctx.note(format!(
                            "{} answers as a primary, but the sentinel's primary is {}: it is told to become a replica.",
                            ctx.name(from),
                            ctx.name(self.primary)
                        ));
                    }
                    ctx.send(
                        from,
                        RedisMsg::ReplicaOf {
                            primary: order,
                            epoch: self.epoch,
                        },
                    );
                }
            }
            RedisMsg::WhoIsPrimary => ctx.send(
                from,
                RedisMsg::PrimaryIs {
                    primary: self.primary,
                    name: ctx.name(self.primary).to_string(),
                    epoch: self.epoch,
                },
            ),
            _ => {}
        }
    }

    pub fn ping_round(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.stopped {
            return;
        }
        let now = ctx.local_now_us;
        if now >= self.config.stop_at_ms * MS_US {
            self.stopped = true;
            ctx.note("The sentinel stops its rounds here: the story is over.");
            return;
        }
        let silent_us = now.saturating_sub(self.last_pong_us.get(&self.primary).copied().unwrap_or(now));
        if silent_us > self.config.down_after_ms * MS_US {
            self.fail_over(ctx, silent_us);
        }
        for n in self.config.nodes.clone() {
            ctx.send(n, RedisMsg::Ping);
        }
        ctx.set_timer(PingRound, self.config.ping_ms * MS_US);
    }

    fn fail_over(&mut self, ctx: &mut Ctx<'_, Self>, silent_us: u64) {
        let now = ctx.local_now_us;
        // Only a replica that answered one of the last two rounds is a candidate: one that has
        // gone quiet may be down too.
        let recent_us = (2 * self.config.ping_ms + self.config.ping_ms / 2) * MS_US;
        let heard_recently =
            |n: &NodeId| now.saturating_sub(self.last_pong_us.get(n).copied().unwrap_or(0)) <= recent_us;
        // The most up-to-date replica it knows of; ties go to the first in its list.
        let mut best: Option<(NodeId, u64)> = None;
        for n in self
            .config
            .nodes
            .iter()
            .filter(|n| **n != self.primary && heard_recently(n))
        {
            let offset = self.offsets.get(n).copied().unwrap_or(0);
            if best.is_none_or(|(_, b)| offset > b) {
                best = Some((*n, offset));
            }
        }
        let old = self.primary;
        let Some((new, offset)) = best else {
            ctx.note(format!(
                "{} has been silent for {}, but no replica answers either: there is nothing to promote.",
                ctx.name(old),
                tenths(silent_us / MS_US)
            ));
            return;
        };
        self.epoch += 1;
        self.primary = new;
        let name = ctx.name(new);
        ctx.note(format!(
            "{} has not answered for {}: the sentinel declares it down and promotes {name}, the replica with the most data it has heard of (#{offset}), and points the other nodes at it. Nobody asks whether {name} has every write the old primary acknowledged.",
            ctx.name(old),
            tenths(silent_us / MS_US)
        ));
        ctx.send(
            new,
            RedisMsg::ReplicaOf {
                primary: None,
                epoch: self.epoch,
            },
        );
        for n in &self.config.nodes {
            self.ordered_at_us.insert(*n, now);
        }
        for n in self.config.nodes.clone().into_iter().filter(|n| *n != new) {
            ctx.send(
                n,
                RedisMsg::ReplicaOf {
                    primary: Some((new, name.to_string())),
                    epoch: self.epoch,
                },
            );
        }
        self.announce_pending = true;
        self.failovers.push(Failover {
            from: old,
            to: new,
            epoch: self.epoch,
            offset,
        });
        ctx.persist(self.durable());
    }

    /// Tells every client where the primary is, once the promoted node has confirmed.
    fn announce(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.announce_pending = false;
        let name = ctx.name(self.primary);
        ctx.note(format!(
            "{name} confirms it is the primary. The sentinel tells the clients to send their commands to {name} from now on."
        ));
        for c in self.config.clients.clone() {
            ctx.send(
                c,
                RedisMsg::PrimaryIs {
                    primary: self.primary,
                    name: name.to_string(),
                    epoch: self.epoch,
                },
            );
        }
    }

    pub fn summary(&self, view: &ViewCtx<'_>) -> Vec<String> {
        let mut lines = vec![format!(
            "primary: {} (epoch {})",
            view.name(self.primary),
            self.epoch
        )];
        if self.stopped {
            lines.push("stopped".to_string());
        } else if let Some(last) = self.last_pong_us.get(&self.primary) {
            let silent_ms = view.local_now_us.saturating_sub(*last) / MS_US;
            if silent_ms > self.config.ping_ms + 20 {
                lines.push(format!(
                    "{} silent {} / {}",
                    view.name(self.primary),
                    tenths(silent_ms),
                    tenths(self.config.down_after_ms)
                ));
            }
        }
        if let Some(f) = self.failovers.last() {
            lines.push(format!("failover: {} → {}", view.name(f.from), view.name(f.to)));
        }
        lines
    }
}

impl Participant for Sentinel {
    type Msg = RedisMsg;
    type Timer = PingRound;
    type Durable = SentinelDurable;
    type Config = SentinelConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.start(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RedisMsg) {
        self.message(ctx, from, msg);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, _timer: PingRound) {
        self.ping_round(ctx);
    }

    fn recover(config: &SentinelConfig, _id: NodeId, durable: &SentinelDurable) -> Self {
        Sentinel::recover(config, durable)
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Vec<String> {
        Sentinel::summary(self, view)
    }
}
