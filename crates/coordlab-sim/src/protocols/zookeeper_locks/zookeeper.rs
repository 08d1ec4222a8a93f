//! A ZooKeeper ensemble as one linearizable service: sessions kept alive by client pings and
//! expired by the service's own clock, a tree of znodes (persistent and ephemeral,
//! optionally sequential), `getChildren` and `exists` with one-shot watches.
//!
//! How the ensemble agrees with itself is the Raft chapter's story; here it is one node that
//! applies every request in one order, which is exactly what its clients can rely on.
//!
//! Every deletion of a child of a watched parent is recorded as a [`Release`] with the
//! number of *other* sessions its watches woke, so a scenario can show the herd effect.

use crate::kernel::collections::{VecMap, VecSet};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::presentation::narration::zookeeper_locks::zookeeper::ZkServiceSaw;

crate::inbox!(ZkMsg);

/// A client session: the unit ZooKeeper ties ephemeral nodes and watches to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SessionId(pub u64);

/// ZooKeeper's transaction id: every change to the tree (and every new session) gets the
/// next one, so it orders all writes of the ensemble.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Zxid(pub u64);

crate::display_ids!(Zxid => "0x{:x}");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// An `exists` watch: the watched node was deleted.
    NodeDeleted,
    /// A `getChildren` watch: a child was created or deleted.
    ChildrenChanged,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkMsg {
    Connect {
        timeout_ms: u64,
    },
    Connected {
        session: SessionId,
        timeout_ms: u64,
    },
    Ping {
        session: SessionId,
    },
    Pong,
    /// `create(prefix, EPHEMERAL_SEQUENTIAL)`: the service appends the parent's next
    /// sequence number to `prefix`.
    CreateSequential {
        session: SessionId,
        prefix: String,
    },
    Created {
        path: String,
        zxid: Zxid,
    },
    GetChildren {
        session: SessionId,
        path: String,
        watch: bool,
    },
    Children {
        path: String,
        /// Child names (not full paths), sorted.
        children: Vec<String>,
    },
    Exists {
        session: SessionId,
        path: String,
        watch: bool,
    },
    ExistsReply {
        path: String,
        exists: bool,
    },
    Delete {
        session: SessionId,
        path: String,
    },
    DeleteReply {
        path: String,
        deleted: bool,
    },
    Close {
        session: SessionId,
    },
    Closed,
    /// A one-shot watch fired.
    Watch {
        path: String,
        event: WatchEvent,
    },
    /// The session is gone: every request on it is refused from now on.
    SessionExpired {
        session: SessionId,
    },
}

/// The sequence number at the end of a sequential node's name (`n-0000000007` → 7).
pub fn sequence_of(name: &str) -> Option<u64> {
    let digits = name.get(name.len().checked_sub(10)?..)?;
    digits.parse().ok()
}

/// The last component of a path.
pub fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Znode {
    /// The session an ephemeral node belongs to; `None` for a persistent node.
    pub owner: Option<SessionId>,
    pub czxid: Zxid,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub client: NodeId,
    pub timeout_ms: u64,
    /// When the service last heard from the client, by the service's clock.
    pub last_heard_us: u64,
    pub alive: bool,
}

/// Why a node under a watched parent disappeared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseCause {
    Deleted,
    SessionExpired,
    SessionClosed,
}

/// One deletion of a sequential child, and whom it woke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub path: String,
    pub owner: NodeId,
    pub cause: ReleaseCause,
    /// Other children still there when it went (the queue behind it, and anyone ahead).
    pub others_left: u32,
    /// Watch notifications this deletion sent to sessions other than the owner's.
    pub wakeups: u32,
    pub at_us: u64,
}

/// The service's one timer: a session's timeout by the service's clock, re-armed by every
/// request on the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionExpiry {
    pub session: SessionId,
}

/// What the scenario decides about the ensemble.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkConfig {
    /// The lock's parent: a persistent node that exists from the start, and the one whose
    /// children the node card shows.
    pub lock_path: String,
}

/// The ensemble's state. Its durability and agreement are assumed (see the module docs): a
/// scenario never crashes it, so it persists nothing, and a recovery would start from the
/// tree its configuration describes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZkService {
    pub lock_path: String,
    pub zxid: Zxid,
    next_session: u64,
    pub sessions: VecMap<SessionId, Session>,
    pub nodes: VecMap<String, Znode>,
    /// Per parent: how many times its children changed. A sequential child takes this
    /// number, so sequence numbers only grow (with gaps where children were deleted).
    pub cversion: VecMap<String, u64>,
    child_watches: VecMap<String, VecSet<SessionId>>,
    exists_watches: VecMap<String, VecSet<SessionId>>,
    pub releases: Vec<Release>,
    /// Watch notifications sent for creations (the herd wakes on those too).
    pub create_wakeups: u32,
}

impl ZkService {
    /// A fresh ensemble: no sessions, and the lock's parent node as the only znode.
    pub fn new(config: &ZkConfig) -> ZkService {
        let lock_path = config.lock_path.clone();
        let nodes = VecMap::from([(
            lock_path.clone(),
            Znode {
                owner: None,
                czxid: Zxid(0),
            },
        )]);
        let cversion = VecMap::from([(lock_path.clone(), 0)]);
        ZkService {
            lock_path,
            next_session: 1,
            nodes,
            cversion,
            ..ZkService::default()
        }
    }

    /// Sorted child names of `parent`.
    pub fn children(&self, parent: &str) -> Vec<String> {
        self.nodes
            .keys()
            .filter(|p| p.as_str() != parent && parent_of(p) == parent)
            .map(|p| base_name(p).to_string())
            .collect()
    }

    /// Who is registered to be woken: (exists watchers of `path`, child watchers of `path`).
    pub fn watchers(&self, path: &str) -> (Vec<NodeId>, Vec<NodeId>) {
        let clients = |m: &VecMap<String, VecSet<SessionId>>| -> Vec<NodeId> {
            m.get(path)
                .map(|s| {
                    s.iter()
                        .filter_map(|id| self.sessions.get(id))
                        .map(|x| x.client)
                        .collect()
                })
                .unwrap_or_default()
        };
        (clients(&self.exists_watches), clients(&self.child_watches))
    }

    fn next_zxid(&mut self) -> Zxid {
        self.zxid = Zxid(self.zxid.0 + 1);
        self.zxid
    }

    /// The live session behind a request, refreshing its timeout; `None` after it expired.
    fn touch(&mut self, ctx: &mut Ctx<'_, Self>, session: SessionId, from: NodeId) -> bool {
        match self.sessions.get_mut(&session) {
            Some(s) if s.alive && s.client == from => {
                s.last_heard_us = ctx.local_now_us;
                ctx.set_timer(SessionExpiry { session }, s.timeout_ms * MS_US);
                true
            }
            _ => false,
        }
    }

    /// The paths of the ephemeral nodes `session` owns: the ones its end deletes. Collected
    /// (not borrowed) because the caller then changes the tree while naming or removing them.
    fn ephemeral_nodes_of(&self, session: SessionId) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(_, n)| n.owner == Some(session))
            .map(|(p, _)| p.clone())
            .collect()
    }

    fn end_session(&mut self, ctx: &mut Ctx<'_, Self>, session: SessionId, cause: ReleaseCause) {
        if let Some(s) = self.sessions.get_mut(&session) {
            s.alive = false;
        }
        for watchers in self
            .child_watches
            .values_mut()
            .chain(self.exists_watches.values_mut())
        {
            watchers.remove(&session);
        }
        let owned = self.ephemeral_nodes_of(session);
        for path in owned {
            self.remove(ctx, &path, cause);
        }
        self.next_zxid();
    }

    fn remove(&mut self, ctx: &mut Ctx<'_, Self>, path: &str, cause: ReleaseCause) {
        let Some(node) = self.nodes.remove(path) else {
            return;
        };
        self.next_zxid();
        let parent = parent_of(path).to_string();
        *self.cversion.get_or_insert_with(parent.clone(), Default::default) += 1;
        let owner_client = node.owner.and_then(|s| self.sessions.get(&s)).map(|s| s.client);
        let skip = node.owner;
        let mut wakeups = self.fire(ctx, path, WatchEvent::NodeDeleted, skip);
        wakeups += self.fire(ctx, &parent, WatchEvent::ChildrenChanged, skip);
        if let Some(owner) = owner_client {
            self.releases.push(Release {
                path: path.to_string(),
                owner,
                cause,
                others_left: self.children(&parent).len() as u32,
                wakeups,
                at_us: ctx.local_now_us,
            });
        }
    }

    /// Fires and clears the watches on `path`; returns how many sessions (other than `skip`)
    /// were notified.
    fn fire(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        path: &str,
        event: WatchEvent,
        skip: Option<SessionId>,
    ) -> u32 {
        let watches = match event {
            WatchEvent::NodeDeleted => &mut self.exists_watches,
            WatchEvent::ChildrenChanged => &mut self.child_watches,
        };
        let Some(set) = watches.remove(path) else { return 0 };
        let mut woken = Vec::new();
        let mut also = None;
        for session in set {
            let Some(s) = self.sessions.get(&session).filter(|s| s.alive) else {
                continue;
            };
            ctx.send(
                s.client,
                ZkMsg::Watch {
                    path: path.to_string(),
                    event,
                },
            );
            if Some(session) != skip {
                woken.push(s.client);
            } else {
                also = Some(s.client);
            }
        }
        if !woken.is_empty() {
            let names: Vec<&str> = woken.iter().map(|c| ctx.name(*c)).collect();
            ctx.note(ZkServiceSaw::WatchFired {
                path,
                event,
                woken: &names,
                also: also.map(|c| ctx.name(c)),
            });
        }
        woken.len() as u32
    }

    /// The token a lock holder's node carries: its sequence number.
    pub fn token_of(path: &str) -> Option<FencingToken> {
        sequence_of(base_name(path)).map(FencingToken)
    }
}

impl Participant for ZkService {
    type Msg = ZkMsg;
    type Timer = SessionExpiry;
    type Durable = ();
    type Config = ZkConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(ZkServiceSaw::Up {
            lock_path: &self.lock_path,
        });
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ZkMsg) {
        let who = ctx.name(from);
        if let Some(session) = session_of(&msg) {
            if !self.touch(ctx, session, from) {
                ctx.note(ZkServiceSaw::RequestOnExpiredSession { who, session });
                ctx.send(from, ZkMsg::SessionExpired { session });
                return;
            }
        }
        match msg {
            ZkMsg::Connect { timeout_ms } => {
                let session = SessionId(self.next_session);
                self.next_session += 1;
                self.next_zxid();
                self.sessions.insert(
                    session,
                    Session {
                        client: from,
                        timeout_ms,
                        last_heard_us: ctx.local_now_us,
                        alive: true,
                    },
                );
                ctx.set_timer(SessionExpiry { session }, timeout_ms * MS_US);
                ctx.note(ZkServiceSaw::SessionOpened {
                    who,
                    session,
                    timeout_ms,
                });
                ctx.send(from, ZkMsg::Connected { session, timeout_ms });
            }
            ZkMsg::Ping { .. } => ctx.send(from, ZkMsg::Pong),
            ZkMsg::CreateSequential { session, prefix } => {
                let parent = parent_of(&prefix).to_string();
                let seq = self.cversion.get(&parent).copied().unwrap_or(0);
                let path = format!("{prefix}{seq:010}");
                let zxid = self.next_zxid();
                *self.cversion.get_or_insert_with(parent.clone(), Default::default) += 1;
                self.nodes.insert(
                    path.clone(),
                    Znode {
                        owner: Some(session),
                        czxid: zxid,
                    },
                );
                ctx.note(ZkServiceSaw::NodeCreated {
                    who,
                    path: &path,
                    session,
                    seq,
                    parent: &parent,
                });
                let woken = self.fire(ctx, &parent, WatchEvent::ChildrenChanged, None);
                self.create_wakeups += woken;
                ctx.send(from, ZkMsg::Created { path, zxid });
            }
            ZkMsg::GetChildren { session, path, watch } => {
                if watch {
                    self.child_watches
                        .get_or_insert_with(path.clone(), Default::default)
                        .insert(session);
                }
                let children = self.children(&path);
                ctx.send(from, ZkMsg::Children { path, children });
            }
            ZkMsg::Exists { session, path, watch } => {
                let exists = self.nodes.contains_key(&path);
                // A real `exists` watch would also fire on a later create; sequential names
                // are never reused, so the model only keeps watches on nodes that exist.
                if watch && exists {
                    self.exists_watches
                        .get_or_insert_with(path.clone(), Default::default)
                        .insert(session);
                }
                ctx.send(from, ZkMsg::ExistsReply { path, exists });
            }
            ZkMsg::Delete { session, path } => {
                let mine = self.nodes.get(&path).is_some_and(|n| n.owner == Some(session));
                if mine {
                    self.remove(ctx, &path, ReleaseCause::Deleted);
                }
                ctx.send(from, ZkMsg::DeleteReply { path, deleted: mine });
            }
            ZkMsg::Close { session } => {
                self.end_session(ctx, session, ReleaseCause::SessionClosed);
                ctx.cancel_timer(SessionExpiry { session });
                ctx.send(from, ZkMsg::Closed);
            }
            _ => {}
        }
    }

    /// The session timer fired: expire the session if it really went quiet (the timer may
    /// have waited out a pause of the service itself, so the deadline is checked again).
    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, SessionExpiry { session }: SessionExpiry) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        let quiet_us = ctx.local_now_us.saturating_sub(s.last_heard_us);
        if !s.alive || quiet_us < s.timeout_ms * MS_US {
            return;
        }
        let owned = self.ephemeral_nodes_of(session);
        ctx.note(ZkServiceSaw::SessionExpired {
            client: ctx.name(s.client),
            quiet_us,
            session,
            owned: &owned,
        });
        self.end_session(ctx, session, ReleaseCause::SessionExpired);
    }

    fn recover(config: &ZkConfig, _id: NodeId, _durable: &()) -> Self {
        ZkService::new(config)
    }
}

fn session_of(msg: &ZkMsg) -> Option<SessionId> {
    match msg {
        ZkMsg::Ping { session }
        | ZkMsg::CreateSequential { session, .. }
        | ZkMsg::GetChildren { session, .. }
        | ZkMsg::Exists { session, .. }
        | ZkMsg::Delete { session, .. }
        | ZkMsg::Close { session } => Some(*session),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{narration, sent, timers_set, Harness};

    const A: NodeId = NodeId(1);
    const B: NodeId = NodeId(2);

    fn service() -> Harness<ZkService> {
        let config = ZkConfig {
            lock_path: "/lock".into(),
        };
        Harness::new(
            NodeId(0),
            ZkService::new(&config),
            &["zookeeper", "worker-1", "worker-2"],
        )
    }

    fn connect(h: &mut Harness<ZkService>, client: NodeId) -> SessionId {
        let fx = h.deliver(client, ZkMsg::Connect { timeout_ms: 4_000 });
        match sent::<_, ZkMsg>(&fx).as_slice() {
            [(_, ZkMsg::Connected { session, .. })] => *session,
            other => panic!("{other:?}"),
        }
    }

    fn create(h: &mut Harness<ZkService>, client: NodeId, session: SessionId) -> String {
        let prefix = "/lock/n-".to_string();
        let fx = h.deliver(client, ZkMsg::CreateSequential { session, prefix });
        match sent::<_, ZkMsg>(&fx).as_slice() {
            [(_, ZkMsg::Created { path, .. })] => path.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_quiet_session_expires_and_wakes_only_the_watcher_of_its_node() {
        let mut h = service();
        let (a, b) = (connect(&mut h, A), connect(&mut h, B));
        let first = create(&mut h, A, a);
        assert_eq!(first, "/lock/n-0000000000");
        assert_eq!(create(&mut h, B, b), "/lock/n-0000000001");
        let path = first.clone();
        h.deliver(
            B,
            ZkMsg::Exists {
                session: b,
                path,
                watch: true,
            },
        );
        // worker-2 keeps pinging; worker-1 goes quiet.
        h.now_us = 3_000 * MS_US;
        let fx = h.deliver(B, ZkMsg::Ping { session: b });
        assert_eq!(
            timers_set(&fx),
            vec![(SessionExpiry { session: b }, 4_000 * MS_US)]
        );
        h.now_us = 4_000 * MS_US;
        let fx = h.fire(SessionExpiry { session: a });
        assert!(narration(&fx)
            .contains("session 0x101 expires, and its ephemeral node /lock/n-0000000000 is deleted"));
        assert_eq!(
            sent::<_, ZkMsg>(&fx),
            vec![(
                B,
                ZkMsg::Watch {
                    path: first,
                    event: WatchEvent::NodeDeleted
                }
            )]
        );
        assert_eq!(h.node.releases.len(), 1);
        assert_eq!(h.node.releases[0].wakeups, 1);
        assert_eq!(h.node.children("/lock"), vec!["n-0000000001".to_string()]);
        // The session is gone for good: its next request is refused.
        let fx = h.deliver(A, ZkMsg::Ping { session: a });
        assert_eq!(
            sent::<_, ZkMsg>(&fx),
            vec![(A, ZkMsg::SessionExpired { session: a })]
        );
    }

    #[test]
    fn sequence_numbers_come_from_the_name() {
        assert_eq!(sequence_of("n-0000000007"), Some(7));
        assert_eq!(sequence_of("x"), None);
        assert_eq!(base_name("/lock/n-0000000003"), "n-0000000003");
        assert_eq!(parent_of("/lock/n-0000000003"), "/lock");
        assert_eq!(parent_of("/lock"), "/");
    }
}
