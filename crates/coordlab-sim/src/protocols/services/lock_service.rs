//! An etcd server, as far as the lock needs one: a Raft server (the unchanged model of
//! [`crate::protocols::raft`]) replicating the store of [`super::lock_store`], plus what etcd does
//! outside the log.
//!
//! - **Leases are counted by the leader alone**, by its own clock. A keep-alive goes to the
//!   leader, which restarts the lease's count in memory and answers: no log entry (etcd's
//!   `LeaseKeepAlive`; only grant and revoke go through Raft). When a count runs out the
//!   leader proposes a revoke, and the lease's keys are gone only once that entry commits.
//! - **A new leader restarts every lease at its full TTL** (etcd's lessor does so when it is
//!   promoted): it cannot know how far its predecessor had counted, so after a failover a lease
//!   can only last longer than promised, never shorter. It also commits an empty entry of its
//!   own term at once, which is how it learns what is committed (Raft §8); until that entry is
//!   applied it answers no keep-alive and no read, as its store may be behind.
//! - **A read needs no log entry** (etcd's ReadIndex): the leader notes its commit index, asks
//!   its peers whether it still leads its term, and answers from its store once a majority
//!   said yes and it has applied up to that index.
//! - **Any server serves a watch** from its own applied store, replaying past deletions from
//!   the watch's start revision, so a watcher that moves to another server misses nothing.
//!
//! The Raft server runs under [`Ctx::within`]: its messages go on the wire as they are, its
//! timers become [`LockServerTimer::Raft`], and what it persists is this server's durable
//! state unchanged.

use super::lock_store::{LeaseId, LockOp, LockTable};
use crate::kernel::collections::{VecMap, VecSet};
use crate::kernel::ids::NodeId;
use crate::kernel::message::{Inbox, Message};
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::kernel::view::InputSpec;
use crate::presentation::narration::services::lock_service::{InheritedLease, LockServiceSaw};
use crate::protocols::raft::{
    Command, LogIndex, RaftMsg, RaftServer, RaftTimer, Role, ServerConfig, ServerDurable, Term,
};

/// What etcd answers without a log entry, and the watch. Writes (lease grant, the acquire
/// transaction, lease revoke) go as Raft client requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdMsg {
    /// `LeaseKeepAlive`: only the leader answers.
    KeepAlive {
        id: u32,
        lease: LeaseId,
    },
    /// The lease's TTL, counted afresh from now; 0 if the lease is gone.
    KeepAliveReply {
        id: u32,
        lease: LeaseId,
        ttl_ms: u64,
    },
    /// The mutex's wait, as one linearizable read: the key under `prefix` created last before
    /// revision `below`, and whether `mine` still exists.
    Range {
        id: u32,
        prefix: String,
        below: u64,
        mine: String,
    },
    RangeReply {
        id: u32,
        /// The store's revision the answer was read at.
        header: u64,
        /// The key just ahead and its create revision, if any.
        ahead: Option<(String, u64)>,
        mine_exists: bool,
    },
    /// Tell me when `key` is deleted, at revision `from` or later.
    Watch {
        key: String,
        from: u64,
    },
    Deleted {
        key: String,
        revision: u64,
    },
    /// A keep-alive or read sent to a server that does not lead.
    NotLeader {
        id: u32,
        leader: Option<NodeId>,
    },
    /// ReadIndex, between servers: does the sender still lead `term`?
    ReadCheck {
        term: Term,
        seq: u32,
    },
    ReadCheckAck {
        term: Term,
        seq: u32,
        ok: bool,
    },
}

/// What a lock server takes off the wire, and what its clients take from it: writes through
/// Raft's client protocol, the rest through etcd's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockServerMsg {
    Raft(RaftMsg),
    Etcd(EtcdMsg),
}

impl Inbox for LockServerMsg {
    fn accept(msg: Box<dyn Message>) -> Option<Self> {
        match msg.downcast::<RaftMsg>() {
            Ok(m) => Some(LockServerMsg::Raft(m)),
            Err(msg) => msg.downcast::<EtcdMsg>().ok().map(LockServerMsg::Etcd),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockServerTimer {
    Raft(RaftTimer),
    /// The leader's count of a lease runs out, by the leader's clock.
    LeaseDue {
        lease: LeaseId,
    },
}

/// The leader's count of one lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Countdown {
    /// When the lease runs out, by the leader's clock.
    pub deadline_us: u64,
    /// A revoke has been proposed and not yet applied.
    pub expiring: bool,
}

/// A keep-alive or read the leader has not answered yet.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Pending {
    KeepAlive {
        client: NodeId,
        id: u32,
        lease: LeaseId,
    },
    Read {
        read: RangeRead,
        /// Once asked: the check's number, the commit index it read, and who said yes.
        check: Option<(u32, LogIndex, VecSet<NodeId>)>,
    },
}

/// What a client's Range asked, kept apart from the leader's check on it so the read passes
/// unchanged through each stage of that check.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RangeRead {
    client: NodeId,
    id: u32,
    prefix: String,
    below: u64,
    mine: String,
}

impl Pending {
    fn request(&self) -> (NodeId, u32) {
        match self {
            Pending::KeepAlive { client, id, .. }
            | Pending::Read {
                read: RangeRead { client, id, .. },
                ..
            } => (*client, *id),
        }
    }
}

/// A watch some client holds on this server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watcher {
    pub client: NodeId,
    pub key: String,
    pub from: u64,
}

#[derive(Clone, Debug)]
pub struct LockServer {
    pub server: RaftServer,
    /// Leader only: the lease counts (volatile, gone on a crash or a step-down).
    pub countdowns: VecMap<LeaseId, Countdown>,
    /// Whether it was leader after the last event it handled.
    led: bool,
    /// Whether it has narrated a keep-alive in this term of leading.
    told_keepalive: bool,
    pending: Vec<Pending>,
    pub watchers: Vec<Watcher>,
    next_check: u32,
}

impl LockServer {
    pub fn new(server: RaftServer) -> LockServer {
        LockServer {
            server,
            countdowns: VecMap::new(),
            led: false,
            told_keepalive: false,
            pending: Vec::new(),
            watchers: Vec::new(),
            next_check: 1,
        }
    }

    pub(crate) fn store(&self) -> &LockTable {
        &self.server.locks
    }

    /// Runs one handler of the hosted Raft server.
    fn raft<R>(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        run: impl FnOnce(&mut RaftServer, &mut Ctx<'_, RaftServer>) -> R,
    ) -> R {
        self.server.run_hosted(ctx, LockServerTimer::Raft, run)
    }

    /// Runs the Raft server on one input, then does the bookkeeping.
    fn drive(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        run: impl FnOnce(&mut RaftServer, &mut Ctx<'_, RaftServer>),
    ) {
        self.raft(ctx, run);
        self.after(ctx);
    }

    fn propose(&mut self, ctx: &mut Ctx<'_, Self>, op: LockOp) -> bool {
        self.raft(ctx, |s, c| s.propose(c, Command::Lock(op)).is_some())
    }

    fn leads(&self) -> bool {
        self.server.role == Role::Leader
    }

    /// A leader whose own first entry is applied: its store holds everything committed.
    fn ready(&self) -> bool {
        let s = &self.server;
        self.leads() && s.term_at(s.last_applied) == Some(s.term)
    }

    /// The bookkeeping after every event: watches hear of deletions; a server that does not
    /// lead drops its counts and turns away what it held; a leader commits a no-op when fresh,
    /// counts every lease and answers what it can.
    fn after(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.notify_watchers(ctx);
        if !self.leads() {
            self.led = false;
            for lease in std::mem::take(&mut self.countdowns).into_keys() {
                ctx.cancel_timer(LockServerTimer::LeaseDue { lease });
            }
            let hint = self.server.leader_hint.filter(|l| *l != ctx.node);
            for p in std::mem::take(&mut self.pending) {
                let (client, id) = p.request();
                ctx.send(client, EtcdMsg::NotLeader { id, leader: hint });
            }
            return;
        }
        if !self.led {
            self.led = true;
            self.told_keepalive = false;
            ctx.note(LockServiceSaw::CommitsBarrier { me: ctx.me() });
            self.propose(ctx, LockOp::Barrier);
        }
        self.drop_ended(ctx);
        if self.ready() {
            self.count_new_leases(ctx);
        }
        self.serve(ctx);
    }

    /// Sends each watcher the deletion it waits for, once this server has applied it.
    fn notify_watchers(&mut self, ctx: &mut Ctx<'_, Self>) {
        let deletions = &self.server.locks.deletions;
        self.watchers.retain(|w| {
            let Some(d) = deletions.iter().find(|d| d.key == w.key && d.revision >= w.from) else {
                return true;
            };
            ctx.send(
                w.client,
                EtcdMsg::Deleted {
                    key: d.key.clone(),
                    revision: d.revision,
                },
            );
            false
        });
    }

    /// Starts the count of every lease that has none, at its full TTL.
    fn count_new_leases(&mut self, ctx: &mut Ctx<'_, Self>) {
        let s = &self.server;
        let new: Vec<(LeaseId, u64, bool)> = s
            .locks
            .leases
            .iter()
            .filter(|(id, _)| !self.countdowns.contains_key(*id))
            .map(|(id, l)| {
                let inherited = s.term_at(LogIndex(l.granted_at)).is_some_and(|t| t < s.term);
                (*id, l.ttl_ms, inherited)
            })
            .collect();
        let store = &s.locks;
        let inherited: Vec<InheritedLease> = new
            .iter()
            .filter(|n| n.2)
            .map(|(id, _, _)| InheritedLease {
                id: *id,
                owner: store.leases.get(id).map_or("", |l| ctx.name(l.owner)),
                key_revision: store
                    .keys
                    .values()
                    .find(|kv| kv.lease == *id)
                    .map(|kv| kv.create_revision),
            })
            .collect();
        if !inherited.is_empty() {
            ctx.note(LockServiceSaw::InheritsLeases {
                me: ctx.me(),
                leases: inherited,
            });
        }
        for (lease, ttl_ms, _) in new {
            self.restart_count(ctx, lease, ttl_ms);
        }
    }

    fn restart_count(&mut self, ctx: &mut Ctx<'_, Self>, lease: LeaseId, ttl_ms: u64) {
        let ttl_us = ttl_ms * MS_US;
        self.countdowns.insert(
            lease,
            Countdown {
                deadline_us: ctx.local_now_us + ttl_us,
                expiring: false,
            },
        );
        ctx.set_timer(LockServerTimer::LeaseDue { lease }, ttl_us);
    }

    /// Drops the counts of leases the store no longer has (revoked).
    fn drop_ended(&mut self, ctx: &mut Ctx<'_, Self>) {
        let leases = &self.server.locks.leases;
        let gone: Vec<LeaseId> = self
            .countdowns
            .keys()
            .filter(|id| !leases.contains_key(*id))
            .copied()
            .collect();
        for lease in gone {
            if self.countdowns.remove(&lease).is_some_and(|c| c.expiring) {
                ctx.note(LockServiceSaw::RevokeApplied { me: ctx.me(), lease });
            }
            ctx.cancel_timer(LockServerTimer::LeaseDue { lease });
        }
    }

    /// Answers the keep-alives and reads it can (leader only).
    fn serve(&mut self, ctx: &mut Ctx<'_, Self>) {
        if !self.ready() {
            return;
        }
        let majority = self.server.config.majority();
        for p in std::mem::take(&mut self.pending) {
            let keep = match p {
                Pending::KeepAlive { client, id, lease } => self.keep_alive(ctx, client, id, lease),
                Pending::Read { read, check: None } => {
                    let seq = self.next_check;
                    self.next_check += 1;
                    let term = self.server.term;
                    let me = ctx.node;
                    for peer in self.server.config.cluster.iter().filter(|p| **p != me) {
                        ctx.send(*peer, EtcdMsg::ReadCheck { term, seq });
                    }
                    ctx.note(LockServiceSaw::ReadIndex {
                        me: ctx.me(),
                        commit_index: self.server.commit_index,
                        term,
                    });
                    Some(Pending::Read {
                        read,
                        check: Some((seq, self.server.commit_index, VecSet::new())),
                    })
                }
                Pending::Read {
                    read,
                    check: Some((seq, index, acks)),
                } => {
                    if acks.len() + 1 >= majority && self.server.last_applied >= index {
                        let store = self.store();
                        let ahead = store
                            .last_before(&read.prefix, read.below)
                            .map(|(k, kv)| (k.clone(), kv.create_revision));
                        let reply = EtcdMsg::RangeReply {
                            id: read.id,
                            header: store.revision,
                            ahead,
                            mine_exists: store.keys.contains_key(&read.mine),
                        };
                        ctx.send(read.client, reply);
                        None
                    } else {
                        Some(Pending::Read {
                            read,
                            check: Some((seq, index, acks)),
                        })
                    }
                }
            };
            self.pending.extend(keep);
        }
    }

    /// Restarts the count of `lease` and answers, or keeps the keep-alive while a revoke of
    /// the lease is on its way.
    fn keep_alive(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        client: NodeId,
        id: u32,
        lease: LeaseId,
    ) -> Option<Pending> {
        let Some(ttl_ms) = self.store().leases.get(&lease).map(|l| l.ttl_ms) else {
            ctx.send(client, EtcdMsg::KeepAliveReply { id, lease, ttl_ms: 0 });
            return None;
        };
        if self.countdowns.get(&lease).is_some_and(|c| c.expiring) {
            // etcd answers once the revoke is applied (or turns it away if it stops leading).
            return Some(Pending::KeepAlive { client, id, lease });
        }
        self.restart_count(ctx, lease, ttl_ms);
        if !self.told_keepalive {
            self.told_keepalive = true;
            ctx.note(LockServiceSaw::KeepAliveRestarts {
                me: ctx.me(),
                lease,
                ttl_ms,
                revision: self.store().revision,
            });
        }
        ctx.send(client, EtcdMsg::KeepAliveReply { id, lease, ttl_ms });
        None
    }

    fn request(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: EtcdMsg) {
        let pending = match msg {
            EtcdMsg::KeepAlive { id, lease } => Pending::KeepAlive {
                client: from,
                id,
                lease,
            },
            EtcdMsg::Range {
                id,
                prefix,
                below,
                mine,
            } => Pending::Read {
                read: RangeRead {
                    client: from,
                    id,
                    prefix,
                    below,
                    mine,
                },
                check: None,
            },
            _ => return,
        };
        let (client, id) = pending.request();
        if !self.leads() {
            let leader = self.server.leader_hint.filter(|l| *l != ctx.node);
            ctx.send(client, EtcdMsg::NotLeader { id, leader });
            return;
        }
        if !self.pending.iter().any(|p| p.request() == (client, id)) {
            self.pending.push(pending);
        }
        self.serve(ctx);
    }

    fn etcd(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: EtcdMsg) {
        match msg {
            EtcdMsg::Watch { key, from: rev } => {
                self.watchers.retain(|w| w.client != from);
                self.watchers.push(Watcher {
                    client: from,
                    key,
                    from: rev,
                });
                self.notify_watchers(ctx);
            }
            EtcdMsg::ReadCheck { term, seq } => {
                let ok = self.server.term <= term;
                ctx.send(from, EtcdMsg::ReadCheckAck { term, seq, ok });
            }
            EtcdMsg::ReadCheckAck { term, seq, ok } => {
                if !ok || term != self.server.term {
                    return;
                }
                for p in &mut self.pending {
                    if let Pending::Read {
                        check: Some((s, _, acks)),
                        ..
                    } = p
                    {
                        if *s == seq {
                            acks.insert(from);
                        }
                    }
                }
                self.serve(ctx);
            }
            msg @ (EtcdMsg::KeepAlive { .. } | EtcdMsg::Range { .. }) => self.request(ctx, from, msg),
            _ => {}
        }
    }

    fn lease_due(&mut self, ctx: &mut Ctx<'_, Self>, lease: LeaseId) {
        let Some(c) = self.countdowns.get(&lease).cloned() else {
            return;
        };
        // The timer may have waited out a pause of this server: judge by the clock again.
        if !self.leads() || c.expiring || ctx.local_now_us < c.deadline_us {
            return;
        }
        let store = self.store();
        let owner = store
            .leases
            .get(&lease)
            .map(|l| ctx.name(l.owner))
            .unwrap_or_default();
        let keys = store
            .keys
            .iter()
            .filter(|(_, kv)| kv.lease == lease)
            .map(|(k, kv)| (k.as_str(), kv.create_revision))
            .collect();
        ctx.note(LockServiceSaw::RevokeProposed {
            me: ctx.me(),
            owner,
            lease,
            keys,
        });
        if self.propose(ctx, LockOp::LeaseRevoke { lease, expired: true }) {
            if let Some(c) = self.countdowns.get_mut(&lease) {
                c.expiring = true;
            }
        }
        self.after(ctx);
    }
}

impl Participant for LockServer {
    type Msg = LockServerMsg;
    type Timer = LockServerTimer;
    type Durable = ServerDurable;
    type Config = ServerConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.countdowns.clear();
        self.led = false;
        self.drive(ctx, |s, c| s.on_start(c));
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LockServerMsg) {
        match msg {
            LockServerMsg::Raft(m) => self.drive(ctx, |s, c| s.on_message(c, from, m)),
            LockServerMsg::Etcd(m) => self.etcd(ctx, from, m),
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: LockServerTimer) {
        match timer {
            LockServerTimer::Raft(t) => self.drive(ctx, |s, c| s.on_timer(c, t)),
            LockServerTimer::LeaseDue { lease } => self.lease_due(ctx, lease),
        }
    }

    fn recover(config: &ServerConfig, id: NodeId, durable: &ServerDurable) -> Self {
        LockServer::new(RaftServer::recover(config, id, durable))
    }

    fn inputs(&self) -> Vec<InputSpec> {
        self.server.inputs()
    }

    /// A user input for the Raft server (e.g. forcing its election timeout).
    fn on_input(&mut self, ctx: &mut Ctx<'_, Self>, input: &str) -> Result<(), String> {
        let result = self.raft(ctx, |s, c| s.on_input(c, input));
        if result.is_ok() {
            self.after(ctx);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{sent, Harness};
    use crate::protocols::raft::{ClientAnswer, RaftBug};

    /// Server node 0 of `cluster`, among `names`, started.
    fn server(cluster: Vec<NodeId>, names: &[&str]) -> Harness<LockServer> {
        let config = ServerConfig {
            cluster,
            election_timeout_ms_min: 150,
            election_timeout_ms_max: 300,
            heartbeat_ms: 50,
            stop_at_ms: 60_000,
            bug: RaftBug::None,
        };
        let mut h = Harness::new(
            NodeId(0),
            LockServer::new(RaftServer::new(NodeId(0), config)),
            names,
        );
        h.start();
        h
    }

    /// A one-server cluster that has elected itself and holds one lease, granted to node 1.
    fn leader_with_a_lease() -> (Harness<LockServer>, LeaseId) {
        let mut h = server(vec![NodeId(0)], &["s1", "w"]);
        h.fire(LockServerTimer::Raft(RaftTimer::Election));
        assert!(h.node.ready());
        let grant = LockOp::LeaseGrant {
            ttl_ms: 3_000,
            owner: NodeId(1),
            owner_name: "w".into(),
        };
        let out = h.deliver(
            NodeId(1),
            LockServerMsg::Raft(RaftMsg::ClientRequest {
                id: 1,
                command: Command::Lock(grant),
            }),
        );
        let replies = sent::<LockServer, RaftMsg>(&out);
        let lease = match &replies[..] {
            [(
                _,
                RaftMsg::ClientReply {
                    answer:
                        ClientAnswer::Locked {
                            result: super::super::lock_store::LockResult::LeaseGranted { lease, .. },
                            ..
                        },
                    ..
                },
            )] => *lease,
            other => panic!("{other:?}"),
        };
        (h, lease)
    }

    /// Delivers `msg` from the worker (node 1) and returns the etcd answers it got.
    fn from_worker(h: &mut Harness<LockServer>, msg: EtcdMsg) -> Vec<(NodeId, EtcdMsg)> {
        let out = h.deliver(NodeId(1), LockServerMsg::Etcd(msg));
        sent::<LockServer, EtcdMsg>(&out)
    }

    /// The leader's answer to the worker's keep-alive `id`: the TTL the lease has again, or 0
    /// once it is gone.
    fn kept_alive(id: u32, lease: LeaseId, ttl_ms: u64) -> Vec<(NodeId, EtcdMsg)> {
        vec![(NodeId(1), EtcdMsg::KeepAliveReply { id, lease, ttl_ms })]
    }

    #[test]
    fn a_keep_alive_restarts_the_count_in_memory_and_writes_no_log_entry() {
        let (mut h, lease) = leader_with_a_lease();
        let log_before = h.node.server.log.len();
        let revision_before = h.node.store().revision;
        h.now_us = 2_000 * MS_US;
        let answer = from_worker(&mut h, EtcdMsg::KeepAlive { id: 2, lease });
        assert_eq!(answer, kept_alive(2, lease, 3_000));
        assert_eq!(h.node.countdowns[&lease].deadline_us, 5_000 * MS_US);
        assert_eq!(h.node.server.log.len(), log_before, "no log entry");
        assert_eq!(h.node.store().revision, revision_before, "no revision");
        // Once the count runs out the leader revokes the lease through the log; a keep-alive
        // after that is told the lease is gone.
        h.now_us = 5_000 * MS_US;
        h.fire(LockServerTimer::LeaseDue { lease });
        assert!(h.node.store().leases.is_empty());
        assert!(matches!(
            h.node.server.log.last().map(|e| &e.command),
            Some(Command::Lock(LockOp::LeaseRevoke { expired: true, .. }))
        ));
        let answer = from_worker(&mut h, EtcdMsg::KeepAlive { id: 3, lease });
        assert_eq!(answer, kept_alive(3, lease, 0));
    }

    #[test]
    fn a_follower_points_keep_alives_to_the_leader_and_serves_watches() {
        let mut h = server(vec![NodeId(0), NodeId(2)], &["s1", "w", "s2"]);
        let lease = LeaseId(0x7a01);
        assert_eq!(
            from_worker(&mut h, EtcdMsg::KeepAlive { id: 1, lease }),
            vec![(NodeId(1), EtcdMsg::NotLeader { id: 1, leader: None })]
        );
        let watch = EtcdMsg::Watch {
            key: "/lock/x/7a01".into(),
            from: 3,
        };
        assert!(from_worker(&mut h, watch).is_empty());
        assert_eq!(h.node.watchers.len(), 1);
    }
}
