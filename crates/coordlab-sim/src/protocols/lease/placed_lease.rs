//! A lease table whose placement a scenario chooses: on the shared primary, read through a
//! lagging replica, or one table per node. One row (the scenario's lease), and three
//! statements:
//!
//! - `acquire`: the atomic `INSERT … ON CONFLICT (name) DO UPDATE … WHERE lease.expires_at <
//!   now() OR lease.owner = :me RETURNING fence_token` — the table itself decides;
//! - `read`: `SELECT owner, fence_token, expires_at FROM lease WHERE name = :name`, answered
//!   by whichever copy was asked (a replica answers from what it has replayed so far);
//! - `claim`: `UPDATE lease SET owner = :me, fence_token = fence_token + 1, … WHERE name =
//!   :name RETURNING fence_token`, with no condition: the second half of a check-then-set whose
//!   check was a read.
//!
//! A primary ships every change to its replicas (`WAL`); the link's latency is the
//! replication lag. For `token-sources` the same row speaks one real store's command
//! ([`TokenSource`]) and replicates the way that store does ([`Replication`]): a quorum that
//! must hold the change before the holder is told, or a stream shipped after the answer. A
//! replica told to take over promotes itself when its primary crashes; a quorum copy first
//! asks the other copies what they hold, and takes writes only once it has every committed
//! change. The old primary, restarted, rejoins as a replica of its standby (a Raft or ZAB
//! member rejoins as a follower; Sentinel reconfigures an old Redis master as a replica). This participant lives in the `services` bundle, apart from the lease
//! chapter's [`super::lease_store`], whose bundle is at its size cap.

use super::lease_store::owner_name;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::presentation::narration::lease::placed_lease::{acquire_command, Holding, PlacedLeaseSaw};

/// The lease row. `owner: None` is an earlier run's row, expired before the story starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacedRow {
    pub owner: Option<NodeId>,
    pub token: FencingToken,
    /// Store-clock microseconds.
    pub expires_at_us: u64,
}

/// A grant the table made, for the world's checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedGrant {
    pub owner: NodeId,
    pub token: FencingToken,
    /// The store's clock at the grant, and when the grant runs out by it.
    pub at_us: u64,
    pub expires_at_us: u64,
}

/// The table on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacedDurable {
    pub row: PlacedRow,
    pub grants: Vec<PlacedGrant>,
    /// ZooKeeper: the ensemble's last zxid (a lock node's czxid is drawn from it), and the
    /// waiters with their nodes' czxids.
    pub seq: u64,
    pub waiting: Vec<(NodeId, u64)>,
    /// A replica that took over stays the primary through its own restarts.
    pub promoted: bool,
    /// Whether this copy has run before: a start with this set is a restart.
    pub started: bool,
}

/// Which real store the row stands for: its command text and its counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TokenSource {
    /// The lease table's `fence_token` column (`INSERT … ON CONFLICT … RETURNING`).
    #[default]
    LeaseTable,
    /// `nextval` of a sequence, in the acquiring transaction.
    PostgresSequence,
    /// A conditional `UpdateItem` with `ADD fence :one` and `ReturnValues: UPDATED_NEW`.
    DynamoDb,
    /// A Kubernetes Lease object's `spec.leaseTransitions`.
    K8sLease,
    /// etcd's revision of the put that created the key; the expiry's delete is a revision too.
    Etcd,
    /// An `EPHEMERAL_SEQUENTIAL` znode's `czxid` (the zxid of its create), fixed at create.
    /// Not the number in its name: a container parent, deleted once empty, restarts it at 0.
    ZooKeeper,
    /// A Lua script doing `SET … NX PX` and `INCR` together.
    RedisLua,
}

/// How a primary gets its changes to its replicas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Replication {
    /// It ships each change at once and answers without waiting (the read replica's WAL).
    #[default]
    Stream,
    /// It answers only once a replica holds the change: with itself, a majority of three.
    Quorum,
    /// It answers at once and ships the change `ship_ms` later (Redis's async replication).
    Async { ship_ms: u64 },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacedConfig {
    pub lease: String,
    /// Whose table this is, when each node has its own (`None`: the shared one).
    pub local_to: Option<NodeId>,
    /// A replica takes no writes; it replays what its primary ships.
    pub replica: bool,
    /// Where a primary ships its changes.
    pub replicas: Vec<NodeId>,
    pub source: TokenSource,
    pub replication: Replication,
    /// A replica that takes over when this primary crashes, and ships to `replicas_then`.
    pub takes_over_from: Option<NodeId>,
    pub replicas_then: Vec<NodeId>,
    /// The replica that takes over if this primary crashes. A primary with a standby that
    /// restarts rejoins as a replica: a crash of the primary is what promotes the standby
    /// (etcd and ZooKeeper: a restarted member rejoins as a follower; Redis: Sentinel
    /// reconfigures the old master as a replica of the new one).
    pub standby: Option<NodeId>,
    /// Whether the card names the table's role (primary, replica, its own table) even when
    /// it stands alone: where the lease lives is the story being told. A lone table's card
    /// otherwise speaks of the lease (held, expired).
    pub role_on_card: bool,
}

impl PlacedConfig {
    /// The shared table: a primary with no replicas, for lease `lease`.
    pub fn shared(lease: &str) -> PlacedConfig {
        PlacedConfig {
            lease: lease.to_string(),
            ..PlacedConfig::default()
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacedMsg {
    /// The store's atomic acquire; `source` names its command on the wire, `clock` is what
    /// the requesting worker read on its own clock (DynamoDB's `:now`, client-go's timing).
    Acquire {
        ttl_ms: u64,
        source: TokenSource,
        clock: ClientClock,
    },
    Read,
    Claim {
        ttl_ms: u64,
    },
    Granted {
        token: FencingToken,
        ttl_ms: u64,
    },
    Denied {
        holder: Option<NodeId>,
        /// The holder's token: for a Kubernetes Lease, the record the worker has now seen.
        token: FencingToken,
    },
    /// The answer to `Read`: the row as this copy has it, and whether it looks free by this
    /// copy's clock.
    Row {
        token: FencingToken,
        free: bool,
    },
    /// Replication: the primary's row after a change.
    Wal {
        row: PlacedRow,
        seq: u64,
        waiting: Vec<(NodeId, u64)>,
    },
    WalAck,
    /// A restarted old primary asks its standby where it now belongs.
    Rejoin,
    /// A replica that took over asks the other copies what they hold.
    Sync,
    /// The answer to `Sync`: the row as this copy has it.
    Synced {
        row: PlacedRow,
        seq: u64,
        waiting: Vec<(NodeId, u64)>,
    },
}

crate::inbox!(PlacedMsg);

/// The requesting worker's own clock, sent with an acquire. Two stores decide expiry by it
/// and not by a clock of their own: a DynamoDB condition compares with `:now`, a value the
/// worker puts in the request; client-go's leader election waits `leaseDurationSeconds`
/// from when *it* last saw the Lease's record change, timed locally.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientClock {
    pub now_us: u64,
    /// The holder's record (its token) the worker last saw, and its clock when it first saw it.
    pub seen: Option<(FencingToken, u64)>,
}
/// The store's timers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacedTimer {
    /// Ship the changes so far to the replicas (async replication).
    Ship,
    /// ZooKeeper: the holder's session may have timed out; its node goes, and the watch on
    /// it fires for the node behind.
    SessionExpiry,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedLease {
    pub config: PlacedConfig,
    pub durable: PlacedDurable,
    /// Whether this copy takes writes now (a replica that took over does).
    pub primary: bool,
    pub replicas: Vec<NodeId>,
    /// A grant waiting for a replica to hold it before the holder is told (quorum).
    pub pending: Option<(PlacedGrant, u64)>,
    /// A replica that just took over, asking the other copies for what they committed
    /// before it takes writes (in Raft, only an up-to-date copy can win the election).
    pub syncing: bool,
}

impl PlacedLease {
    /// The table when the story starts: an earlier run's expired row at `fence_token` `issued`.
    pub fn initial(issued: u64) -> PlacedDurable {
        PlacedDurable {
            row: PlacedRow {
                token: FencingToken(issued),
                ..PlacedRow::default()
            },
            seq: issued,
            ..PlacedDurable::default()
        }
    }

    fn owner_name<'a>(&self, ctx: &Ctx<'a, Self>) -> &'a str {
        owner_name(self.durable.row.owner, |o| ctx.name(o))
    }

    /// ZooKeeper: the czxid of `from`'s node, if it waits in line.
    fn queued(&self, from: NodeId) -> Option<u64> {
        self.durable
            .waiting
            .iter()
            .find(|(w, _)| *w == from)
            .map(|(_, n)| *n)
    }

    fn free(&self, now_us: u64) -> bool {
        self.durable.row.owner.is_none() || self.durable.row.expires_at_us < now_us
    }

    fn ship(&self, ctx: &mut Ctx<'_, Self>) {
        for r in &self.replicas {
            ctx.send(
                *r,
                PlacedMsg::Wal {
                    row: self.durable.row.clone(),
                    seq: self.durable.seq,
                    waiting: self.durable.waiting.clone(),
                },
            );
        }
    }

    /// The token a new holder gets from this store's counter.
    fn next_token(&mut self, from: NodeId, ctx: &mut Ctx<'_, Self>) -> FencingToken {
        let row = &self.durable.row;
        if row.owner == Some(from) {
            return row.token;
        }
        let lapsed = row.owner.is_some();
        match self.config.source {
            TokenSource::Etcd if lapsed => {
                // The holder's lease ran out and etcd deleted its key: that delete was a
                // revision of its own, so the new put's revision is two up.
                ctx.note(PlacedLeaseSaw::EtcdKeyDeleted {
                    owner: self.owner_name(ctx),
                    token: row.token,
                });
                FencingToken(row.token.0 + 2)
            }
            TokenSource::ZooKeeper => {
                let mine = self.queued(from);
                self.durable.waiting.retain(|(w, _)| *w != from);
                FencingToken(mine.unwrap_or_else(|| {
                    self.durable.seq += 1;
                    self.durable.seq
                }))
            }
            _ => FencingToken(row.token.0 + 1),
        }
    }

    /// Grants the row to `from`. `row_expires_us` is what the row records as its end: the
    /// store's clock plus the TTL, or for DynamoDB the worker's `:exp`, read from its clock.
    fn grant(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        ttl_ms: u64,
        row_expires_us: u64,
    ) -> FencingToken {
        let now = ctx.local_now_us;
        let token = self.next_token(from, ctx);
        self.durable.row = PlacedRow {
            owner: Some(from),
            token,
            expires_at_us: row_expires_us,
        };
        let made = PlacedGrant {
            owner: from,
            token,
            at_us: now,
            expires_at_us: now + ttl_ms * MS_US,
        };
        if self.config.replication == Replication::Quorum && !self.replicas.is_empty() {
            // Not a grant until a majority holds it: it joins `grants` once committed.
            ctx.persist(self.durable.clone());
            self.pending = Some((made, ttl_ms));
            self.ship(ctx);
            return token;
        }
        self.durable.grants.push(made);
        ctx.persist(self.durable.clone());
        match self.config.replication {
            Replication::Async { ship_ms } => ctx.set_timer(PlacedTimer::Ship, ship_ms * MS_US),
            _ => self.ship(ctx),
        }
        ctx.send(from, PlacedMsg::Granted { token, ttl_ms });
        token
    }

    /// Whether the row is free for `from`. Most stores judge expiry by their own clock;
    /// DynamoDB compares the row's `expires` with the worker's `:now`; with a Kubernetes Lease
    /// the candidate decides, by its own clock, that `leaseDurationSeconds` have passed since
    /// it first saw the holder's record (every worker here uses the same duration, `ttl_ms`).
    fn free_for(&self, from: NodeId, now_us: u64, ttl_ms: u64, clock: ClientClock) -> bool {
        let row = &self.durable.row;
        if row.owner.is_none() || row.owner == Some(from) {
            return true;
        }
        match self.config.source {
            TokenSource::DynamoDb => row.expires_at_us < clock.now_us,
            TokenSource::K8sLease => clock
                .seen
                .is_some_and(|(t, at)| t == row.token && clock.now_us >= at + ttl_ms * MS_US),
            _ => row.expires_at_us < now_us,
        }
    }

    /// Why a busy row refuses `who`, as the store's kind decides it.
    fn refusal_note<'s, 'a: 's>(
        &'s self,
        ctx: &Ctx<'a, Self>,
        who: &'a str,
        ttl_ms: u64,
        clock: ClientClock,
    ) -> PlacedLeaseSaw<'s> {
        let holder = self.owner_name(ctx);
        let row = &self.durable.row;
        match self.config.source {
            TokenSource::DynamoDb => PlacedLeaseSaw::NotPastClientNow {
                holder,
                who,
                expires_at_us: row.expires_at_us,
                client_now_us: clock.now_us,
            },
            TokenSource::K8sLease => match clock.seen {
                Some((t, since)) if t == row.token => PlacedLeaseSaw::K8sSeenUnchanged {
                    who,
                    holder,
                    seen_for_us: clock.now_us.saturating_sub(since),
                    ttl_ms,
                },
                _ => PlacedLeaseSaw::K8sNotesTime { who, holder, ttl_ms },
            },
            _ => PlacedLeaseSaw::HeldByMyClock {
                holder,
                lease: &self.config.lease,
                left_us: row.expires_at_us.saturating_sub(ctx.local_now_us),
                me: ctx.me(),
                who,
            },
        }
    }

    /// ZooKeeper: `who`'s node sorts behind the holder's. It watches the node ahead and waits.
    fn queue_behind(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId) {
        let who = ctx.name(from);
        let holder = self.owner_name(ctx);
        if let Some(n) = self.queued(from) {
            ctx.note(PlacedLeaseSaw::ZkStillBehind {
                who,
                czxid: n,
                holder,
            });
        } else {
            self.durable.seq += 1;
            let n = self.durable.seq;
            self.durable.waiting.push((from, n));
            ctx.persist(self.durable.clone());
            self.ship(ctx);
            ctx.note(PlacedLeaseSaw::ZkQueued {
                who,
                holder,
                czxid: n,
            });
        }
        let left = self.durable.row.expires_at_us.saturating_sub(ctx.local_now_us);
        ctx.set_timer(PlacedTimer::SessionExpiry, left);
    }

    /// ZooKeeper: the holder's session has timed out. Its ephemeral node goes, and the watch
    /// on it fires for the first waiter, whose node is now the lowest.
    fn session_expired(&mut self, ctx: &mut Ctx<'_, Self>) {
        let now = ctx.local_now_us;
        let row = &self.durable.row;
        if !self.primary || self.syncing || row.owner.is_none() || row.expires_at_us > now {
            return;
        }
        let Some(&(next, _)) = self.durable.waiting.first() else {
            return;
        };
        let gone = self.owner_name(ctx);
        let who = ctx.name(next);
        let ttl_ms = self
            .durable
            .grants
            .last()
            .map_or(30_000, |g| (g.expires_at_us - g.at_us) / MS_US);
        ctx.note(PlacedLeaseSaw::ZkSessionTimedOut { gone, who });
        let token = self.grant(ctx, next, ttl_ms, now + ttl_ms * MS_US);
        ctx.note(PlacedLeaseSaw::SourceGrant {
            source: TokenSource::ZooKeeper,
            who,
            before: Some(gone),
            token,
        });
    }

    fn acquire(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, ttl_ms: u64, clock: ClientClock) {
        let now = ctx.local_now_us;
        let who = ctx.name(from);
        let me = ctx.me();
        let lease = self.config.lease.clone();
        let source = self.config.source;
        let command = acquire_command(source, &lease, who, ttl_ms);
        if !self.primary {
            ctx.note(PlacedLeaseSaw::ReplicaRefuses {
                me,
                command: &command,
            });
            return;
        }
        if self.syncing {
            ctx.note(PlacedLeaseSaw::NotSyncedRefuses {
                me,
                command: &command,
            });
            return;
        }
        if !self.free_for(from, now, ttl_ms, clock) {
            ctx.note(PlacedLeaseSaw::Ran {
                me,
                command: &command,
                source,
                lease: &lease,
                granted: None,
            });
            if source == TokenSource::ZooKeeper {
                self.queue_behind(ctx, from);
            } else {
                let note = self.refusal_note(ctx, who, ttl_ms, clock);
                ctx.note(note);
            }
            ctx.send(
                from,
                PlacedMsg::Denied {
                    holder: self.durable.row.owner,
                    token: self.durable.row.token,
                },
            );
            return;
        }
        let before = self.durable.row.token;
        let was_owner = self.durable.row.owner;
        // DynamoDB's `:exp` is `:now` plus the TTL, both from the worker's clock.
        let row_expires_us = match source {
            TokenSource::DynamoDb => clock.now_us,
            _ => now,
        } + ttl_ms * MS_US;
        let token = self.grant(ctx, from, ttl_ms, row_expires_us);
        ctx.note(PlacedLeaseSaw::Ran {
            me,
            command: &command,
            source,
            lease: &lease,
            granted: Some(token),
        });
        let lease = lease.as_str();
        ctx.note(match self.config.local_to {
            Some(o) if o != from => PlacedLeaseSaw::OthersTable {
                who,
                me,
                owner: ctx.name(o),
                lease,
                token,
            },
            Some(_) => PlacedLeaseSaw::OwnTable {
                me,
                who,
                before,
                token,
                lease,
                ttl_ms,
            },
            None if source == TokenSource::LeaseTable => PlacedLeaseSaw::TableTakenOver {
                lease,
                before,
                token,
                who,
                ttl_ms,
            },
            None => PlacedLeaseSaw::SourceGrant {
                source,
                who,
                before: was_owner.map(|o| ctx.name(o)),
                token,
            },
        });
        if self.pending.is_some() {
            ctx.note(PlacedLeaseSaw::WaitsForCopy { source, me, who });
        }
    }

    /// A quorum copy that took over asks its replicas what they hold before taking writes.
    fn sync(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.config.replication == Replication::Quorum && !self.replicas.is_empty() {
            self.syncing = true;
            for r in self.replicas.clone() {
                ctx.send(r, PlacedMsg::Sync);
            }
        }
    }

    fn take_over(&mut self, ctx: &mut Ctx<'_, Self>, old: NodeId) {
        self.primary = true;
        self.durable.promoted = true;
        self.replicas = self.config.replicas_then.clone();
        self.sync(ctx);
        let me = ctx.me();
        let gone = ctx.name(old);
        let row = &self.durable.row;
        let has = match row.owner {
            Some(o) => Holding::Lease {
                owner: ctx.name(o),
                token: row.token,
            },
            None => Holding::Counter { token: row.token },
        };
        ctx.note(PlacedLeaseSaw::TookOver {
            source: self.config.source,
            gone,
            me,
            has,
        });
        ctx.persist(self.durable.clone());
    }
}

impl Participant for PlacedLease {
    type Msg = PlacedMsg;
    type Timer = PlacedTimer;
    type Durable = PlacedDurable;
    type Config = PlacedConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.primary && !self.durable.waiting.is_empty() && self.durable.row.owner.is_some() {
            // Timers do not survive a restart: watch the holder's session again.
            let left = self.durable.row.expires_at_us.saturating_sub(ctx.local_now_us);
            ctx.set_timer(PlacedTimer::SessionExpiry, left);
        }
        if self.durable.promoted {
            // A promoted copy back from a crash may have missed what it was syncing.
            self.sync(ctx);
        }
        let Some(standby) = self.config.standby else {
            return;
        };
        if !self.durable.started {
            self.durable.started = true;
            ctx.persist(self.durable.clone());
        } else if !self.primary {
            let me = ctx.me();
            ctx.note(PlacedLeaseSaw::BackAsReplica {
                me,
                standby: ctx.name(standby),
            });
            ctx.send(standby, PlacedMsg::Rejoin);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: PlacedMsg) {
        let now = ctx.local_now_us;
        let who = ctx.name(from);
        let lease = self.config.lease.clone();
        let me = ctx.me();
        match msg {
            PlacedMsg::Acquire { ttl_ms, clock, .. } => self.acquire(ctx, from, ttl_ms, clock),
            PlacedMsg::Read => {
                let free = self.free(now);
                let row = &self.durable.row;
                ctx.note(PlacedLeaseSaw::Read {
                    me,
                    lease: &lease,
                    owner: self.owner_name(ctx),
                    token: row.token,
                    left_us: (!free).then(|| row.expires_at_us - now),
                });
                if self.config.replica && free {
                    ctx.note(PlacedLeaseSaw::ReadReplicaLags { me });
                }
                ctx.send(
                    from,
                    PlacedMsg::Row {
                        token: row.token,
                        free,
                    },
                );
            }
            PlacedMsg::Claim { ttl_ms } => {
                let was = self.durable.row.clone();
                let token = self.grant(ctx, from, ttl_ms, now + ttl_ms * MS_US);
                ctx.note(PlacedLeaseSaw::ClaimUpdate {
                    me,
                    who,
                    ttl_ms,
                    lease: &lease,
                    token,
                });
                let held = was.owner.is_some() && was.owner != Some(from) && was.expires_at_us > now;
                let old = was.owner.map_or("earlier-run", |o| ctx.name(o));
                ctx.note(if held {
                    PlacedLeaseSaw::ClaimOverwrote {
                        who,
                        old,
                        lease: &lease,
                    }
                } else {
                    PlacedLeaseSaw::ClaimSet { who, token }
                });
            }
            PlacedMsg::Wal { row, seq, waiting } if !self.primary => {
                let owner = row.owner.map_or("earlier-run", |o| ctx.name(o));
                let (lease, token) = (lease.as_str(), row.token);
                ctx.note(if self.config.replication == Replication::Stream {
                    PlacedLeaseSaw::ReplayedLate {
                        me,
                        lease,
                        owner,
                        token,
                    }
                } else {
                    PlacedLeaseSaw::HoldsChange {
                        me,
                        lease,
                        owner,
                        token,
                    }
                });
                self.durable.row = row;
                self.durable.seq = seq;
                self.durable.waiting = waiting;
                ctx.persist(self.durable.clone());
                if self.config.replication == Replication::Quorum {
                    ctx.send(from, PlacedMsg::WalAck);
                }
            }
            PlacedMsg::Rejoin if self.primary => {
                if !self.replicas.contains(&from) {
                    self.replicas.push(from);
                }
                ctx.note(PlacedLeaseSaw::Rejoined { me, who });
                ctx.send(
                    from,
                    PlacedMsg::Wal {
                        row: self.durable.row.clone(),
                        seq: self.durable.seq,
                        waiting: self.durable.waiting.clone(),
                    },
                );
            }
            PlacedMsg::Sync if !self.primary => ctx.send(
                from,
                PlacedMsg::Synced {
                    row: self.durable.row.clone(),
                    seq: self.durable.seq,
                    waiting: self.durable.waiting.clone(),
                },
            ),
            PlacedMsg::Synced { row, seq, waiting } if self.syncing => {
                self.syncing = false;
                let mine = (self.durable.row.token, self.durable.seq);
                if (row.token, seq) > mine {
                    ctx.note(PlacedLeaseSaw::SyncTakes {
                        who,
                        me,
                        token: row.token,
                    });
                    self.durable.row = row;
                    self.durable.seq = seq;
                    self.durable.waiting = waiting;
                    ctx.persist(self.durable.clone());
                } else {
                    ctx.note(PlacedLeaseSaw::SyncFindsNothing { who, me });
                }
                if !self.durable.waiting.is_empty() && self.durable.row.owner.is_some() {
                    // The new leader now tracks the holder's session, and the waiters' watches.
                    let left = self.durable.row.expires_at_us.saturating_sub(ctx.local_now_us);
                    ctx.set_timer(PlacedTimer::SessionExpiry, left);
                }
            }
            PlacedMsg::WalAck => {
                if let Some((made, ttl_ms)) = self.pending.take() {
                    let (holder, token) = (made.owner, made.token);
                    self.durable.grants.push(made);
                    ctx.persist(self.durable.clone());
                    ctx.note(PlacedLeaseSaw::Committed {
                        who,
                        me,
                        holder: ctx.name(holder),
                    });
                    ctx.send(holder, PlacedMsg::Granted { token, ttl_ms });
                }
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: PlacedTimer) {
        match timer {
            PlacedTimer::Ship => self.ship(ctx),
            PlacedTimer::SessionExpiry => self.session_expired(ctx),
        }
    }

    fn watches(&self, peer: NodeId) -> bool {
        !self.primary && self.config.takes_over_from == Some(peer)
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        if !self.primary && self.config.takes_over_from == Some(peer) {
            self.take_over(ctx, peer);
        }
    }

    fn recover(config: &PlacedConfig, _id: NodeId, durable: &PlacedDurable) -> Self {
        PlacedLease {
            config: config.clone(),
            durable: durable.clone(),
            primary: durable.promoted || (!config.replica && (config.standby.is_none() || !durable.started)),
            replicas: if durable.promoted {
                config.replicas_then.clone()
            } else {
                config.replicas.clone()
            },
            pending: None,
            syncing: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::participant::Effect;
    use crate::kernel::testing::{narration, sent, timers_set, Harness};

    const A: NodeId = NodeId(0);
    const B: NodeId = NodeId(1);
    const S1: NodeId = NodeId(2);
    const S2: NodeId = NodeId(3);
    const S3: NodeId = NodeId(4);

    /// Copy `id` configured as `config`, its table at an earlier run's token 32.
    fn copy(config: &PlacedConfig, id: NodeId) -> Harness<PlacedLease> {
        let node = PlacedLease::recover(config, id, &PlacedLease::initial(32));
        Harness::new(id, node, &["A", "B", "s1", "s2", "s3"])
    }

    fn store(source: TokenSource, replication: Replication) -> Harness<PlacedLease> {
        let config = PlacedConfig {
            source,
            replication,
            replicas: vec![S2, S3],
            ..PlacedConfig::shared("l")
        };
        copy(&config, S1)
    }

    /// An acquire of a 30 s lease from a worker whose clock reads `now_ms` and which first
    /// saw token 33's record at `seen_ms`.
    fn ask(source: TokenSource, now_ms: u64, seen_ms: Option<u64>) -> PlacedMsg {
        PlacedMsg::Acquire {
            ttl_ms: 30_000,
            source,
            clock: ClientClock {
                now_us: now_ms * MS_US,
                seen: seen_ms.map(|at| (FencingToken(33), at * MS_US)),
            },
        }
    }

    /// What `fx` sent to `who`.
    fn to(who: NodeId, fx: &[Effect<PlacedLease>]) -> Vec<PlacedMsg> {
        sent::<_, PlacedMsg>(fx)
            .into_iter()
            .filter(|(to, _)| *to == who)
            .map(|(_, m)| m)
            .collect()
    }

    /// `from` acquires at `at_ms`, by the store's clock and its own: what it is answered.
    fn acquire(s: &mut Harness<PlacedLease>, from: NodeId, at_ms: u64) -> Vec<PlacedMsg> {
        s.now_us = at_ms * MS_US;
        let fx = s.deliver(from, ask(s.node.config.source, at_ms, None));
        to(from, &fx)
    }

    fn granted(token: u64) -> PlacedMsg {
        PlacedMsg::Granted {
            token: FencingToken(token),
            ttl_ms: 30_000,
        }
    }

    fn denied(token: u64) -> PlacedMsg {
        PlacedMsg::Denied {
            holder: Some(A),
            token: FencingToken(token),
        }
    }

    #[test]
    fn a_quorum_store_answers_only_once_a_replica_holds_the_grant() {
        let mut s = store(TokenSource::Etcd, Replication::Quorum);
        assert!(acquire(&mut s, A, 0).is_empty());
        let fx = s.deliver(S2, PlacedMsg::WalAck);
        assert_eq!(sent::<_, PlacedMsg>(&fx), vec![(A, granted(33))]);
        // A second acknowledgement answers nobody again.
        assert!(sent::<_, PlacedMsg>(&s.deliver(S3, PlacedMsg::WalAck)).is_empty());
    }

    #[test]
    fn an_async_store_answers_first_and_ships_later() {
        let mut s = store(TokenSource::RedisLua, Replication::Async { ship_ms: 200 });
        let fx = s.deliver(A, ask(TokenSource::RedisLua, 0, None));
        assert_eq!(sent::<_, PlacedMsg>(&fx), vec![(A, granted(33))]);
        assert_eq!(timers_set(&fx), vec![(PlacedTimer::Ship, 200 * MS_US)]);
    }

    #[test]
    fn etcd_counts_the_expiry_delete() {
        let mut etcd = store(TokenSource::Etcd, Replication::Stream);
        assert_eq!(acquire(&mut etcd, A, 0), vec![granted(33)]);
        assert_eq!(acquire(&mut etcd, B, 31_000), vec![granted(35)]);
    }

    #[test]
    fn a_zookeeper_waiter_gets_its_czxid_when_the_watch_fires_without_asking_again() {
        let mut zk = store(TokenSource::ZooKeeper, Replication::Stream);
        assert_eq!(acquire(&mut zk, A, 0), vec![granted(33)]);
        let fx = zk.deliver(B, ask(TokenSource::ZooKeeper, 0, None));
        assert_eq!(zk.node.durable.waiting, vec![(B, 34)]);
        // The store watches A's session for B: one timer, for when A's session times out.
        assert_eq!(
            timers_set(&fx),
            vec![(PlacedTimer::SessionExpiry, 30_000 * MS_US)]
        );
        zk.now_us = 30_000 * MS_US;
        let fx = zk.fire(PlacedTimer::SessionExpiry);
        assert_eq!(to(B, &fx), vec![granted(34)]);
        let notes = narration(&fx);
        assert!(notes.contains("czxid, 34"), "{notes}");
        assert!(notes.contains("container node"), "{notes}");
    }

    #[test]
    fn dynamodb_judges_expiry_by_the_workers_now_not_its_own_clock() {
        let mut ddb = store(TokenSource::DynamoDb, Replication::Stream);
        assert_eq!(acquire(&mut ddb, A, 0), vec![granted(33)]);
        // At 20 s by the store, B's clock (running fast) reads 31 s: past A's expires.
        ddb.now_us = 20_000 * MS_US;
        let ask = |now_ms: u64| ask(TokenSource::DynamoDb, now_ms, None);
        assert_eq!(to(B, &ddb.deliver(B, ask(29_000))), vec![denied(33)]);
        assert_eq!(to(B, &ddb.deliver(B, ask(31_000))), vec![granted(34)]);
    }

    #[test]
    fn a_kubernetes_candidate_waits_lease_duration_from_when_it_first_saw_the_record() {
        let mut k8s = store(TokenSource::K8sLease, Replication::Stream);
        assert_eq!(acquire(&mut k8s, A, 0), vec![granted(33)]);
        let ask = |now_ms: u64, seen_ms: Option<u64>| ask(TokenSource::K8sLease, now_ms, seen_ms);
        // Its clock says 100 s, but it has not watched the record yet: no takeover.
        k8s.now_us = 1_000 * MS_US;
        assert_eq!(to(B, &k8s.deliver(B, ask(100_000, None))), vec![denied(33)]);
        // 29 s of its own clock since it first saw the record: still no.
        assert_eq!(
            to(B, &k8s.deliver(B, ask(129_000, Some(100_000)))),
            vec![denied(33)]
        );
        // 30 s by its clock, only 5 s by the store's: the candidate takes over.
        k8s.now_us = 5_000 * MS_US;
        assert_eq!(
            to(B, &k8s.deliver(B, ask(130_000, Some(100_000)))),
            vec![granted(34)]
        );
    }

    #[test]
    fn a_replica_that_takes_over_grants_from_what_it_was_sent() {
        let config = PlacedConfig {
            replica: true,
            takes_over_from: Some(S1),
            ..PlacedConfig::shared("l")
        };
        let mut s = copy(&config, S2);
        assert!(s.node.watches(S1));
        s.peer_down(S1);
        assert!(s.node.primary);
        // It never received A's grant: B gets 33, the number A already has.
        assert_eq!(acquire(&mut s, B, 500), vec![granted(33)]);
    }

    #[test]
    fn a_restarted_primary_with_a_standby_rejoins_as_a_replica_and_commits_only_told_grants() {
        let config = PlacedConfig {
            source: TokenSource::Etcd,
            replication: Replication::Quorum,
            replicas: vec![S2, S3],
            standby: Some(S2),
            ..PlacedConfig::shared("l")
        };
        let mut s = copy(&config, S1);
        assert!(s.node.primary);
        assert!(sent::<_, PlacedMsg>(&s.start()).is_empty());
        assert!(acquire(&mut s, A, 0).is_empty());
        // Not a grant until a replica holds it.
        assert!(s.node.durable.grants.is_empty());
        s.deliver(S3, PlacedMsg::WalAck);
        assert_eq!(s.node.durable.grants.len(), 1);
        // It crashes and comes back: a replica now, asking its standby where it belongs.
        let back = PlacedLease::recover(&config, S1, &s.node.durable);
        let mut s = Harness::new(S1, back, &["A", "B", "s1", "s2", "s3"]);
        assert!(!s.node.primary);
        assert_eq!(sent::<_, PlacedMsg>(&s.start()), vec![(S2, PlacedMsg::Rejoin)]);
        assert!(acquire(&mut s, B, 40_000).is_empty());
    }

    #[test]
    fn a_promoted_quorum_copy_takes_what_it_missed_before_taking_writes() {
        let config = PlacedConfig {
            source: TokenSource::Etcd,
            replication: Replication::Quorum,
            replica: true,
            takes_over_from: Some(S1),
            replicas_then: vec![S3],
            ..PlacedConfig::shared("l")
        };
        let mut s = copy(&config, S2);
        let fx = s.peer_down(S1);
        assert_eq!(sent::<_, PlacedMsg>(&fx), vec![(S3, PlacedMsg::Sync)]);
        // Until the other copy answers, it takes no writes.
        assert!(acquire(&mut s, B, 200).is_empty());
        // The other copy holds A's committed grant, which this one missed.
        let row = PlacedRow {
            owner: Some(A),
            token: FencingToken(33),
            expires_at_us: 30_000 * MS_US,
        };
        let waiting = Vec::new();
        s.deliver(
            S3,
            PlacedMsg::Synced {
                row,
                seq: 32,
                waiting,
            },
        );
        assert_eq!(s.node.durable.row.token, FencingToken(33));
        // A promoted copy stays the primary through its own restart.
        assert!(PlacedLease::recover(&config, S2, &s.node.durable).primary);
        // B gets the next token after A's lease runs out, never 33 again.
        s.now_us = 31_000 * MS_US;
        let fx = s.deliver(B, ask(TokenSource::Etcd, 0, None));
        let row = s.node.durable.row.clone();
        let waiting = Vec::new();
        assert_eq!(
            sent::<_, PlacedMsg>(&fx),
            vec![(
                S3,
                PlacedMsg::Wal {
                    row,
                    seq: 32,
                    waiting
                }
            )]
        );
        assert_eq!(s.node.durable.row.token, FencingToken(35));
    }
}
