//! [`RaftWorld`]: the paper's safety properties, checked after every event against the
//! *history* of the run (every leader ever seen, every entry ever committed or applied), not
//! only the current snapshot; plus the tables and outcome every Raft scenario shows.
//!
//! The world reads the servers through [`RaftView`]. A run whose servers are plain
//! [`RaftServer`] nodes is read straight from its [`Nodes`]; a participant that hosts a Raft
//! server (the consensus lock's) can offer the same view of its nodes and reuse every check.

use super::raft_common::Watch;
use super::raft_log_checks::{Checked, LeaderSeen};
use crate::json;
use crate::kernel::collections::{sort_by_key, VecMap, VecSet};
use crate::kernel::ids::NodeId;
use crate::kernel::world::{Nodes, World};
use crate::properties::Verdict;
use crate::properties::{PropertyKind, PropertySpec};
use crate::protocols::raft::{Entry, LogIndex, RaftBug, RaftClient, RaftServer, Role, ServerDurable, Term};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

/// The Raft servers (and the client) of a run, as [`RaftWorld`] reads them.
pub trait RaftView {
    /// Server `id`'s live state, if it is up.
    fn server(&self, id: NodeId) -> Option<&RaftServer>;
    /// What server `id` last persisted.
    fn durable(&self, id: NodeId) -> Option<&ServerDurable>;
    fn name(&self, id: NodeId) -> &str;
    /// True simulated time now.
    fn now_us(&self) -> u64;
    /// The client at `id`, if there is one and it is up.
    fn client(&self, _id: NodeId) -> Option<&RaftClient> {
        None
    }
}

impl RaftView for Nodes<'_> {
    fn server(&self, id: NodeId) -> Option<&RaftServer> {
        self.live::<RaftServer>(id)
    }
    fn durable(&self, id: NodeId) -> Option<&ServerDurable> {
        Nodes::durable::<RaftServer>(self, id)
    }
    fn name(&self, id: NodeId) -> &str {
        Nodes::name(self, id)
    }
    fn now_us(&self) -> u64 {
        self.now_us
    }
    fn client(&self, id: NodeId) -> Option<&RaftClient> {
        self.live::<RaftClient>(id)
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

/// What a run promises about the safety properties: every one holds on a correct server; with
/// a planted bug, the ones the bug cannot break still hold (whether the others break depends
/// on the faults the run meets).
pub fn promised_verdicts(bug: RaftBug) -> Vec<(String, Verdict)> {
    let untouched: &[&str] = match bug {
        RaftBug::None => &[],
        // A stale candidate can win and overwrite committed entries; votes and terms are sound.
        RaftBug::SkipUpToDateCheck => &[
            "election-safety",
            "leader-append-only",
            "log-matching",
            "terms-never-decrease",
            "one-vote-per-term",
        ],
        // Counting replicas of an old term's entry commits it too early (Figure 8); elections
        // and replication are sound.
        RaftBug::CommitOldTermByCount => &[
            "election-safety",
            "leader-append-only",
            "log-matching",
            "terms-never-decrease",
            "one-vote-per-term",
            "commit-needs-majority",
        ],
        // A second vote in one term can make two leaders of that term, who may then write
        // different entries at one index.
        RaftBug::ForgetVoteOnRestart => &["leader-append-only", "terms-never-decrease"],
    };
    PROPERTIES
        .iter()
        .filter(|(name, _)| bug == RaftBug::None || untouched.contains(name))
        .map(|(name, _)| (name.to_string(), Verdict::Holds))
        .collect()
}

/// The liveness property a chaos run adds to the eight safety properties.
pub const CONVERGES_AFTER_HEAL: (&str, &str) = (
    "converges-after-heal",
    "Once the faults stop and every server is back, at some moment all servers follow one leader in one term and hold the same log.",
);

pub struct RaftWorld {
    pub servers: Vec<NodeId>,
    pub client: Option<NodeId>,
    watch: Option<Watch>,
    /// Every (term, leader) pair ever seen, by term and then server: a term with two breaks
    /// election safety.
    pub leaders: VecSet<(Term, NodeId)>,
    /// Whether any term ever had two leaders.
    two_leaders: bool,
    /// The log each leader had the last time we looked, by (term, leader), and how much of
    /// the committed history it was checked against.
    leader_logs: VecMap<(Term, NodeId), LeaderSeen>,
    append_only_ok: bool,
    /// Every entry ever known committed: index → (entry, term of the committing view).
    pub committed: VecMap<LogIndex, (Entry, Term)>,
    /// Every entry ever applied: index → entry.
    applied: VecMap<LogIndex, Entry>,
    /// How much of each server's live log (by node index) was checked against `applied`.
    applied_checked: Vec<Checked>,
    /// How long a prefix two servers' persisted logs were found to share, by
    /// `a * servers + b` over positions in `servers` (a < b).
    matching_checked: Vec<Checked<(u64, u64)>>,
    /// How much of each server's live log (by node index) was found equal to a leader's, with
    /// that leader and both cut counts (for [`CONVERGES_AFTER_HEAL`]).
    same_as_leader: Vec<Checked<(u32, u64, u64)>>,
    state_machine_ok: bool,
    completeness_ok: bool,
    max_term: Vec<Term>,
    terms_ok: bool,
    votes: VecMap<(NodeId, Term), NodeId>,
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
    /// Outcome fields a scenario derives from the shared ones (e.g. whether the old leader
    /// stepped down), added once they are all in.
    pub derive_outcome: Option<fn(&mut BTreeMap<String, Value>)>,
    /// A server that booted before the others (its first timeout is short): explained once,
    /// when it starts.
    pub early_boot: Option<NodeId>,
    /// Whether to say what a restarted server brings back from disk.
    pub narrate_restarts: bool,
    /// Whether each server was up at the last step (None: not seen up yet).
    was_up: Vec<Option<bool>>,
    /// Narration for the step just evaluated.
    notes: Vec<String>,
}

impl RaftWorld {
    pub fn new(servers: Vec<NodeId>, client: Option<NodeId>, watch: Option<Watch>) -> Self {
        // Per-node bookkeeping, indexed by id: servers come first, then anyone else.
        let n = servers.iter().map(|s| s.index() + 1).max().unwrap_or(0);
        RaftWorld {
            servers,
            client,
            watch,
            leaders: VecSet::new(),
            two_leaders: false,
            leader_logs: VecMap::new(),
            append_only_ok: true,
            committed: VecMap::new(),
            applied: VecMap::new(),
            applied_checked: vec![Checked::default(); n],
            matching_checked: Vec::new(),
            same_as_leader: vec![Checked::default(); n],
            state_machine_ok: true,
            completeness_ok: true,
            max_term: vec![Term(0); n],
            terms_ok: true,
            votes: VecMap::new(),
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
            derive_outcome: None,
            early_boot: None,
            narrate_restarts: false,
            was_up: vec![None; n],
            notes: Vec::new(),
        }
    }

    /// The world's own narration: why the early server times out first, and what a restarted
    /// server brings back from disk.
    fn narrate<V: RaftView + ?Sized>(&mut self, view: &V) {
        if let Some(id) = self.early_boot {
            if let Some(s) = view.server(id).filter(|s| s.election_deadline_us.is_some()) {
                self.early_boot = None;
                self.notes.push(format!(
                    "{me} booted before the others: as they start, its first election timer has only {} left, while each of theirs runs a full {}–{} ms. So {me} times out first and stands for election alone.",
                    ms(s.election_timeout_us),
                    s.config.election_timeout_ms_min,
                    s.config.election_timeout_ms_max.max(s.config.election_timeout_ms_min),
                    me = view.name(id)
                ));
            }
        }
        for &id in &self.servers {
            let up = view.server(id);
            let was = self.was_up[id.index()];
            if self.narrate_restarts && was == Some(false) {
                if let Some(s) = up.filter(|s| s.forgotten_vote.is_none()) {
                    self.notes.push(format!(
                        "{} comes back with what it wrote to disk: term {}, its vote in that term ({}) and {} log entr{}. A Raft server writes its term and vote to disk before it replies to anyone, so after a crash it never goes back a term and never votes twice in one.",
                        view.name(id),
                        s.term,
                        match s.voted_for {
                            None => "none",
                            Some(v) if v == id => "for itself",
                            Some(v) => view.name(v),
                        },
                        s.log.len(),
                        if s.log.len() == 1 { "y" } else { "ies" }
                    ));
                }
            }
            if up.is_some() || was.is_some() {
                self.was_up[id.index()] = Some(up.is_some());
            }
        }
    }

    /// Live leaders with the highest term first.
    fn current_leaders<'a, V: RaftView + ?Sized>(&self, view: &'a V) -> Vec<&'a RaftServer> {
        let mut out: Vec<&RaftServer> = self
            .servers
            .iter()
            .filter_map(|id| view.server(*id))
            .filter(|s| s.role == Role::Leader)
            .collect();
        sort_by_key(&mut out, |s| std::cmp::Reverse(s.term));
        out
    }

    /// Every server is up and follows the one leader in its term, with the leader's log.
    /// (Commit indexes may still differ: without a no-op entry at the start of its term, a
    /// new leader does not commit an older term's tail — which an old leader may already
    /// have committed — until a client writes again.)
    fn converged<V: RaftView + ?Sized>(&mut self, view: &V) -> bool {
        let leaders = self.current_leaders(view);
        let [leader] = leaders.as_slice() else {
            return false;
        };
        let checked = &mut self.same_as_leader;
        self.servers.iter().all(|id| {
            view.server(*id).is_some_and(|s| {
                s.term == leader.term
                    && s.log.len() == leader.log.len()
                    && {
                        // The prefix found equal to this leader's log before still is, unless
                        // either log was cut back since.
                        let same = &mut checked[id.index()];
                        let from = same.resume((leader.id.0, leader.log_cuts, s.log_cuts));
                        let equal = s.log[from..] == leader.log[from..];
                        if equal {
                            same.reach(s.log.len());
                        }
                        equal
                    }
                    && (s.id == leader.id || s.role == Role::Follower)
            })
        })
    }

    fn observe<V: RaftView + ?Sized>(&mut self, view: &V) {
        for &id in &self.servers.clone() {
            let i = id.index();
            if let Some(d) = view.durable(id) {
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
            let Some(s) = view.server(id) else {
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
                self.observe_leader(view, id, s);
            }
            // `committed` always holds indexes 1..=len (each server adds from 1 up), so only
            // indexes past it can be new.
            for k in self.committed.len() as u64 + 1..=s.commit_index.0.min(s.log.len() as u64) {
                let entry = &s.log[k as usize - 1];
                self.committed
                    .get_or_insert_with(LogIndex(k), || (entry.clone(), s.term));
            }
            // Entries already checked against `applied` are still there unless the log was cut
            // back since; `applied` itself never changes an index once set.
            let applied_upto = s.last_applied.0.min(s.log.len() as u64) as usize;
            let from = self.applied_checked[i].resume(s.log_cuts);
            for k in from + 1..=applied_upto {
                let entry = &s.log[k - 1];
                match self.applied.get(&LogIndex(k as u64)) {
                    Some(e) if e != entry => self.state_machine_ok = false,
                    Some(_) => {}
                    None => {
                        self.applied.insert(LogIndex(k as u64), entry.clone());
                    }
                }
            }
            self.applied_checked[i].reach(applied_upto);
        }
        if let Some(w) = &self.watch {
            let now_us = view.now_us();
            if now_us >= w.from_us && now_us < w.until_us {
                let best = w
                    .side
                    .iter()
                    .filter_map(|id| view.server(*id))
                    .map(|s| s.commit_index.0)
                    .max()
                    .unwrap_or(0);
                let (start, most) = self.watch_commit.unwrap_or((best, best));
                self.watch_commit = Some((start, most.max(best)));
            }
        }
    }

    /// The checks that concern a live leader: one per term, append-only, its commit index
    /// backed by a majority, and every earlier committed entry in its log.
    fn observe_leader<V: RaftView + ?Sized>(&mut self, view: &V, id: NodeId, s: &RaftServer) {
        if !self.leaders.contains(&(s.term, id)) {
            if let Some((_, l)) = self.leaders.iter().find(|(t, _)| *t == s.term) {
                if !self.two_leaders {
                    self.notes.push(format!(
                        "{} leads term {}, which {} already leads: two leaders in one term. Election safety (§5.2) is broken.",
                        view.name(id),
                        s.term,
                        view.name(*l)
                    ));
                }
                self.two_leaders = true;
            }
            self.leaders.insert((s.term, id));
        }
        let seen = self
            .leader_logs
            .get_or_insert_with((s.term, id), || LeaderSeen::new(&s.log, s.log_cuts));
        if !seen.follow(&s.log, s.log_cuts) {
            self.append_only_ok = false;
        }
        if s.commit_index.0 > 0 {
            let k = s.commit_index.0 as usize - 1;
            let stored = self
                .servers
                .iter()
                .filter_map(|x| view.durable(*x))
                .filter(|d| d.log.get(k).is_some() && d.log.get(k) == s.log.get(k))
                .count();
            if stored < self.servers.len() / 2 + 1 {
                self.commit_majority_ok = false;
            }
        }
        // Leader completeness: everything committed in an earlier term is here. Once broken it
        // stays broken, and entries this leader was already checked for are still in its log
        // (`seen` starts over when the log is cut back).
        if !self.completeness_ok {
            return;
        }
        let Some(seen) = self.leader_logs.get_mut(&(s.term, id)) else {
            return;
        };
        let missing: Vec<String> = self
            .committed
            .iter()
            .skip(seen.committed_checked)
            .filter(|(idx, (entry, term))| *term < s.term && s.log.get(idx.0 as usize - 1) != Some(entry))
            .map(|(idx, _)| idx.to_string())
            .collect();
        seen.committed_checked = self.committed.len();
        if !missing.is_empty() {
            self.completeness_ok = false;
            self.notes.push(format!(
                "{} leads term {} without {}, committed before its term: leader completeness (§5.4) is broken.",
                view.name(id),
                s.term,
                and_list(&missing)
            ));
        }
    }

    fn log_matching<V: RaftView + ?Sized>(&mut self, view: &V) -> bool {
        let n = self.servers.len();
        self.matching_checked.resize(n * n, Checked::default());
        for a in 0..n {
            let Some(da) = view.durable(self.servers[a]) else {
                continue;
            };
            for b in a + 1..n {
                let Some(db) = view.durable(self.servers[b]) else {
                    continue;
                };
                let (la, lb) = (&da.log, &db.log);
                let common = la.len().min(lb.len());
                // The highest index where both hold an entry of the same term...
                if let Some(top) = (0..common).rev().find(|&k| la[k].term == lb[k].term) {
                    // ...must have identical logs up to it. The prefix found identical before
                    // still is, unless either log was cut back since.
                    let pair = &mut self.matching_checked[a * n + b];
                    let from = pair.resume((da.log_cuts, db.log_cuts)).min(top + 1);
                    if la[from..=top] != lb[from..=top] {
                        return false;
                    }
                    pair.reach(top + 1);
                }
            }
        }
        true
    }

    /// [`World::evaluate`] on any view of the servers.
    pub fn evaluate_view<V: RaftView + ?Sized>(&mut self, view: &V, out: &mut Vec<bool>) {
        self.observe(view);
        out.push(!self.two_leaders);
        out.push(self.append_only_ok);
        out.push(self.log_matching(view));
        out.push(self.completeness_ok);
        out.push(self.state_machine_ok);
        out.push(self.terms_ok);
        out.push(self.votes_ok);
        out.push(self.commit_majority_ok);
        if let Some(from_us) = self.converge_after_us {
            out.push(view.now_us() >= from_us && self.converged(view));
        }
    }

    /// [`World::highlight`] on any view of the servers.
    pub fn highlight_view<V: RaftView + ?Sized>(&self, view: &V) -> Option<String> {
        let leaders = self.current_leaders(view);
        match leaders.as_slice() {
            [] => Some("No leader: the cluster cannot take writes right now".into()),
            [_] => None,
            many => {
                let who: Vec<String> = many
                    .iter()
                    .map(|s| format!("{} (term {})", view.name(s.id), s.term))
                    .collect();
                Some(format!(
                    "Two servers believe they lead: {} — only the one with the newest term can commit",
                    who.join(" and ")
                ))
            }
        }
    }

    /// [`World::tables`] on any view of the servers.
    pub fn tables_view<V: RaftView + ?Sized>(&self, view: &V) -> Vec<TableView> {
        let name = |id: NodeId| view.name(id).to_string();
        let vote = |v: Option<NodeId>| v.map_or("—".into(), name);
        let mut tables = Vec::new();
        let mut rows = Vec::new();
        for &id in &self.servers {
            let row = match (view.server(id), view.durable(id)) {
                (Some(s), _) => vec![
                    name(id),
                    s.role.label().to_string(),
                    s.term.0.to_string(),
                    vote(s.voted_for),
                    s.log.len().to_string(),
                    s.commit_index.0.to_string(),
                    s.last_applied.0.to_string(),
                ],
                (None, Some(d)) => vec![
                    name(id),
                    "DOWN".into(),
                    d.term.0.to_string(),
                    vote(d.voted_for),
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
            columns: columns(&[
                "server",
                "role",
                "term",
                "voted for",
                "log length",
                "commit index",
                "last applied",
            ]),
            rows,
        });
        let mut log_rows = Vec::new();
        for &id in &self.servers {
            let Some(d) = view.durable(id) else {
                continue;
            };
            let commit = view.server(id).map_or(0, |s| s.commit_index.0);
            for (k, e) in d.log.iter().enumerate() {
                let index = k as u64 + 1;
                log_rows.push(vec![
                    name(id),
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
            columns: columns(&["server", "index", "term", "command", "status"]),
            rows: log_rows,
        });
        if let Some(leader) = self.current_leaders(view).first() {
            let rows = leader
                .next_index
                .iter()
                .map(|(f, next)| {
                    vec![
                        name(*f),
                        next.0.to_string(),
                        leader.match_index.get(f).map_or(0, |m| m.0).to_string(),
                    ]
                })
                .collect();
            tables.push(TableView {
                title: format!("Leader {}'s progress (term {})", name(leader.id), leader.term),
                columns: columns(&["follower", "next index", "match index"]),
                rows,
            });
        }
        tables
    }

    /// [`World::outcome`] on any view of the servers.
    pub fn outcome_view<V: RaftView + ?Sized>(&self, view: &V) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        let leaders: Vec<Value> = self
            .leaders
            .iter()
            .map(|(t, l)| json!({"term": t.0, "leader": view.name(*l)}))
            .collect();
        out.insert("leaders".into(), Value::Array(leaders));
        out.insert(
            "first_leader".into(),
            self.leaders
                .first()
                .map_or(Value::Null, |(_, l)| json!(view.name(*l))),
        );
        let final_leader = self.current_leaders(view).first().map(|s| (s.id, s.term));
        out.insert(
            "final_leader".into(),
            final_leader.map_or(Value::Null, |(l, _)| json!(view.name(l))),
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
        if let Some(c) = self.client {
            let done = view.client(c).map_or(0, |c| c.committed.len() as u64);
            out.insert("writes_committed".into(), json!(done));
        }
        if let Some((start, most)) = self.watch_commit {
            out.insert("watched_side_commits".into(), json!(most - start));
        }
        // Whether every server ends with the same log (all are up and caught up).
        let logs: Vec<Option<&Vec<Entry>>> = self
            .servers
            .iter()
            .map(|id| view.server(*id).map(|s| &s.log))
            .collect();
        let converged = logs.iter().all(|l| l.is_some() && *l == logs[0]);
        out.insert("logs_converged".into(), json!(converged));
        let terms: Vec<Value> = self
            .servers
            .iter()
            .map(|id| view.durable(*id).map_or(Value::Null, |d| json!(d.term.0)))
            .collect();
        out.insert("final_terms".into(), Value::Array(terms));
        let roles: Vec<Value> = self
            .servers
            .iter()
            .map(|id| view.server(*id).map_or(json!("DOWN"), |s| json!(s.role.label())))
            .collect();
        out.insert("final_roles".into(), Value::Array(roles));
        if let Some(derive) = self.derive_outcome {
            derive(&mut out);
        }
        out
    }
}

/// `#3`, `#3 and #4`, `#3, #4 and #5`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// `80.9 ms`.
fn ms(us: u64) -> String {
    let tenths = (us + 50) / 100;
    format!("{}.{} ms", tenths / 10, tenths % 10)
}

impl World for RaftWorld {
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

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.evaluate_view(nodes, out);
        self.narrate(nodes);
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        self.highlight_view(nodes)
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        self.tables_view(nodes)
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, Value> {
        self.outcome_view(nodes)
    }
}
