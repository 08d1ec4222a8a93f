//! What every Raft scenario shares: the parameters, the cluster builder, and [`RaftWorld`],
//! which checks the paper's safety properties after every event against the *history* of the
//! run (every leader ever seen, every entry ever committed or applied), not only the current
//! snapshot.

use super::{ChoiceOption, ParamKind, ParamSpec, Params};
use crate::kernel::engine::{Nodes, Setup, World};
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::time::MS_US;
use crate::properties::{PropertyKind, PropertySpec};
use crate::protocols::raft::{
    ClientConfig, ClientDurable, Entry, LogIndex, RaftBug, RaftClient, RaftDurable, RaftNode, RaftServer,
    Role, ServerConfig, ServerDurable, Term,
};
use crate::trace::{NodeInfo, TableView};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub fn int_param(
    key: &'static str,
    label: &'static str,
    help: &'static str,
    default: &'static str,
    min: i64,
    max: i64,
    unit: &'static str,
) -> ParamSpec {
    ParamSpec {
        key,
        label,
        help,
        default,
        kind: ParamKind::Int { min, max, unit },
    }
}

/// The cluster size, as a choice: the number of nodes must not change under a sweep that
/// draws integer parameters at random (its faults name nodes of the default layout).
pub fn servers_param(min: u32) -> ParamSpec {
    const LABELS: [&str; 7] = [
        "1 server (tolerates no failure)",
        "2 servers (tolerate no failure)",
        "3 servers (tolerate 1 failure)",
        "4 servers (tolerate 1 failure)",
        "5 servers (tolerate 2 failures)",
        "6 servers (tolerate 2 failures)",
        "7 servers (tolerate 3 failures)",
    ];
    const VALUES: [&str; 7] = ["1", "2", "3", "4", "5", "6", "7"];
    ParamSpec {
        key: "servers",
        label: "Servers",
        help: "How many Raft servers form the cluster; a majority is needed to elect and to commit.",
        default: "5",
        kind: ParamKind::Choice {
            options: (min as usize - 1..7)
                .map(|i| ChoiceOption {
                    value: VALUES[i],
                    label: LABELS[i],
                })
                .collect(),
        },
    }
}

/// The timing parameters and the planted-bug switch every Raft scenario offers.
pub fn common_params() -> Vec<ParamSpec> {
    vec![
        int_param(
            "election_timeout_ms_min",
            "Election timeout (min)",
            "Shortest wait before a follower that hears nothing stands for election.",
            "150",
            50,
            1_000,
            "ms",
        ),
        int_param(
            "election_timeout_ms_max",
            "Election timeout (max)",
            "Longest such wait; each server draws its timeout at random in between (a max below the min counts as the min).",
            "300",
            50,
            2_000,
            "ms",
        ),
        int_param(
            "heartbeat_ms",
            "Heartbeat interval",
            "How often the leader sends empty AppendEntries to hold its followers.",
            "50",
            10,
            500,
            "ms",
        ),
        ParamSpec {
            key: "bug",
            label: "Planted bug",
            help: "Break one rule of the paper on purpose, to see the safety checker catch it.",
            default: "none",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "none",
                        label: "none — Raft as in the paper",
                    },
                    ChoiceOption {
                        value: "skip-up-to-date-check",
                        label: "skip up-to-date check — vote for any candidate, whatever its log",
                    },
                    ChoiceOption {
                        value: "commit-old-term-by-count",
                        label: "commit old term by count — commit an older term's entry once a majority stores it",
                    },
                    ChoiceOption {
                        value: "forget-vote-on-restart",
                        label: "forget vote on restart — the vote is not kept across a crash",
                    },
                ],
            },
        },
    ]
}

pub fn num(params: &Params, key: &str, default: u64) -> u64 {
    params.get(key).and_then(|v| v.parse().ok()).unwrap_or(default)
}

pub fn bug(params: &Params) -> RaftBug {
    params
        .get("bug")
        .and_then(|b| RaftBug::parse(b))
        .unwrap_or(RaftBug::None)
}

/// How a scenario wants its cluster built.
pub struct ClusterPlan {
    pub servers: u32,
    /// Client writes; 0 for no client.
    pub writes: u32,
    pub client_start_ms: u64,
    pub stop_at_ms: u64,
    /// Faults at true times (ms).
    pub scripted: Vec<(u64, Fault)>,
    /// Nodes whose side of a partition is watched for commits, and when.
    pub watch: Option<Watch>,
    /// Whether S1 boots first (a shorter first timeout), giving a predictable first leader.
    pub stagger_first: bool,
}

/// A window in which the world counts commits made by a group of servers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watch {
    pub side: Vec<NodeId>,
    pub from_us: u64,
    pub until_us: u64,
}

pub fn server_names(n: u32) -> Vec<String> {
    (0..n).map(|i| format!("S{}", i + 1)).collect()
}

pub fn build(params: &Params, plan: ClusterPlan) -> Setup<RaftWorld> {
    let n = plan.servers.clamp(1, crate::protocols::raft::MAX_SERVERS);
    let mut names = server_names(n);
    let has_client = plan.writes > 0;
    if has_client {
        names.push("client".into());
    }
    let cluster: Vec<NodeId> = (0..n).map(NodeId).collect();
    let min = num(params, "election_timeout_ms_min", 150);
    let max = num(params, "election_timeout_ms_max", 300).max(min);
    let config = ServerConfig {
        cluster: cluster.clone(),
        names: names.clone(),
        election_timeout_ms_min: min,
        election_timeout_ms_max: max,
        heartbeat_ms: num(params, "heartbeat_ms", 50),
        stop_at_ms: plan.stop_at_ms,
        bug: bug(params),
    };
    // `Input`: servers advertise `timeout` and the client `write` (`RaftNode::inputs`).
    let server_faults = vec![
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Network,
        FaultKind::Input,
    ];
    let mut nodes = Vec::new();
    for id in &cluster {
        let mut s = RaftServer::new(*id, config.clone());
        // Servers boot one after another: the first one up times out first, which gives every
        // scenario a predictable first leader to crash, cut off or freeze.
        if id.0 == 0 && plan.stagger_first {
            s.first_timeout_ms = Some((min / 2, min / 2 + 10));
        }
        nodes.push((
            NodeInfo {
                id: *id,
                name: names[id.index()].clone(),
                kind: "raft-server".into(),
                faults: server_faults.clone(),
            },
            RaftNode::Server(Box::new(s)),
            RaftDurable::Server(RaftServer::initial_durable(config.clone())),
        ));
    }
    let client = has_client.then_some(NodeId(n));
    if let Some(c) = client {
        let cc = ClientConfig {
            servers: cluster.clone(),
            names: names.clone(),
            writes: plan.writes,
            start_ms: plan.client_start_ms,
            interval_ms: 100,
            retry_ms: 150,
            stop_at_ms: plan.stop_at_ms,
        };
        nodes.push((
            NodeInfo {
                id: c,
                name: "client".into(),
                kind: "raft-client".into(),
                faults: vec![FaultKind::Network, FaultKind::Input],
            },
            RaftNode::Client(RaftClient::new(cc.clone())),
            RaftDurable::Client(ClientDurable { config: cc }),
        ));
    }
    let total = nodes.len() as u32;
    let scripted = plan
        .scripted
        .into_iter()
        .filter(|(_, f)| f.nodes().iter().all(|x| x.0 < total))
        .map(|(ms, f)| (ms * MS_US, f))
        .collect();
    Setup {
        world: RaftWorld::new(names, cluster, client, plan.watch),
        nodes,
        link: LinkConfig::reliable(MS_US, 5 * MS_US),
        scripted,
    }
}

/// The properties, in the order [`RaftWorld::evaluate`] reports them.
pub const PROPERTIES: [(&str, &str); 8] = [
    (
        "election-safety",
        "At most one leader per term, over the whole run (§5.2).",
    ),
    (
        "leader-append-only",
        "A leader never overwrites or deletes entries in its own log; it only appends (§5.3).",
    ),
    (
        "log-matching",
        "If two logs hold an entry with the same index and term, they are identical up to that index (§5.3).",
    ),
    (
        "leader-completeness",
        "Every committed entry is in the log of every leader of a later term (§5.4).",
    ),
    (
        "state-machine-safety",
        "No two servers ever apply different entries at the same index (§5.4.3).",
    ),
    (
        "terms-never-decrease",
        "No server's current term ever goes down, across crashes too.",
    ),
    (
        "one-vote-per-term",
        "No server ever votes for two candidates in the same term, across crashes too.",
    ),
    (
        "commit-needs-majority",
        "A leader's commit index never points past what a majority of servers stores.",
    ),
];

pub struct RaftWorld {
    pub names: Vec<String>,
    pub servers: Vec<NodeId>,
    pub client: Option<NodeId>,
    watch: Option<Watch>,
    /// Every leader ever seen, by term (first one seen).
    pub leaders: BTreeMap<Term, NodeId>,
    /// Whether any term ever had two leaders.
    two_leaders: bool,
    /// The log each leader had the last time we looked, by (term, leader).
    leader_logs: BTreeMap<(Term, NodeId), Vec<Entry>>,
    append_only_ok: bool,
    /// Every entry ever known committed: index → (entry, term of the committing view).
    pub committed: BTreeMap<LogIndex, (Entry, Term)>,
    /// Every entry ever applied: index → entry.
    applied: BTreeMap<LogIndex, Entry>,
    state_machine_ok: bool,
    completeness_ok: bool,
    max_term: Vec<Term>,
    terms_ok: bool,
    votes: BTreeMap<(NodeId, Term), NodeId>,
    votes_ok: bool,
    commit_majority_ok: bool,
    // Outcome counters.
    last_role: Vec<Option<Role>>,
    pub step_downs: u64,
    seen_stale: Vec<u64>,
    seen_discarded: Vec<u64>,
    pub stale_appends_rejected: u64,
    pub entries_discarded: u64,
    /// Commit index of the watched side when the window opened, and the most it reached in it.
    watch_commit: Option<(u64, u64)>,
    /// When set, the world also checks the liveness property [`CONVERGES_AFTER_HEAL`] from
    /// this time on (the moment a chaos run heals everything).
    pub converge_after_us: Option<u64>,
}

/// The liveness property a chaos run adds to the eight safety properties.
pub const CONVERGES_AFTER_HEAL: (&str, &str) = (
    "converges-after-heal",
    "Once the faults stop and every server is back, at some moment all servers follow one leader in one term and hold the same log.",
);

impl RaftWorld {
    pub fn new(
        names: Vec<String>,
        servers: Vec<NodeId>,
        client: Option<NodeId>,
        watch: Option<Watch>,
    ) -> Self {
        let n = names.len();
        RaftWorld {
            names,
            servers,
            client,
            watch,
            leaders: BTreeMap::new(),
            two_leaders: false,
            leader_logs: BTreeMap::new(),
            append_only_ok: true,
            committed: BTreeMap::new(),
            applied: BTreeMap::new(),
            state_machine_ok: true,
            completeness_ok: true,
            max_term: vec![Term(0); n],
            terms_ok: true,
            votes: BTreeMap::new(),
            votes_ok: true,
            commit_majority_ok: true,
            last_role: vec![None; n],
            step_downs: 0,
            seen_stale: vec![0; n],
            seen_discarded: vec![0; n],
            stale_appends_rejected: 0,
            entries_discarded: 0,
            watch_commit: None,
            converge_after_us: None,
        }
    }

    fn name(&self, id: NodeId) -> String {
        self.names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn durable<'a>(&self, nodes: &'a Nodes<'_, RaftNode>, id: NodeId) -> Option<&'a ServerDurable> {
        match nodes.durable.get(id.index()) {
            Some(RaftDurable::Server(d)) => Some(d),
            _ => None,
        }
    }

    fn live<'a>(&self, nodes: &'a Nodes<'_, RaftNode>, id: NodeId) -> Option<&'a RaftServer> {
        nodes
            .live
            .get(id.index())
            .and_then(|n| n.as_ref())
            .and_then(|n| n.server())
    }

    /// Live leaders with the highest term first.
    fn current_leaders<'a>(&self, nodes: &'a Nodes<'_, RaftNode>) -> Vec<&'a RaftServer> {
        let mut out: Vec<&RaftServer> = self
            .servers
            .iter()
            .filter_map(|id| self.live(nodes, *id))
            .filter(|s| s.role == Role::Leader)
            .collect();
        out.sort_by_key(|s| std::cmp::Reverse(s.term));
        out
    }

    /// Every server is up and follows the one leader in its term, with the leader's log.
    /// (Commit indexes may still differ: without a no-op entry at the start of its term, a
    /// new leader does not commit an older term's tail — which an old leader may already
    /// have committed — until a client writes again.)
    fn converged(&self, nodes: &Nodes<'_, RaftNode>) -> bool {
        let leaders = self.current_leaders(nodes);
        let [leader] = leaders.as_slice() else {
            return false;
        };
        self.servers.iter().all(|id| {
            self.live(nodes, *id).is_some_and(|s| {
                s.term == leader.term
                    && s.log == leader.log
                    && (s.id == leader.id || s.role == Role::Follower)
            })
        })
    }

    fn client_done(&self, nodes: &Nodes<'_, RaftNode>) -> u64 {
        match self
            .client
            .and_then(|c| nodes.live.get(c.index()))
            .and_then(|n| n.as_ref())
        {
            Some(RaftNode::Client(c)) => c.committed.len() as u64,
            _ => 0,
        }
    }

    fn observe(&mut self, nodes: &Nodes<'_, RaftNode>) {
        for &id in &self.servers.clone() {
            let i = id.index();
            if let Some(d) = self.durable(nodes, id) {
                if d.term < self.max_term[i] {
                    self.terms_ok = false;
                }
                self.max_term[i] = self.max_term[i].max(d.term);
                if let Some(v) = d.voted_for {
                    match self.votes.get(&(id, d.term)) {
                        Some(prev) if *prev != v => self.votes_ok = false,
                        Some(_) => {}
                        None => {
                            self.votes.insert((id, d.term), v);
                        }
                    }
                }
            }
            let Some(s) = self.live(nodes, id) else {
                self.last_role[i] = None;
                continue;
            };
            if s.term < self.max_term[i] {
                self.terms_ok = false;
            }
            if self.last_role[i] == Some(Role::Leader) && s.role != Role::Leader {
                self.step_downs += 1;
            }
            self.last_role[i] = Some(s.role);
            // Counters are volatile: add what grew since we last looked.
            if s.stale_appends_rejected < self.seen_stale[i] {
                self.seen_stale[i] = 0;
            }
            self.stale_appends_rejected += s.stale_appends_rejected - self.seen_stale[i];
            self.seen_stale[i] = s.stale_appends_rejected;
            if s.entries_discarded < self.seen_discarded[i] {
                self.seen_discarded[i] = 0;
            }
            self.entries_discarded += s.entries_discarded - self.seen_discarded[i];
            self.seen_discarded[i] = s.entries_discarded;
            if s.role == Role::Leader {
                match self.leaders.get(&s.term) {
                    Some(l) if *l != id => self.two_leaders = true,
                    Some(_) => {}
                    None => {
                        self.leaders.insert(s.term, id);
                    }
                }
                if let Some(old) = self.leader_logs.get(&(s.term, id)) {
                    if old.len() > s.log.len() || old[..] != s.log[..old.len()] {
                        self.append_only_ok = false;
                    }
                }
                self.leader_logs.insert((s.term, id), s.log.clone());
                if s.commit_index.0 > 0 {
                    let k = s.commit_index.0 as usize - 1;
                    let stored = self
                        .servers
                        .iter()
                        .filter_map(|x| self.durable(nodes, *x))
                        .filter(|d| d.log.get(k).is_some() && d.log.get(k) == s.log.get(k))
                        .count();
                    if stored < self.servers.len() / 2 + 1 {
                        self.commit_majority_ok = false;
                    }
                }
                // Leader completeness: everything committed in an earlier term is here.
                for (idx, (entry, term)) in &self.committed {
                    if *term < s.term && s.log.get(idx.0 as usize - 1) != Some(entry) {
                        self.completeness_ok = false;
                    }
                }
            }
            for k in 1..=s.commit_index.0.min(s.log.len() as u64) {
                let entry = &s.log[k as usize - 1];
                self.committed
                    .entry(LogIndex(k))
                    .or_insert_with(|| (entry.clone(), s.term));
            }
            for k in 1..=s.last_applied.0.min(s.log.len() as u64) {
                let entry = &s.log[k as usize - 1];
                match self.applied.get(&LogIndex(k)) {
                    Some(e) if e != entry => self.state_machine_ok = false,
                    Some(_) => {}
                    None => {
                        self.applied.insert(LogIndex(k), entry.clone());
                    }
                }
            }
        }
        if let Some(w) = &self.watch {
            if nodes.now_us >= w.from_us && nodes.now_us < w.until_us {
                let best = w
                    .side
                    .iter()
                    .filter_map(|id| self.live(nodes, *id))
                    .map(|s| s.commit_index.0)
                    .max()
                    .unwrap_or(0);
                let (start, most) = self.watch_commit.unwrap_or((best, best));
                self.watch_commit = Some((start, most.max(best)));
            }
        }
    }

    fn log_matching(&self, nodes: &Nodes<'_, RaftNode>) -> bool {
        let logs: Vec<&Vec<Entry>> = self
            .servers
            .iter()
            .filter_map(|id| self.durable(nodes, *id))
            .map(|d| &d.log)
            .collect();
        for (a, la) in logs.iter().enumerate() {
            for lb in logs.iter().skip(a + 1) {
                let common = la.len().min(lb.len());
                // The highest index where both hold an entry of the same term...
                if let Some(top) = (0..common).rev().find(|&k| la[k].term == lb[k].term) {
                    // ...must have identical logs up to it.
                    if la[..=top] != lb[..=top] {
                        return false;
                    }
                }
            }
        }
        true
    }
}

impl World for RaftWorld {
    type Node = RaftNode;

    fn properties(&self) -> Vec<PropertySpec> {
        let mut specs: Vec<PropertySpec> = PROPERTIES
            .iter()
            .map(|(name, description)| PropertySpec {
                name,
                kind: PropertyKind::Always,
                description,
            })
            .collect();
        if self.converge_after_us.is_some() {
            specs.push(PropertySpec {
                name: CONVERGES_AFTER_HEAL.0,
                kind: PropertyKind::Eventually,
                description: CONVERGES_AFTER_HEAL.1,
            });
        }
        specs
    }

    fn evaluate(&mut self, nodes: &Nodes<'_, RaftNode>, out: &mut Vec<bool>) {
        self.observe(nodes);
        out.push(!self.two_leaders);
        out.push(self.append_only_ok);
        out.push(self.log_matching(nodes));
        out.push(self.completeness_ok);
        out.push(self.state_machine_ok);
        out.push(self.terms_ok);
        out.push(self.votes_ok);
        out.push(self.commit_majority_ok);
        if let Some(from_us) = self.converge_after_us {
            out.push(nodes.now_us >= from_us && self.converged(nodes));
        }
    }

    fn highlight(&self, nodes: &Nodes<'_, RaftNode>) -> Option<String> {
        let leaders = self.current_leaders(nodes);
        match leaders.as_slice() {
            [] => Some("No leader: the cluster cannot take writes right now".into()),
            [_] => None,
            many => {
                let who: Vec<String> = many
                    .iter()
                    .map(|s| format!("{} (term {})", self.name(s.id), s.term))
                    .collect();
                Some(format!(
                    "Two servers believe they lead: {} — only the one with the newest term can commit",
                    who.join(" and ")
                ))
            }
        }
    }

    fn tables(&self, nodes: &Nodes<'_, RaftNode>) -> Vec<TableView> {
        let mut tables = Vec::new();
        let mut rows = Vec::new();
        for &id in &self.servers {
            let row = match (self.live(nodes, id), self.durable(nodes, id)) {
                (Some(s), _) => vec![
                    self.name(id),
                    s.role.label().to_string(),
                    s.term.0.to_string(),
                    s.voted_for.map(|v| self.name(v)).unwrap_or_else(|| "—".into()),
                    s.log.len().to_string(),
                    s.commit_index.0.to_string(),
                    s.last_applied.0.to_string(),
                ],
                (None, Some(d)) => vec![
                    self.name(id),
                    "DOWN".into(),
                    d.term.0.to_string(),
                    d.voted_for.map(|v| self.name(v)).unwrap_or_else(|| "—".into()),
                    d.log.len().to_string(),
                    "—".into(),
                    "—".into(),
                ],
                (None, None) => continue,
            };
            rows.push(row);
        }
        tables.push(TableView {
            title: "Servers".into(),
            columns: [
                "server",
                "role",
                "term",
                "voted for",
                "log length",
                "commit index",
                "last applied",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        });
        let mut log_rows = Vec::new();
        for &id in &self.servers {
            let Some(d) = self.durable(nodes, id) else {
                continue;
            };
            let commit = self.live(nodes, id).map_or(0, |s| s.commit_index.0);
            for (k, e) in d.log.iter().enumerate() {
                let index = k as u64 + 1;
                log_rows.push(vec![
                    self.name(id),
                    index.to_string(),
                    e.term.0.to_string(),
                    e.command.to_string(),
                    if index <= commit {
                        "✓ committed".into()
                    } else {
                        "… not committed".into()
                    },
                ]);
            }
        }
        tables.push(TableView {
            title: "Logs".into(),
            columns: ["server", "index", "term", "command", "status"]
                .map(String::from)
                .to_vec(),
            rows: log_rows,
        });
        if let Some(leader) = self.current_leaders(nodes).first() {
            let rows = leader
                .next_index
                .iter()
                .map(|(f, next)| {
                    vec![
                        self.name(*f),
                        next.0.to_string(),
                        leader.match_index.get(f).map_or(0, |m| m.0).to_string(),
                    ]
                })
                .collect();
            tables.push(TableView {
                title: format!(
                    "Leader {}'s progress (term {})",
                    self.name(leader.id),
                    leader.term
                ),
                columns: ["follower", "next index", "match index"]
                    .map(String::from)
                    .to_vec(),
                rows,
            });
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_, RaftNode>) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        let leaders: Vec<Value> = self
            .leaders
            .iter()
            .map(|(t, l)| json!({"term": t.0, "leader": self.name(*l)}))
            .collect();
        out.insert("leaders".into(), Value::Array(leaders));
        out.insert(
            "first_leader".into(),
            self.leaders
                .values()
                .next()
                .map_or(Value::Null, |l| json!(self.name(*l))),
        );
        let final_leader = self.current_leaders(nodes).first().map(|s| (s.id, s.term));
        out.insert(
            "final_leader".into(),
            final_leader.map_or(Value::Null, |(l, _)| json!(self.name(l))),
        );
        out.insert(
            "final_leader_term".into(),
            final_leader.map_or(Value::Null, |(_, t)| json!(t.0)),
        );
        out.insert("committed_entries".into(), json!(self.committed.len()));
        out.insert("step_downs".into(), json!(self.step_downs));
        out.insert(
            "stale_appends_rejected".into(),
            json!(self.stale_appends_rejected),
        );
        out.insert("entries_discarded".into(), json!(self.entries_discarded));
        if self.client.is_some() {
            out.insert("writes_committed".into(), json!(self.client_done(nodes)));
        }
        if let Some((start, most)) = self.watch_commit {
            out.insert("watched_side_commits".into(), json!(most - start));
        }
        // Whether every server ends with the same log (all are up and caught up).
        let logs: Vec<Option<&Vec<Entry>>> = self
            .servers
            .iter()
            .map(|id| self.live(nodes, *id).map(|s| &s.log))
            .collect();
        let converged = logs.iter().all(|l| l.is_some() && *l == logs[0]);
        out.insert("logs_converged".into(), json!(converged));
        let terms: Vec<Value> = self
            .servers
            .iter()
            .map(|id| self.durable(nodes, *id).map_or(Value::Null, |d| json!(d.term.0)))
            .collect();
        out.insert("final_terms".into(), Value::Array(terms));
        let roles: Vec<Value> = self
            .servers
            .iter()
            .map(|id| {
                self.live(nodes, *id)
                    .map_or(json!("DOWN"), |s| json!(s.role.label()))
            })
            .collect();
        out.insert("final_roles".into(), Value::Array(roles));
        out
    }
}

/// Narration a scenario's own world adds to steps, as (step, sentence). The engine owns the
/// world until the run ends, so the world writes here and the scenario moves the sentences
/// into the trace's entries afterwards with [`WorldNotes::apply`].
#[derive(Clone, Debug, Default)]
pub struct WorldNotes(std::rc::Rc<std::cell::RefCell<Vec<(u32, String)>>>);

impl WorldNotes {
    pub fn push(&self, step: u32, text: String) {
        self.0.borrow_mut().push((step, text));
    }

    /// Appends every sentence to the notes of its step (a run kept without entries keeps none).
    pub fn apply(&self, trace: &mut crate::trace::Trace) {
        for (step, text) in self.0.borrow_mut().drain(..) {
            if let Some(e) = trace.entries.get_mut(step as usize).filter(|e| e.seq == step) {
                e.notes.push(text);
            }
        }
    }
}
