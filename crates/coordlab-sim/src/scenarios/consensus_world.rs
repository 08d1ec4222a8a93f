//! The participants of `consensus-lock` (three lock servers replicating with Raft, two
//! workers, the fenced ledger) and [`ConsensusWorld`]: the lock checks on top of every Raft
//! safety property of [`RaftWorld`], which it runs on a view of the servers.

use super::lock_service_common::{
    fence_monotonic, ledger_outcome, ledger_relay, ledger_tables, name, GrantLog, HolderCount, LockProperty,
};
use super::raft_common::RaftWorld;
use crate::kernel::engine::{Nodes, World};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::properties::PropertySpec;
use crate::protocols::fenced_resource::{FencedResource, ResourceDurable};
use crate::protocols::lease_msg::seconds;
use crate::protocols::lock_client::{LockClient, LockClientDurable};
use crate::protocols::lock_service::{ConsensusMsg, ConsensusTimer, LockServer};
use crate::protocols::lock_store::LockEvent;
use crate::protocols::raft::{RaftDurable, RaftNode, Role, ServerDurable};
use crate::trace::{Gauge, InputSpec, LogCell, TableView};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug)]
pub enum ConsensusNode {
    Store(Box<LockServer>),
    Worker(Box<LockClient>),
    Ledger(FencedResource),
}

#[derive(Clone, Debug)]
pub enum ConsensusDurable {
    Store(ServerDurable),
    Worker(LockClientDurable),
    Ledger(ResourceDurable, Vec<String>),
}

impl From<ServerDurable> for ConsensusDurable {
    fn from(d: ServerDurable) -> Self {
        ConsensusDurable::Store(d)
    }
}

impl From<LockClientDurable> for ConsensusDurable {
    fn from(d: LockClientDurable) -> Self {
        ConsensusDurable::Worker(d)
    }
}

impl Participant for ConsensusNode {
    type Msg = ConsensusMsg;
    type Timer = ConsensusTimer;
    type Durable = ConsensusDurable;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        match self {
            ConsensusNode::Store(s) => s.start(ctx),
            ConsensusNode::Worker(w) => w.start(ctx),
            ConsensusNode::Ledger(l) => ctx.note(format!(
                "The ledger holds account 42 at ₹{} and refuses any write whose token is below the highest it has seen.",
                l.durable.balance
            )),
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ConsensusMsg) {
        match (self, msg) {
            (ConsensusNode::Store(s), ConsensusMsg::Raft(m)) => s.message(ctx, from, m),
            (ConsensusNode::Worker(w), m) => w.message(ctx, from, m),
            (ConsensusNode::Ledger(l), ConsensusMsg::Ledger(m)) => {
                let names = l.names.clone();
                ledger_relay(l, ctx, from, m, ConsensusMsg::Ledger, |d| {
                    ConsensusDurable::Ledger(d, names.clone())
                });
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ConsensusTimer) {
        match self {
            ConsensusNode::Store(s) => s.timer(ctx, timer),
            ConsensusNode::Worker(w) => w.timer(ctx, timer),
            ConsensusNode::Ledger(_) => {}
        }
    }

    fn recover(id: NodeId, durable: &ConsensusDurable) -> Self {
        match durable {
            ConsensusDurable::Store(d) => ConsensusNode::Store(Box::new(LockServer::recover(id, d))),
            ConsensusDurable::Worker(d) => ConsensusNode::Worker(Box::new(LockClient::recover(d))),
            ConsensusDurable::Ledger(d, names) => ConsensusNode::Ledger(FencedResource {
                names: names.clone(),
                durable: d.clone(),
            }),
        }
    }

    fn summary(&self, local_now_us: u64) -> Vec<String> {
        match self {
            ConsensusNode::Store(s) => s.summary(local_now_us),
            ConsensusNode::Worker(w) => w.summary(),
            ConsensusNode::Ledger(l) => l.summary(),
        }
    }

    fn durable_summary(durable: &ConsensusDurable) -> Vec<String> {
        match durable {
            ConsensusDurable::Store(d) => RaftNode::durable_summary(&RaftDurable::Server(d.clone())),
            ConsensusDurable::Worker(d) if d.finished => vec!["down".into(), "job done".into()],
            ConsensusDurable::Worker(_) => vec!["down".into(), "job not done".into()],
            ConsensusDurable::Ledger(..) => vec!["down".into(), "state kept on disk".into()],
        }
    }

    fn inputs(&self) -> Vec<InputSpec> {
        match self {
            ConsensusNode::Store(s) => s.raft.inputs(),
            _ => Vec::new(),
        }
    }

    fn on_input(&mut self, ctx: &mut Ctx<'_, Self>, input: &str) -> Result<(), String> {
        match self {
            ConsensusNode::Store(s) => s.input(ctx, input),
            _ => Err("this node takes no input".into()),
        }
    }

    fn gauge(&self, local_now_us: u64) -> Option<Gauge> {
        match self {
            ConsensusNode::Store(s) => s.raft.gauge(local_now_us),
            _ => None,
        }
    }

    fn log_cells(&self) -> Vec<LogCell> {
        match self {
            ConsensusNode::Store(s) => s.raft.log_cells(),
            _ => Vec::new(),
        }
    }

    fn durable_log_cells(durable: &ConsensusDurable) -> Vec<LogCell> {
        match durable {
            ConsensusDurable::Store(d) => RaftNode::durable_log_cells(&RaftDurable::Server(d.clone())),
            _ => Vec::new(),
        }
    }
}

const LOCK_PROPERTIES: [LockProperty; 3] = [
    LockProperty::OneHolderPerStore,
    LockProperty::TokensIncrease,
    LockProperty::FenceMonotonic,
];

pub struct ConsensusWorld {
    pub names: Vec<String>,
    pub servers: Vec<NodeId>,
    pub workers: Vec<NodeId>,
    pub ledger: NodeId,
    pub key: String,
    pub raft: RaftWorld,
    pub grants: GrantLog,
    /// Revisions whose release or expiry some server has applied.
    pub ended: BTreeSet<u64>,
    /// Revisions that ended by the leader's expiry rather than a release.
    pub expired: BTreeSet<u64>,
    pub holders: HolderCount,
    raft_verdicts: Vec<bool>,
}

impl ConsensusWorld {
    pub fn new(
        names: Vec<String>,
        servers: Vec<NodeId>,
        workers: Vec<NodeId>,
        ledger: NodeId,
        key: &str,
    ) -> Self {
        let raft = RaftWorld::new(names.clone(), servers.clone(), None, None);
        ConsensusWorld {
            names,
            servers,
            workers,
            ledger,
            key: key.to_string(),
            raft,
            grants: GrantLog::new(),
            ended: BTreeSet::new(),
            expired: BTreeSet::new(),
            holders: HolderCount::default(),
            raft_verdicts: Vec::new(),
        }
    }

    fn store<'a>(nodes: &'a Nodes<'_, ConsensusNode>, id: NodeId) -> Option<&'a LockServer> {
        match nodes.live.get(id.index()) {
            Some(Some(ConsensusNode::Store(s))) => Some(s),
            _ => None,
        }
    }

    fn worker<'a>(nodes: &'a Nodes<'_, ConsensusNode>, id: NodeId) -> Option<&'a LockClient> {
        match nodes.live.get(id.index()) {
            Some(Some(ConsensusNode::Worker(w))) => Some(w),
            _ => None,
        }
    }

    fn ledger_row<'a>(&self, nodes: &'a Nodes<'_, ConsensusNode>) -> Option<&'a ResourceDurable> {
        match (
            &nodes.live[self.ledger.index()],
            &nodes.durable[self.ledger.index()],
        ) {
            (Some(ConsensusNode::Ledger(l)), _) => Some(&l.durable),
            (_, ConsensusDurable::Ledger(d, _)) => Some(d),
            _ => None,
        }
    }

    /// The servers as [`RaftWorld`] reads them (a copy: the Raft checks see exactly what a
    /// Raft scenario's world would see).
    fn raft_view(&self, nodes: &Nodes<'_, ConsensusNode>) -> (Vec<Option<RaftNode>>, Vec<RaftDurable>) {
        let live = self
            .servers
            .iter()
            .map(|id| Self::store(nodes, *id).map(|s| s.raft.clone()))
            .collect();
        let durable = self
            .servers
            .iter()
            .filter_map(|id| match &nodes.durable[id.index()] {
                ConsensusDurable::Store(d) => Some(RaftDurable::Server(d.clone())),
                _ => None,
            })
            .collect();
        (live, durable)
    }

    /// The current leader with the newest term, if one is up.
    fn leader<'a>(&self, nodes: &'a Nodes<'_, ConsensusNode>) -> Option<&'a LockServer> {
        self.servers
            .iter()
            .filter_map(|id| Self::store(nodes, *id))
            .filter(|s| s.server().is_some_and(|r| r.role == Role::Leader))
            .max_by_key(|s| s.server().map(|r| r.term))
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

    fn believers<'a>(&self, nodes: &'a Nodes<'_, ConsensusNode>) -> Vec<&'a LockClient> {
        self.workers
            .iter()
            .filter_map(|id| Self::worker(nodes, *id))
            .filter(|w| w.believes_it_holds())
            .collect()
    }
}

impl World for ConsensusWorld {
    type Node = ConsensusNode;

    fn properties(&self) -> Vec<PropertySpec> {
        let mut specs: Vec<PropertySpec> = LOCK_PROPERTIES.iter().map(|p| p.spec()).collect();
        specs.extend(self.raft.properties());
        specs
    }

    fn evaluate(&mut self, nodes: &Nodes<'_, ConsensusNode>, out: &mut Vec<bool>) {
        let (live, durable) = self.raft_view(nodes);
        let view = Nodes {
            live: &live,
            durable: &durable,
            local_now_us: nodes.local_now_us,
            now_us: nodes.now_us,
        };
        self.raft_verdicts.clear();
        self.raft.evaluate(&view, &mut self.raft_verdicts);
        for id in &self.servers {
            let Some(r) = Self::store(nodes, *id).and_then(|s| s.server()) else {
                continue;
            };
            for e in &r.locks.history {
                match e {
                    LockEvent::Granted { owner, revision, .. } => {
                        self.grants
                            .observe(*owner, FencingToken(*revision), *id, nodes.now_us)
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
        let holders = self.live_grants().len() as u32;
        let believers = self.believers(nodes).len() as u32;
        self.holders.observe(holders, believers, nodes.now_us);
        for p in LOCK_PROPERTIES {
            out.push(match p {
                LockProperty::OneHolderPerStore => holders <= 1,
                LockProperty::TokensIncrease => self.grants.tokens_ok,
                LockProperty::FenceMonotonic => self.ledger_row(nodes).is_none_or(fence_monotonic),
                LockProperty::OneWakeupPerRelease => true,
            });
        }
        out.extend_from_slice(&self.raft_verdicts);
    }

    fn highlight(&self, nodes: &Nodes<'_, ConsensusNode>) -> Option<String> {
        let believers = self.believers(nodes);
        if believers.len() >= 2 {
            let live = self.live_grants();
            let (current, stale): (Vec<&&LockClient>, Vec<&&LockClient>) = believers
                .iter()
                .partition(|w| w.held.is_some_and(|h| live.contains(&FencingToken(h.revision))));
            let rev = |w: &LockClient| w.held.map(|h| h.revision).unwrap_or(0);
            if let (Some(now), Some(zombie)) = (current.first(), stale.first()) {
                return Some(format!(
                    "{} still acts on revision {}, but the cluster committed its expiry; {} holds revision {} now — only the ledger's check on the revision keeps them apart",
                    zombie.name,
                    rev(zombie),
                    now.name,
                    rev(now)
                ));
            }
            let who: Vec<String> = believers.iter().map(|w| w.name.clone()).collect();
            return Some(format!(
                "{} each believe they hold {}",
                who.join(" and "),
                self.key
            ));
        }
        self.leader(nodes).is_none().then(|| {
            "No leader: nothing can be granted, renewed or expired until the servers elect one".to_string()
        })
    }

    fn tables(&self, nodes: &Nodes<'_, ConsensusNode>) -> Vec<TableView> {
        let mut tables = Vec::new();
        let mut rows = Vec::new();
        for id in &self.servers {
            let Some(s) = Self::store(nodes, *id) else {
                rows.push(vec![
                    name(&self.names, *id),
                    "down".into(),
                    "—".into(),
                    "—".into(),
                    "—".into(),
                ]);
                continue;
            };
            let Some(r) = s.server() else { continue };
            let now = nodes.local_now_us[id.index()];
            let lock = r.locks.locks.get(&self.key);
            rows.push(vec![
                name(&self.names, *id),
                format!("{} · applied to {}", r.role.label(), r.last_applied.0),
                lock.map_or("free".into(), |l| name(&self.names, l.owner)),
                lock.map_or("—".into(), |l| l.revision.to_string()),
                match (lock, s.countdowns.get(&self.key)) {
                    (Some(_), Some(c)) if c.expiring => "expiry proposed".into(),
                    (Some(_), Some(c)) => format!(
                        "{} (its own count)",
                        seconds(c.deadline_us.saturating_sub(now) / MS_US)
                    ),
                    (Some(_), None) => "not counted (only the leader counts)".into(),
                    (None, _) => "—".into(),
                },
            ]);
        }
        tables.push(TableView {
            title: format!("{} on each server (as applied from its log)", self.key),
            columns: ["server", "role", "holder", "revision", "lease left"]
                .map(String::from)
                .to_vec(),
            rows,
        });
        let live = self.live_grants();
        tables.push(TableView {
            title: "what each worker believes".into(),
            columns: [
                "worker",
                "holds it?",
                "revision",
                "still valid in the cluster?",
                "doing",
            ]
            .map(String::from)
            .to_vec(),
            rows: self
                .workers
                .iter()
                .map(|id| match Self::worker(nodes, *id) {
                    Some(w) => {
                        let held = w.held.filter(|_| w.believes_it_holds());
                        vec![
                            w.name.clone(),
                            if held.is_some() { "yes".into() } else { "no".into() },
                            held.map_or("—".into(), |h| h.revision.to_string()),
                            held.map_or("—".into(), |h| {
                                if live.contains(&FencingToken(h.revision)) {
                                    "yes".into()
                                } else {
                                    "no — ended".into()
                                }
                            }),
                            w.summary()[0].clone(),
                        ]
                    }
                    None => vec![
                        name(&self.names, *id),
                        "no".into(),
                        "—".into(),
                        "—".into(),
                        "down".into(),
                    ],
                })
                .collect(),
        });
        tables.push(self.grants.table(&self.names));
        if let Some(l) = self.ledger_row(nodes) {
            tables.extend(ledger_tables(&self.names, l));
        }
        let (live, durable) = self.raft_view(nodes);
        let view = Nodes {
            live: &live,
            durable: &durable,
            local_now_us: nodes.local_now_us,
            now_us: nodes.now_us,
        };
        tables.extend(self.raft.tables(&view));
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_, ConsensusNode>) -> BTreeMap<String, Value> {
        let (live, durable) = self.raft_view(nodes);
        let view = Nodes {
            live: &live,
            durable: &durable,
            local_now_us: nodes.local_now_us,
            now_us: nodes.now_us,
        };
        let mut out = self.raft.outcome(&view);
        self.holders.insert_outcome(&mut out, nodes.now_us);
        out.insert("grants".into(), self.grants.json(&self.names));
        out.insert("grants_made".into(), json!(self.grants.grants.len()));
        let g = &self.grants.grants;
        let reissued = g.iter().enumerate().any(|(i, a)| {
            g[i + 1..]
                .iter()
                .any(|b| b.token == a.token && b.worker != a.worker)
        });
        out.insert("tokens_reissued".into(), json!(reissued));
        // The first grant outlived the crash of the server that made it if a server other than
        // that one ends the run with the grant in its applied history.
        let first = g.first().cloned();
        let survived = first.as_ref().is_some_and(|f| {
            self.servers.iter().filter(|id| **id != f.granted_by).any(|id| {
                Self::store(nodes, *id).and_then(|s| s.server()).is_some_and(|r| {
                    r.locks.history.iter().any(|e| {
                        matches!(e, LockEvent::Granted { revision, owner, .. } if *revision == f.token.0 && *owner == f.worker)
                    })
                })
            })
        });
        out.insert("first_grant_survived_failover".into(), json!(survived));
        out.insert(
            "first_grant_expired".into(),
            json!(first.is_some_and(|f| self.expired.contains(&f.token.0))),
        );
        if let Some(l) = self.ledger_row(nodes) {
            ledger_outcome(&self.names, l, &mut out);
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
