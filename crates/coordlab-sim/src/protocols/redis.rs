//! A Redis node: a key-value store with `SET … NX PX`, `GET`, `DEL`, an atomic
//! compare-and-delete script and `WAIT`, key expiry judged by the node's own clock, and
//! persistence on or off.
//!
//! Replication is asynchronous: a primary applies a write, answers the client at once, and
//! only later — after the configured lag — sends the write down the stream to its replicas.
//! A crash inside that gap loses the write for good. `WAIT` lets a client learn how many
//! replicas have caught up; it never takes a write back. Replicas refuse writes, never expire
//! keys on their own (they wait for the primary's `DEL`), and copy the whole data set from
//! their primary whenever they (re)connect to it.

use super::redis_msg::{tenths, KeyEntry, RedisMsg, RedisParticipant, RedisTimer, ReplOp, StreamEntry};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Ctx;
use crate::kernel::time::MS_US;
use std::collections::BTreeMap;

/// How many recent stream entries a node keeps for the inspector.
pub const STREAM_KEEP: usize = 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Primary,
    Replica { of: NodeId },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisConfig {
    pub names: Vec<String>,
    /// Append-only file with an fsync per write: data survives a restart. Off: a restart
    /// comes back empty.
    pub persistence: bool,
    /// How long a primary buffers writes before streaming them to its replicas.
    pub replication_lag_ms: u64,
}

/// What a node keeps across a crash: its configuration file always (the role the failover
/// monitor last gave it), the data only with persistence on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisDurable {
    pub config: RedisConfig,
    pub role: Role,
    pub epoch: u64,
    pub data: BTreeMap<String, KeyEntry>,
    pub offset: u64,
    pub stream: Vec<StreamEntry>,
}

/// A successful `SET NX`: what the world reads to list grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub client: NodeId,
    pub value: String,
    pub counter: Option<u64>,
}

/// A key removed by a client's `DEL` or release script, and the value it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deletion {
    pub client: NodeId,
    pub key: String,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct PendingWait {
    id: u64,
    client: NodeId,
    target: u64,
    needed: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisNode {
    pub id: NodeId,
    pub config: RedisConfig,
    pub role: Role,
    /// The newest failover epoch this node was told about; older orders are ignored.
    pub epoch: u64,
    pub data: BTreeMap<String, KeyEntry>,
    /// Position in the replication stream: how many writes this node has applied.
    pub offset: u64,
    /// The last few stream entries this node applied, oldest first.
    pub stream: Vec<StreamEntry>,
    /// Replica: whether it holds a copy from its current primary yet.
    pub synced: bool,
    /// Replica: its connection to the primary dropped; it keeps its copy and reconnects.
    pub link_down: bool,
    /// Replica: pings seen since it last asked for a copy (it asks again after two).
    pings_since_sync: u32,
    /// Primary: the replicas that connected, with the offset each last acknowledged.
    pub replicas: BTreeMap<NodeId, u64>,
    /// Primary: writes applied and acknowledged but not yet sent down the stream.
    pub unsent: Vec<StreamEntry>,
    flush_pending: bool,
    waits: Vec<PendingWait>,
    next_wait: u64,
    /// The stream offset of each client's latest write (what its `WAIT` waits for).
    last_write: BTreeMap<NodeId, u64>,
    pub grants: Vec<Grant>,
    pub deletions: Vec<Deletion>,
}

impl RedisNode {
    pub fn new(id: NodeId, config: RedisConfig, role: Role, data: BTreeMap<String, KeyEntry>) -> RedisNode {
        RedisNode {
            id,
            config,
            role,
            epoch: 0,
            data,
            offset: 0,
            stream: Vec::new(),
            synced: false,
            link_down: false,
            pings_since_sync: 0,
            replicas: BTreeMap::new(),
            unsent: Vec::new(),
            flush_pending: false,
            waits: Vec::new(),
            next_wait: 1,
            last_write: BTreeMap::new(),
            grants: Vec::new(),
            deletions: Vec::new(),
        }
    }

    pub fn recover(id: NodeId, d: &RedisDurable) -> RedisNode {
        let mut node = RedisNode::new(id, d.config.clone(), d.role, d.data.clone());
        node.epoch = d.epoch;
        node.offset = d.offset;
        node.stream = d.stream.clone();
        node
    }

    /// What this node has on disk now.
    pub fn durable(&self) -> RedisDurable {
        let keep = self.config.persistence;
        RedisDurable {
            config: self.config.clone(),
            role: self.role,
            epoch: self.epoch,
            data: if keep { self.data.clone() } else { BTreeMap::new() },
            offset: if keep { self.offset } else { 0 },
            stream: if keep { self.stream.clone() } else { Vec::new() },
        }
    }

    pub fn name_of(&self, id: NodeId) -> String {
        self.config
            .names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn me(&self) -> String {
        self.name_of(self.id)
    }

    pub fn is_primary(&self) -> bool {
        self.role == Role::Primary
    }

    /// The key as a read sees it at this clock reading: absent once expired.
    pub fn get(&self, key: &str, local_now_us: u64) -> Option<&KeyEntry> {
        self.data.get(key).filter(|e| e.alive_at(local_now_us))
    }

    fn persist<P: RedisParticipant>(&self, ctx: &mut Ctx<'_, P>)
    where
        P::Durable: From<RedisDurable>,
    {
        ctx.persist(self.durable().into());
    }

    fn push_stream(&mut self, entry: StreamEntry) {
        self.stream.push(entry);
        if self.stream.len() > STREAM_KEEP {
            self.stream.remove(0);
        }
    }

    pub fn start<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        let me = self.me();
        let keys = self.data.len();
        match self.role {
            Role::Primary => {
                self.arm_expiry(ctx);
                ctx.note(match (keys, self.config.persistence) {
                    (0, false) => format!("{me} is up as a primary with no data: without persistence it remembers nothing from before."),
                    (0, true) => format!("{me} is up as a primary with an empty data set."),
                    (n, _) => format!("{me} is up as a primary with {n} key(s)."),
                });
            }
            Role::Replica { of } => {
                self.synced = false;
                ctx.note(format!(
                    "{me} is up as a replica of {} and asks it for a copy of the data.",
                    self.name_of(of)
                ));
                self.request_sync(ctx, of);
            }
        }
    }

    fn request_sync<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, primary: NodeId) {
        self.pings_since_sync = 0;
        ctx.send(primary, RedisMsg::Sync { have: self.offset });
    }

    /// A replica holds a connection to its primary and notices when it breaks.
    pub fn watches(&self, peer: NodeId) -> bool {
        self.role == (Role::Replica { of: peer })
    }

    /// The primary's connection dropped: the copy is no longer being kept up to date, and
    /// the replica will ask for a fresh one once the primary answers again.
    pub fn peer_down<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, peer: NodeId) {
        if !self.watches(peer) {
            return;
        }
        self.link_down = true;
        ctx.note(format!(
            "{} has lost its link to {}; it keeps its data (#{}) and keeps trying to reconnect.",
            self.me(),
            self.name_of(peer),
            self.offset
        ));
    }

    /// A primary judges expiries by its own clock: one timer per key with a TTL.
    fn arm_expiry<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        for (key, e) in &self.data {
            if let Some(at) = e.expires_at_us {
                ctx.set_timer(
                    RedisTimer::Expire { key: key.clone() },
                    at.saturating_sub(ctx.local_now_us),
                );
            }
        }
    }

    pub fn message<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, msg: RedisMsg)
    where
        P::Durable: From<RedisDurable>,
    {
        let writes = matches!(
            msg,
            RedisMsg::Set { .. }
                | RedisMsg::Del { .. }
                | RedisMsg::CompareAndDelete { .. }
                | RedisMsg::Wait { .. }
        );
        if writes && !self.is_primary() {
            ctx.note(format!(
                "{} is a replica and refuses the write: clients must send writes to the primary.",
                self.me()
            ));
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
            RedisMsg::Sync { have } => self.sync_request(ctx, from, have),
            RedisMsg::FullSync { data, offset, stream } => {
                if self.role != (Role::Replica { of: from }) {
                    return;
                }
                self.data = data;
                self.offset = offset;
                self.stream = stream;
                self.synced = true;
                self.link_down = false;
                self.persist(ctx);
                ctx.note(format!(
                    "{} now holds {}'s data as of #{offset}: {} key(s).",
                    self.me(),
                    self.name_of(from),
                    self.data.len()
                ));
                ctx.send(from, RedisMsg::ReplAck { offset });
            }
            RedisMsg::Replicate { entries } => self.apply_stream(ctx, from, entries),
            RedisMsg::ReplAck { offset } => {
                if !self.is_primary() {
                    return;
                }
                let acked = self.replicas.entry(from).or_insert(0);
                *acked = (*acked).max(offset);
                self.answer_waits(ctx);
            }
            RedisMsg::Ping => {
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
                    self.pings_since_sync += 1;
                    if self.pings_since_sync >= 2 {
                        self.request_sync(ctx, of);
                    }
                }
            }
            RedisMsg::ReplicaOf { primary, epoch } => self.reconfigure(ctx, from, primary, epoch),
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn set<P: RedisParticipant>(
        &mut self,
        ctx: &mut Ctx<'_, P>,
        from: NodeId,
        key: String,
        value: String,
        nx: bool,
        px_ms: u64,
        incr: Option<String>,
    ) where
        P::Durable: From<RedisDurable>,
    {
        let me = self.me();
        let client = self.name_of(from);
        self.expire_if_due(ctx, &key);
        if let (true, Some(held)) = (nx, self.data.get(&key)) {
            ctx.note(format!(
                "{me} already has {key} = {}, so SET NX does nothing and answers nil: {client} does not get the lock.",
                held.value
            ));
            self.after_writes(ctx);
            ctx.send(
                from,
                RedisMsg::SetReply {
                    key,
                    ok: false,
                    counter: None,
                },
            );
            return;
        }
        let expires_at_us = Some(ctx.local_now_us + px_ms * MS_US);
        self.write(
            ctx,
            ReplOp::Set {
                key: key.clone(),
                value: value.clone(),
                expires_at_us,
            },
        );
        let counter = incr.map(|counter_key| {
            let next = self
                .data
                .get(&counter_key)
                .and_then(|e| e.value.parse::<u64>().ok())
                .unwrap_or(0)
                + 1;
            self.write(
                ctx,
                ReplOp::Set {
                    key: counter_key,
                    value: next.to_string(),
                    expires_at_us: None,
                },
            );
            next
        });
        self.last_write.insert(from, self.offset);
        if nx {
            self.grants.push(Grant {
                client: from,
                value: value.clone(),
                counter,
            });
        }
        let token = counter
            .map(|c| format!(" and the counter to {c}"))
            .unwrap_or_default();
        let stream = if self.replicas.is_empty() {
            " It has no replicas: this node alone remembers it.".to_string()
        } else if self.config.replication_lag_ms == 0 {
            " The write goes down the replication stream straight away.".to_string()
        } else {
            format!(
                " It answers OK now; the replicas hear of the write only when the stream is next sent, {} ms from now.",
                self.config.replication_lag_ms
            )
        };
        ctx.note(format!(
            "{me} sets {key} = {value} for {client} with a {} TTL by its own clock{token}.{stream}",
            tenths(px_ms)
        ));
        self.after_writes(ctx);
        ctx.send(
            from,
            RedisMsg::SetReply {
                key,
                ok: true,
                counter,
            },
        );
    }

    fn delete<P: RedisParticipant>(
        &mut self,
        ctx: &mut Ctx<'_, P>,
        from: NodeId,
        key: String,
        only_if: Option<String>,
    ) where
        P::Durable: From<RedisDurable>,
    {
        let me = self.me();
        self.expire_if_due(ctx, &key);
        let current = self.data.get(&key).map(|e| e.value.clone());
        let deleted = match (&only_if, &current) {
            (None, Some(v)) => {
                ctx.note(format!(
                    "{me} deletes {key} (it held {v}). DEL does not ask whose value that is."
                ));
                true
            }
            (Some(mine), Some(v)) if mine == v => {
                ctx.note(format!(
                    "{me} runs the release script: {key} still holds {v}, the caller's own value, so it is deleted."
                ));
                true
            }
            (Some(mine), Some(v)) => {
                ctx.note(format!(
                    "{me} runs the release script: {key} holds {v}, not the caller's {mine}, so nothing is deleted."
                ));
                false
            }
            (_, None) => {
                ctx.note(format!("{me} has no {key} to delete."));
                false
            }
        };
        if let (true, Some(value)) = (deleted, current) {
            self.deletions.push(Deletion {
                client: from,
                key: key.clone(),
                value,
            });
            self.write(ctx, ReplOp::Del { key: key.clone() });
            self.last_write.insert(from, self.offset);
        }
        self.after_writes(ctx);
        ctx.send(from, RedisMsg::DelReply { key, deleted });
    }

    fn wait<P: RedisParticipant>(
        &mut self,
        ctx: &mut Ctx<'_, P>,
        from: NodeId,
        needed: u32,
        timeout_ms: u64,
    ) {
        let target = self.last_write.get(&from).copied().unwrap_or(0);
        let acked = self.acked_count(target);
        if acked >= needed {
            ctx.send(from, RedisMsg::WaitReply { acked });
            return;
        }
        let id = self.next_wait;
        self.next_wait += 1;
        self.waits.push(PendingWait {
            id,
            client: from,
            target,
            needed,
        });
        ctx.set_timer(RedisTimer::WaitTimeout { id }, timeout_ms * MS_US);
        ctx.note(format!(
            "{} holds {}'s WAIT until {needed} replica(s) confirm #{target}, at most {timeout_ms} ms. The write itself is already applied and visible to every client here.",
            self.me(),
            self.name_of(from)
        ));
    }

    fn acked_count(&self, target: u64) -> u32 {
        self.replicas.values().filter(|o| **o >= target).count() as u32
    }

    fn answer_waits<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        let mut still = Vec::new();
        for w in std::mem::take(&mut self.waits) {
            let acked = self.acked_count(w.target);
            if acked >= w.needed {
                ctx.cancel_timer(RedisTimer::WaitTimeout { id: w.id });
                ctx.send(w.client, RedisMsg::WaitReply { acked });
            } else {
                still.push(w);
            }
        }
        self.waits = still;
    }

    fn sync_request<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, have: u64) {
        if !self.is_primary() {
            return; // not (yet) a primary: the replica asks again on its next ping
        }
        self.replicas.insert(from, 0);
        ctx.note(format!(
            "{} sends {} a full copy of its data (up to #{}); the replica had #{have}.",
            self.me(),
            self.name_of(from),
            self.offset
        ));
        ctx.send(
            from,
            RedisMsg::FullSync {
                data: self.data.clone(),
                offset: self.offset,
                stream: self.stream.clone(),
            },
        );
    }

    fn apply_stream<P: RedisParticipant>(
        &mut self,
        ctx: &mut Ctx<'_, P>,
        from: NodeId,
        entries: Vec<StreamEntry>,
    ) where
        P::Durable: From<RedisDurable>,
    {
        if self.role != (Role::Replica { of: from }) || !self.synced {
            return; // a stream from a node that is not (or not yet) this replica's primary
        }
        let mut applied = 0;
        for e in entries {
            if e.offset <= self.offset {
                continue; // already in the copy it received
            }
            if e.offset != self.offset + 1 {
                // A gap: something was lost on the way. Start over with a full copy.
                self.synced = false;
                self.request_sync(ctx, from);
                return;
            }
            match &e.op {
                ReplOp::Set {
                    key,
                    value,
                    expires_at_us,
                } => {
                    self.data.insert(
                        key.clone(),
                        KeyEntry {
                            value: value.clone(),
                            expires_at_us: *expires_at_us,
                        },
                    );
                }
                ReplOp::Del { key } => {
                    self.data.remove(key);
                }
            }
            self.offset = e.offset;
            self.push_stream(e);
            applied += 1;
        }
        if applied > 0 {
            self.persist(ctx);
            ctx.note(format!(
                "{} applies {applied} write(s) from {}'s stream and is now at #{}.",
                self.me(),
                self.name_of(from),
                self.offset
            ));
            ctx.send(from, RedisMsg::ReplAck { offset: self.offset });
        }
    }

    fn reconfigure<P: RedisParticipant>(
        &mut self,
        ctx: &mut Ctx<'_, P>,
        from: NodeId,
        primary: Option<(NodeId, String)>,
        epoch: u64,
    ) where
        P::Durable: From<RedisDurable>,
    {
        if epoch < self.epoch {
            return;
        }
        self.epoch = epoch;
        let me = self.me();
        match primary {
            None if self.is_primary() => {}
            None => {
                self.role = Role::Primary;
                self.replicas.clear();
                self.arm_expiry(ctx);
                ctx.note(format!(
                    "{me} is promoted: it is the primary now, with the data it had at #{}. Any write that never reached it is simply not there.",
                    self.offset
                ));
                // The answer to REPLICAOF NO ONE: the monitor waits for it before telling clients.
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
                if self.is_primary() {
                    ctx.note(format!(
                        "{me} is demoted to a replica of {name}. It will replace its own data with {name}'s copy: whatever only it had is discarded."
                    ));
                } else {
                    ctx.note(format!("{me} now replicates from {name}."));
                }
                self.role = Role::Replica { of: p };
                self.synced = false;
                self.link_down = false;
                self.replicas.clear();
                self.unsent.clear();
                self.waits.clear();
                self.flush_pending = false;
                ctx.cancel_timer(RedisTimer::Flush);
                self.request_sync(ctx, p);
            }
        }
        self.persist(ctx);
    }

    /// Applies a write here and queues it for the stream.
    fn write<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, op: ReplOp) {
        match &op {
            ReplOp::Set {
                key,
                value,
                expires_at_us,
            } => {
                self.data.insert(
                    key.clone(),
                    KeyEntry {
                        value: value.clone(),
                        expires_at_us: *expires_at_us,
                    },
                );
                match expires_at_us {
                    Some(at) => ctx.set_timer(
                        RedisTimer::Expire { key: key.clone() },
                        at.saturating_sub(ctx.local_now_us),
                    ),
                    None => ctx.cancel_timer(RedisTimer::Expire { key: key.clone() }),
                }
            }
            ReplOp::Del { key } => {
                self.data.remove(key);
                ctx.cancel_timer(RedisTimer::Expire { key: key.clone() });
            }
        }
        self.offset += 1;
        let entry = StreamEntry {
            origin: self.id,
            offset: self.offset,
            op,
        };
        self.push_stream(entry.clone());
        self.unsent.push(entry);
    }

    /// Persists, and makes sure the buffered writes will be streamed after the lag.
    fn after_writes<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P::Durable: From<RedisDurable>,
    {
        if self.unsent.is_empty() {
            return;
        }
        self.persist(ctx);
        if self.replicas.is_empty() {
            self.unsent.clear(); // nobody to stream to; a replica that connects gets a full copy
        } else if self.config.replication_lag_ms == 0 {
            self.flush(ctx);
        } else if !self.flush_pending {
            self.flush_pending = true;
            ctx.set_timer(RedisTimer::Flush, self.config.replication_lag_ms * MS_US);
        }
    }

    fn flush<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>) {
        self.flush_pending = false;
        if self.unsent.is_empty() || !self.is_primary() {
            return;
        }
        let entries = std::mem::take(&mut self.unsent);
        for r in self.replicas.keys() {
            ctx.send(
                *r,
                RedisMsg::Replicate {
                    entries: entries.clone(),
                },
            );
        }
    }

    /// On a primary, a key found expired on access is deleted (and the deletion streamed),
    /// as Redis does lazily; a replica leaves it for its primary's `DEL`.
    fn expire_if_due<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, key: &str) {
        self.expire(ctx, key, true);
    }

    fn expire<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, key: &str, on_access: bool) {
        let now = ctx.local_now_us;
        let due = self.data.get(key).is_some_and(|e| !e.alive_at(now));
        if due && self.is_primary() {
            let value = self.data.get(key).map(|e| e.value.clone()).unwrap_or_default();
            let me = self.me();
            ctx.note(if on_access {
                format!("By {me}'s own clock {key} ({value}) has already expired, so it is gone before the command runs.")
            } else {
                format!("By {me}'s own clock {key} ({value}) has expired: {me} deletes it.")
            });
            self.write(ctx, ReplOp::Del { key: key.to_string() });
        }
    }

    pub fn timer<P: RedisParticipant>(&mut self, ctx: &mut Ctx<'_, P>, timer: RedisTimer)
    where
        P::Durable: From<RedisDurable>,
    {
        match timer {
            RedisTimer::Flush => self.flush(ctx),
            RedisTimer::Expire { key } => {
                let Some(at) = self.data.get(&key).and_then(|e| e.expires_at_us) else {
                    return;
                };
                if !self.is_primary() {
                    return;
                }
                if ctx.local_now_us < at {
                    // A slow clock: not yet by this node's reckoning.
                    ctx.set_timer(RedisTimer::Expire { key }, at - ctx.local_now_us);
                    return;
                }
                self.expire(ctx, &key, false);
                self.after_writes(ctx);
            }
            RedisTimer::WaitTimeout { id } => {
                let Some(pos) = self.waits.iter().position(|w| w.id == id) else {
                    return;
                };
                let w = self.waits.remove(pos);
                let acked = self.acked_count(w.target);
                ctx.note(format!(
                    "{}'s WAIT times out with {acked} of {} replica(s). The write stays on {} regardless: WAIT reports, it never rolls back.",
                    self.name_of(w.client),
                    w.needed,
                    self.me()
                ));
                ctx.send(w.client, RedisMsg::WaitReply { acked });
            }
            _ => {}
        }
    }

    pub fn summary(&self, local_now_us: u64) -> Vec<String> {
        let unsent = match self.unsent.len() {
            0 => String::new(),
            n => format!(" · {n} unsent"),
        };
        let role = match self.role {
            Role::Primary => format!("PRIMARY · #{}{unsent}", self.offset),
            Role::Replica { of } if self.link_down => {
                format!("replica of {} · #{} · link down", self.name_of(of), self.offset)
            }
            Role::Replica { of } if self.synced => {
                format!("replica of {} · #{}", self.name_of(of), self.offset)
            }
            Role::Replica { of } => format!("replica of {} · copying", self.name_of(of)),
        };
        vec![role, key_lines(&self.data, local_now_us).join(" · ")]
    }

    pub fn durable_summary(d: &RedisDurable) -> Vec<String> {
        let mut lines = vec!["down".to_string()];
        if d.config.persistence {
            lines.push(format!("on disk: {} key(s)", d.data.len()));
        } else {
            lines.push("no persistence: memory lost".to_string());
        }
        lines
    }
}

/// The keys as a card shows them — keys with a TTL (locks) first — with the time left by
/// the node's own clock.
pub fn key_lines(data: &BTreeMap<String, KeyEntry>, local_now_us: u64) -> Vec<String> {
    let mut keys: Vec<(&String, &KeyEntry)> = data.iter().collect();
    keys.sort_by_key(|(_, e)| e.expires_at_us.is_none());
    // In this chapter the keys with a TTL are the locks: say so when there is none.
    let no_lock = keys.iter().all(|(_, e)| e.expires_at_us.is_none());
    no_lock
        .then(|| "no lock".to_string())
        .into_iter()
        .chain(keys.into_iter().map(|(k, e)| match e.expires_at_us {
            None => format!("{k}={}", e.value),
            Some(at) if at > local_now_us => {
                format!("{k}={} ({})", e.value, tenths((at - local_now_us) / MS_US))
            }
            Some(_) => format!("{k}={} (expired)", e.value),
        }))
        .collect()
}
