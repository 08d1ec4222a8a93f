//! What `consensus-lock` checks and shows: the lock checks on top of every Raft safety
//! property of [`RaftWorld`], which reads the Raft server inside each [`LockServer`] through
//! [`LockServers`], the run's view of its servers.

use super::lock_service_common::{name, GrantLog, LockHolders, LockProperty};
use crate::json;
use crate::kernel::collections::VecSet;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::presentation::durations::seconds;
use crate::properties::PropertySpec;
use crate::protocols::raft::{RaftServer, Role, ServerDurable};
use crate::protocols::services::lock_client::{EtcdMutex, EtcdWorker};
use crate::protocols::services::lock_service::LockServer;
use crate::protocols::services::lock_store::LockEvent;
use crate::scenarios::common::{down_worker_row, runner_believers, runner_holdings};
use crate::scenarios::property_library::{fence_monotonic, ledger_outcome, ledger_row, ledger_tables};
use crate::scenarios::raft_world::{RaftView, RaftWorld};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

const LOCK_PROPERTIES: [LockProperty; 3] = [
    LockProperty::OneHolderPerStore,
    LockProperty::TokensIncrease,
    LockProperty::FenceMonotonic,
];

/// The lock servers of a run as [`RaftWorld`] reads them: the Raft server each one hosts, and
/// what it persisted (a lock server persists exactly its Raft server's state).
pub struct LockServers<'n, 'a>(pub &'n Nodes<'a>);

impl RaftView for LockServers<'_, '_> {
    fn server(&self, id: NodeId) -> Option<&RaftServer> {
        self.0.live::<LockServer>(id).map(|s| &s.server)
    }
    fn durable(&self, id: NodeId) -> Option<&ServerDurable> {
        self.0.durable::<LockServer>(id)
    }
    fn name(&self, id: NodeId) -> &str {
        self.0.name(id)
    }
    fn now_us(&self) -> u64 {
        self.0.now_us
    }
}

pub struct ConsensusWorld {
    pub servers: Vec<NodeId>,
    pub workers: Vec<NodeId>,
    pub ledger: NodeId,
    /// The mutex's prefix.
    pub prefix: String,
    pub raft: RaftWorld,
    pub grants: GrantLog,
    /// Revisions whose release or expiry some server has applied.
    pub ended: VecSet<u64>,
    /// Revisions that ended by the leader's expiry rather than a release.
    pub expired: VecSet<u64>,
    pub holders: LockHolders,
    raft_verdicts: Vec<bool>,
    /// Per server (as in `servers`), how much of its applied history has been observed. A
    /// restarted server applies the same committed log again, so its history repeats the
    /// same events at the same places and only what lies past this mark is new.
    observed: Vec<usize>,
}

impl ConsensusWorld {
    pub fn new(servers: Vec<NodeId>, workers: Vec<NodeId>, ledger: NodeId, prefix: &str) -> Self {
        let raft = RaftWorld::new(servers.clone(), None, None);
        let servers_len = servers.len();
        ConsensusWorld {
            servers,
            workers,
            ledger,
            prefix: prefix.to_string(),
            raft,
            grants: GrantLog::new(),
            ended: VecSet::new(),
            expired: VecSet::new(),
            holders: LockHolders::default(),
            raft_verdicts: Vec::new(),
            observed: vec![0; servers_len],
        }
    }

    /// The live Raft servers, with their ids.
    fn live_servers<'a>(&self, nodes: &Nodes<'a>) -> Vec<(NodeId, &'a RaftServer)> {
        self.servers
            .iter()
            .filter_map(|id| Some((*id, &nodes.live::<LockServer>(*id)?.server)))
            .collect()
    }

    /// Whether a leader is up.
    fn has_leader(&self, nodes: &Nodes<'_>) -> bool {
        self.servers.iter().any(|id| {
            nodes
                .live::<LockServer>(*id)
                .is_some_and(|l| l.server.role == Role::Leader)
        })
    }

    /// Grants no server has yet seen end: the holders by the store's own committed history.
    fn live_grants(&self) -> Vec<FencingToken> {
        self.grants
            .grants
            .iter()
            .map(|g| g.token)
            .filter(|t| !self.ended.contains(&t.0))
            .collect()
    }

    /// The worker whose key is first in line under the prefix in the committed state machine
    /// that has got furthest: the live server that has applied the most of the log. Every
    /// server applies only committed entries, in the same order, so each applied table is a
    /// state the cluster committed, and the furthest one is the newest; after an election it
    /// may be a follower's, since a new leader applies nothing new until an entry of its own
    /// term commits. Servers that are down hold no table (it is rebuilt from the log on
    /// restart), so with every server down nobody is granted. Collects nothing: it runs at
    /// every step.
    fn granted_to(&self, nodes: &Nodes<'_>) -> Option<NodeId> {
        let mut newest: Option<&RaftServer> = None;
        for id in &self.servers {
            if let Some(s) = nodes.live::<LockServer>(*id).map(|l| &l.server) {
                if newest.is_none_or(|n| s.last_applied > n.last_applied) {
                    newest = Some(s);
                }
            }
        }
        newest?
            .locks
            .keys
            .iter()
            .filter(|(key, _)| key.rsplit_once('/').map_or("", |(p, _)| p) == self.prefix)
            .min_by_key(|(_, kv)| kv.create_revision)
            .map(|(_, kv)| kv.owner)
    }

    /// Live workers that believe they hold the lock, with their ids.
    fn believers<'a>(&self, nodes: &Nodes<'a>) -> Vec<(NodeId, &'a EtcdWorker)> {
        runner_believers(nodes, &self.workers)
    }

    /// Records every change of holder that a live server has applied.
    fn observe_history(&mut self, nodes: &Nodes<'_>) {
        for (i, &id) in self.servers.iter().enumerate() {
            let Some(r) = nodes.live::<LockServer>(id).map(|l| &l.server) else {
                continue;
            };
            let history = &r.locks.history;
            let new = history.get(self.observed[i]..).unwrap_or_default();
            self.observed[i] = self.observed[i].max(history.len());
            for e in new {
                match e {
                    LockEvent::Granted { owner, revision, .. } => {
                        self.grants
                            .observe(*owner, FencingToken(*revision), id, nodes.now_us)
                    }
                    LockEvent::Ended {
                        revision, expired, ..
                    } => {
                        self.ended.insert(*revision);
                        if *expired {
                            self.expired.insert(*revision);
                        }
                    }
                }
            }
        }
    }

    /// The store as each server has applied it: its revision, the keys in line (the first
    /// holds the lock), and each lease as the leader counts it.
    fn servers_table(&self, nodes: &Nodes<'_>) -> TableView {
        let rows = self
            .servers
            .iter()
            .map(|id| {
                let Some(s) = nodes.live::<LockServer>(*id) else {
                    return vec![
                        name(nodes, *id),
                        "down".into(),
                        "—".into(),
                        "—".into(),
                        "—".into(),
                    ];
                };
                let r = &s.server;
                let store = &r.locks;
                let now = nodes.local_now_us[id.index()];
                let line: Vec<String> = store
                    .line(&self.prefix)
                    .iter()
                    .map(|(_, kv)| format!("{} {}", name(nodes, kv.owner), kv.create_revision))
                    .collect();
                let leases: Vec<String> = store
                    .leases
                    .iter()
                    .map(|(lease, l)| {
                        let count = match s.countdowns.get(lease) {
                            Some(c) if c.expiring => "revoke proposed".into(),
                            Some(c) => seconds(c.deadline_us.saturating_sub(now) / MS_US),
                            None => "not counted".into(),
                        };
                        format!("{lease} ({}): {count}", name(nodes, l.owner))
                    })
                    .collect();
                vec![
                    name(nodes, *id),
                    format!("{} · applied to {}", r.role.label(), r.last_applied.0),
                    store.revision.to_string(),
                    if line.is_empty() {
                        "—".into()
                    } else {
                        line.join(", ")
                    },
                    if leases.is_empty() {
                        "—".into()
                    } else {
                        leases.join(", ")
                    },
                ]
            })
            .collect();
        TableView {
            title: format!(
                "keys under {}/ on each server (first created holds; only the leader counts leases)",
                self.prefix
            ),
            columns: columns(&[
                "server",
                "role",
                "store revision",
                "in line (create revision)",
                "leases (time left)",
            ]),
            rows,
        }
    }

    /// What each worker believes it holds, against what the cluster has committed.
    fn workers_table(&self, nodes: &Nodes<'_>) -> TableView {
        let live = self.live_grants();
        let rows = self
            .workers
            .iter()
            .map(|id| match nodes.live::<EtcdWorker>(*id) {
                Some(w) => {
                    let held = w.held.filter(|_| w.believes_it_holds());
                    vec![
                        name(nodes, *id),
                        if held.is_some() { "yes".into() } else { "no".into() },
                        held.map_or("—".into(), |h| h.revision.to_string()),
                        held.map_or("—".into(), |h| {
                            if live.contains(&FencingToken(h.revision)) {
                                "yes".into()
                            } else {
                                "no — ended".into()
                            }
                        }),
                        w.doing_via(|id| nodes.name(id)),
                    ]
                }
                None => down_worker_row(nodes.name(*id), 2),
            })
            .collect();
        TableView {
            title: "what each worker believes".into(),
            columns: columns(&[
                "worker",
                "holds it?",
                "token (create revision)",
                "still valid in the cluster?",
                "doing",
            ]),
            rows,
        }
    }

    /// The first grant outlived the crash of the server that made it if a server other than
    /// that one ends the run with the grant in its applied history.
    fn first_grant_survived(&self, nodes: &Nodes<'_>) -> bool {
        let Some(f) = self.grants.grants.first() else {
            return false;
        };
        self.live_servers(nodes)
            .iter()
            .filter(|(id, _)| *id != f.granted_by)
            .any(|(_, r)| {
                r.locks.history.iter().any(|e| {
                    matches!(e, LockEvent::Granted { revision, owner, .. } if *revision == f.token.0 && *owner == f.worker)
                })
            })
    }
}

impl World for ConsensusWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        let mut specs: Vec<PropertySpec> = LOCK_PROPERTIES.iter().map(|p| p.spec()).collect();
        specs.extend(self.raft.properties());
        specs
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.raft_verdicts.clear();
        self.raft
            .evaluate_view(&LockServers(nodes), &mut self.raft_verdicts);
        self.observe_history(nodes);
        let holders = self.live_grants().len() as u32;
        let believers = self.believers(nodes).len() as u32;
        self.holders.observe(holders, believers, nodes.now_us);
        for p in LOCK_PROPERTIES {
            out.push(match p {
                LockProperty::OneHolderPerStore => holders <= 1,
                LockProperty::TokensIncrease => self.grants.tokens_ok,
                LockProperty::FenceMonotonic => fence_monotonic(ledger_row(nodes, self.ledger)),
                LockProperty::OneWakeupPerRelease => true,
            });
        }
        out.extend_from_slice(&self.raft_verdicts);
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        // Asked at every step of a run (the timeline marks the warning without snapshots):
        // count before collecting anything.
        let believing = |id: &NodeId| {
            nodes
                .live::<EtcdWorker>(*id)
                .is_some_and(|w| w.believes_it_holds())
        };
        if self.workers.iter().filter(|id| believing(id)).count() >= 2 {
            let believers = self.believers(nodes);
            let live = self.live_grants();
            let (current, stale): (Vec<_>, Vec<_>) = believers
                .iter()
                .partition(|(_, w)| w.held.is_some_and(|h| live.contains(&FencingToken(h.revision))));
            let rev = |w: &EtcdWorker| w.held.map(|h| h.revision).unwrap_or(0);
            if let (Some((now_id, now)), Some((zombie_id, zombie))) = (current.first(), stale.first()) {
                return Some(format!(
                    "{} still acts on revision {}, but the cluster has revoked its lease and deleted its key; {} holds with revision {} now — only the ledger's check on the revision keeps them apart",
                    nodes.name(*zombie_id),
                    rev(zombie),
                    nodes.name(*now_id),
                    rev(now)
                ));
            }
            let who: Vec<&str> = believers.iter().map(|(id, _)| nodes.name(*id)).collect();
            return Some(format!(
                "{} each believe they hold {}",
                who.join(" and "),
                self.prefix
            ));
        }
        (!self.has_leader(nodes)).then(|| {
            "No leader: no lease can be granted, kept alive or revoked, and no key put, until the servers elect one".to_string()
        })
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        runner_holdings::<EtcdMutex>(nodes, self.workers.iter().copied(), self.granted_to(nodes))
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let mut tables = vec![
            self.servers_table(nodes),
            self.workers_table(nodes),
            self.grants.table(nodes),
        ];
        tables.extend(ledger_tables(nodes, self.ledger));
        tables.extend(self.raft.tables_view(&LockServers(nodes)));
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, Value> {
        let mut out = self.raft.outcome_view(&LockServers(nodes));
        self.holders.insert_outcome(&mut out, nodes.now_us);
        out.insert("grants".into(), self.grants.json(nodes));
        out.insert("grants_made".into(), json!(self.grants.grants.len()));
        // The store's revision at the end: one per change of keys, however long the log.
        let revision = self
            .live_servers(nodes)
            .iter()
            .map(|(_, s)| s.locks.revision)
            .max();
        out.insert("store_revision".into(), json!(revision));
        let g = &self.grants.grants;
        let reissued = g.iter().enumerate().any(|(i, a)| {
            g[i + 1..]
                .iter()
                .any(|b| b.token == a.token && b.worker != a.worker)
        });
        out.insert("tokens_reissued".into(), json!(reissued));
        out.insert(
            "first_grant_survived_failover".into(),
            json!(self.first_grant_survived(nodes)),
        );
        out.insert(
            "first_grant_expired".into(),
            json!(g.first().is_some_and(|f| self.expired.contains(&f.token.0))),
        );
        ledger_outcome(nodes, self.ledger, &mut out);
        if let Some(l) = ledger_row(nodes, self.ledger) {
            let first_worker = self.workers.first().copied();
            out.insert(
                "stale_write_rejected".into(),
                json!(l
                    .writes
                    .iter()
                    .any(|w| Some(w.worker) == first_worker && !w.accepted)),
            );
        }
        out
    }
}
