//! The Redis node as a participant: its role and the sentinels' orders (`PING`,
//! `REPLICAOF`), what it keeps on disk, how it starts and restarts, and its card. The
//! commands it serves are in `keyspace`, the stream to its replicas in `replication`.

use super::keyspace::{Deletion, Grant};
use super::replication::PendingWait;
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::presentation::narration::redis_locks::redis::RedisNodeSaw;
use crate::protocols::redis_locks::redis_msg::{KeyEntry, RedisMsg, StreamEntry};

/// How often a replica without a copy asks its primary again (on the next ping after this).
pub const SYNC_RETRY_MS: u64 = 400;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Role {
    #[default]
    Primary,
    Replica {
        of: NodeId,
    },
}

/// How the scenario set a node up; the same for its whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedisConfig {
    /// Append-only file with an fsync per write: data survives a restart. Off: a restart
    /// comes back empty.
    pub persistence: bool,
    /// How long a primary buffers writes before streaming them to its replicas.
    pub replication_lag_ms: u64,
}

/// What a node keeps across a crash: its configuration file always (the role the sentinels
/// last gave it), the data only with persistence on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedisDurable {
    pub role: Role,
    pub epoch: u64,
    pub data: VecMap<String, KeyEntry>,
    pub offset: u64,
    pub stream: Vec<StreamEntry>,
}

impl RedisDurable {
    /// A node before its first start: its role, and the data set it loads when it starts.
    pub fn fresh(role: Role, data: VecMap<String, KeyEntry>) -> RedisDurable {
        RedisDurable {
            role,
            data,
            ..RedisDurable::default()
        }
    }
}

/// The timers of a Redis node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreTimer {
    /// Primary: send the buffered writes down the stream.
    Flush,
    /// A key's expiry instant, by the node's own clock.
    Expire { key: String },
    /// A blocked `WAIT` gives up.
    WaitTimeout { id: u64 },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedisNode {
    pub config: RedisConfig,
    pub role: Role,
    /// The newest failover epoch this node was told about; older orders are ignored.
    pub epoch: u64,
    pub data: VecMap<String, KeyEntry>,
    /// Position in the replication stream: how many writes this node has applied.
    pub offset: u64,
    /// The last few stream entries this node applied, oldest first.
    pub stream: Vec<StreamEntry>,
    /// Replica: whether it holds a copy from its current primary yet.
    pub synced: bool,
    /// Replica: its connection to the primary dropped; it keeps its copy and reconnects.
    pub link_down: bool,
    /// Replica: when it last asked its primary for a copy (its clock); it asks again on a
    /// ping once `SYNC_RETRY_MS` have passed.
    pub(super) asked_sync_us: u64,
    /// Primary: the replicas that connected, with the offset each last acknowledged.
    pub replicas: VecMap<NodeId, u64>,
    /// Primary: writes applied and acknowledged but not yet sent down the stream.
    pub unsent: Vec<StreamEntry>,
    pub(super) flush_pending: bool,
    pub(super) waits: Vec<PendingWait>,
    pub(super) next_wait: u64,
    /// The stream offset of each client's latest write (what its `WAIT` waits for).
    pub(super) last_write: VecMap<NodeId, u64>,
    pub grants: Vec<Grant>,
    pub deletions: Vec<Deletion>,
}

impl RedisNode {
    /// The node as it comes up from what it has on disk.
    pub fn recover(config: RedisConfig, d: &RedisDurable) -> RedisNode {
        RedisNode {
            config,
            role: d.role,
            epoch: d.epoch,
            data: d.data.clone(),
            offset: d.offset,
            stream: d.stream.clone(),
            next_wait: 1,
            ..RedisNode::default()
        }
    }

    /// What this node has on disk now.
    pub fn durable(&self) -> RedisDurable {
        let keep = self.config.persistence;
        RedisDurable {
            role: self.role,
            epoch: self.epoch,
            data: if keep { self.data.clone() } else { VecMap::new() },
            offset: if keep { self.offset } else { 0 },
            stream: if keep { self.stream.clone() } else { Vec::new() },
        }
    }

    pub fn is_primary(&self) -> bool {
        self.role == Role::Primary
    }

    pub(super) fn persist(&self, ctx: &mut Ctx<'_, Self>) {
        ctx.persist(self.durable());
    }

    /// Answers a sentinel with its role and offset.
    fn ping(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId) {
        let replica_of = match self.role {
            Role::Replica { of } => Some(of),
            Role::Primary => None,
        };
        ctx.send(
            from,
            RedisMsg::Pong {
                primary: self.is_primary(),
                replica_of,
                offset: self.offset,
            },
        );
        // A replica that has no copy yet keeps asking, as a real one retries its
        // connection on a timer.
        if let (Some(of), true) = (replica_of, !self.synced || self.link_down) {
            if ctx.local_now_us >= self.asked_sync_us + SYNC_RETRY_MS * MS_US {
                self.request_sync(ctx, of);
            }
        }
    }

    /// `REPLICAOF NO ONE` or `REPLICAOF <primary>` from a sentinel.
    fn reconfigure(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        primary: Option<(NodeId, String)>,
        epoch: u64,
    ) {
        if epoch < self.epoch {
            return;
        }
        self.epoch = epoch;
        let me = ctx.me();
        match primary {
            None if self.is_primary() => {}
            None => {
                self.role = Role::Primary;
                self.replicas.clear();
                self.arm_expiry(ctx);
                ctx.note(RedisNodeSaw::Promoted {
                    me,
                    offset: self.offset,
                });
                // The answer to REPLICAOF NO ONE: the sentinel waits for it before telling clients.
                ctx.send(
                    from,
                    RedisMsg::Pong {
                        primary: true,
                        replica_of: None,
                        offset: self.offset,
                    },
                );
            }
            Some((p, _)) if self.role == (Role::Replica { of: p }) && self.synced && !self.link_down => {}
            Some((p, name)) => {
                ctx.note(RedisNodeSaw::NowReplicaOf {
                    me,
                    primary: &name,
                    was_primary: self.is_primary(),
                });
                self.role = Role::Replica { of: p };
                self.synced = false;
                self.link_down = false;
                self.replicas.clear();
                self.unsent.clear();
                self.waits.clear();
                self.flush_pending = false;
                ctx.cancel_timer(StoreTimer::Flush);
                self.request_sync(ctx, p);
            }
        }
        self.persist(ctx);
    }
}

impl Participant for RedisNode {
    type Msg = RedisMsg;
    type Timer = StoreTimer;
    type Durable = RedisDurable;
    type Config = RedisConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        let me = ctx.me();
        let keys = self.data.len();
        match self.role {
            Role::Primary => {
                self.arm_expiry(ctx);
                ctx.note(RedisNodeSaw::UpPrimary {
                    me,
                    keys,
                    persistence: self.config.persistence,
                });
            }
            Role::Replica { of } => {
                self.synced = false;
                ctx.note(RedisNodeSaw::UpReplica { me, of: ctx.name(of) });
                self.request_sync(ctx, of);
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RedisMsg) {
        let writes = matches!(
            msg,
            RedisMsg::Set { .. }
                | RedisMsg::Del { .. }
                | RedisMsg::CompareAndDelete { .. }
                | RedisMsg::Wait { .. }
        );
        if writes && !self.is_primary() {
            ctx.note(RedisNodeSaw::ReplicaRefusesWrite { me: ctx.me() });
            ctx.send(
                from,
                RedisMsg::Error {
                    text: "READONLY this node is a replica".into(),
                },
            );
            return;
        }
        match msg {
            RedisMsg::Set {
                key,
                value,
                nx,
                px_ms,
                incr,
            } => self.set(ctx, from, key, value, nx, px_ms, incr),
            RedisMsg::Get { key } => {
                let value = self.get(&key, ctx.local_now_us).map(|e| e.value.clone());
                ctx.send(from, RedisMsg::GetReply { key, value });
            }
            RedisMsg::Del { key } => self.delete(ctx, from, key, None),
            RedisMsg::CompareAndDelete { key, value } => self.delete(ctx, from, key, Some(value)),
            RedisMsg::Wait { replicas, timeout_ms } => self.wait(ctx, from, replicas, timeout_ms),
            RedisMsg::Sync { have } => self.send_full_copy(ctx, from, have),
            RedisMsg::FullSync { data, offset, stream } => {
                self.take_full_copy(ctx, from, data, offset, stream)
            }
            RedisMsg::Replicate { entries } => self.apply_stream(ctx, from, entries),
            RedisMsg::ReplAck { offset } => self.acknowledged(ctx, from, offset),
            RedisMsg::Ping => self.ping(ctx, from),
            RedisMsg::ReplicaOf { primary, epoch } => self.reconfigure(ctx, from, primary, epoch),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: StoreTimer) {
        match timer {
            StoreTimer::Flush => self.flush(ctx),
            StoreTimer::Expire { key } => self.expiry_due(ctx, key),
            StoreTimer::WaitTimeout { id } => self.wait_timed_out(ctx, id),
        }
    }

    /// The primary's connection dropped: the copy is no longer being kept up to date, and
    /// the replica will ask for a fresh one once the primary answers again.
    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        if !self.watches(peer) {
            return;
        }
        self.link_down = true;
        ctx.note(RedisNodeSaw::LostLink {
            me: ctx.me(),
            primary: ctx.name(peer),
            offset: self.offset,
        });
    }

    /// A replica holds a connection to its primary and notices when it breaks.
    fn watches(&self, peer: NodeId) -> bool {
        self.role == (Role::Replica { of: peer })
    }

    fn recover(config: &RedisConfig, _id: NodeId, durable: &RedisDurable) -> Self {
        RedisNode::recover(*config, durable)
    }
}
