//! `raft-quorum` (curriculum §6): how many failures a Raft cluster survives. A client keeps
//! writing while servers crash one by one — followers first, from the highest number down,
//! every 0.6 s — until fewer than a majority are left. Up to that point every write commits;
//! after it none does, although the leader is still up and still takes the writes into its
//! log. Last the leader crashes too, and the survivors cannot even elect a new one.
//!
//! A cluster of N needs ⌊N/2⌋+1 servers for a majority, so it survives ⌊(N−1)/2⌋ failures:
//! an even N survives no more than N−1 would. The world shows that table with the chosen N
//! marked, and counts the writes committed at each number of failures.

use crate::json;
use crate::kernel::collections::VecMap;
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::{Nodes, World};
use crate::properties::PropertySpec;
use crate::protocols::raft::{RaftClient, RaftServer, Role, MAX_SERVERS};
use crate::scenarios::raft_common::{
    build, common_params, election_timeouts_ms, num, servers_param, usual_timing, ClusterPlan, RaftWorld,
};
use crate::scenarios::raft_common::{verdicts_if_correct, RaftCast};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

pub const ID: &str = "raft-quorum";
pub const CLIENT_START_MS: u64 = 400;
pub const FIRST_CRASH_MS: u64 = 600;
pub const CRASH_EVERY_MS: u64 = 600;
/// How long the run goes on after the last crash: long enough to see that nothing commits
/// and that no election succeeds.
pub const AFTER_LAST_CRASH_MS: u64 = 700;
/// More writes than the client can make in the run, so it never runs out.
const WRITES: u32 = 60;

/// Servers needed for a majority of `n`.
pub fn majority(n: u32) -> u32 {
    n / 2 + 1
}

/// Failures a cluster of `n` survives: ⌊(n−1)/2⌋.
pub fn tolerated(n: u32) -> u32 {
    n.saturating_sub(1) / 2
}

fn cluster_size(params: &Params) -> u32 {
    (num(params, "servers", 5) as u32).clamp(1, MAX_SERVERS)
}

/// Who crashes, in order: followers from the highest number down until the majority is
/// gone (one more than the cluster tolerates), then the first leader S1.
pub fn crash_order(servers: &[NodeId]) -> Vec<NodeId> {
    let n = servers.len() as u32;
    let s1 = servers[0];
    if n <= 1 {
        return vec![s1];
    }
    let followers = servers[1..].iter().rev().take(tolerated(n) as usize + 1);
    followers.copied().chain([s1]).collect()
}

/// How many servers [`crash_order`] crashes in a cluster of `n`.
fn crash_count(n: u32) -> u64 {
    if n <= 1 {
        1
    } else {
        u64::from(tolerated(n)) + 2
    }
}

pub fn stop_at_ms(n: u32) -> u64 {
    let crashes = crash_count(n);
    FIRST_CRASH_MS + (crashes - 1) * CRASH_EVERY_MS + AFTER_LAST_CRASH_MS
}
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Work out how many failures a cluster of N survives",
        "See writes stall once a majority is gone",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "How many crashed servers can a five-server Raft cluster survive and keep committing?",
        answers: &["1", "2", "3"],
        correct: 1,
        why: "Five servers need three for a majority, so two may be down.",
    },
};

pub fn info() -> Listing {
    let mut params = vec![servers_param(1)];
    params.extend(common_params());
    Listing {
        sections: "§6",
        title: "Raft: how many failures a quorum survives",
        summary: "S1 leads and a client writes all the time. From 0.6 s a follower crashes every 0.6 s. While a majority is up, every write commits; once one more server is down than the cluster can spare, the leader still appends the client's write but never gets enough copies, and the client waits for ever. Then the leader crashes too and nobody can be elected. A cluster of N needs ⌊N/2⌋+1 servers up to elect and commit, so it survives ⌊(N−1)/2⌋ failures: 4 servers survive 1, no more than 3 do. The player's State panel lists sizes 1 to 7 in the table \"Cluster size and failures tolerated\".",
        params,
    }
}

/// The told story holds with timing like the default (timeouts well above the heartbeat).
fn story(params: &Params) -> bool {
    usual_timing(params) && election_timeouts_ms(params, 150).0 >= 100
}

pub fn expectation(params: &Params) -> Expectation {
    let verdicts = verdicts_if_correct(params);
    let mut outcome = Vec::new();
    if story(params) {
        let n = cluster_size(params);
        outcome.push(("first_leader".to_string(), json!("S1")));
        outcome.push(("majority".to_string(), json!(majority(n))));
        outcome.push(("failures_tolerated".to_string(), json!(tolerated(n))));
        outcome.push((
            "crashes_until_writes_stopped".to_string(),
            json!(tolerated(n) + 1),
        ));
        outcome.push(("writes_committed_after_loss".to_string(), json!(0)));
        outcome.push(("client_stuck".to_string(), json!(true)));
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let n = cluster_size(params);
    let scripted = |cast: &RaftCast| {
        crash_order(&cast.servers)
            .into_iter()
            .enumerate()
            .map(|(k, node)| (FIRST_CRASH_MS + k as u64 * CRASH_EVERY_MS, Fault::Crash { node }))
            .collect()
    };
    let (mut setup, world, cast) = build(
        params,
        ClusterPlan {
            servers: n,
            writes: WRITES,
            client_start_ms: CLIENT_START_MS,
            stop_at_ms: stop_at_ms(n),
            scripted: Some(Box::new(scripted)),
            stagger_first: true,
            ..ClusterPlan::default()
        },
    );
    setup.set_world(QuorumWorld::new(world, cast.servers.clone()));
    super::raft_beats::quorum(&mut setup, &cast, n);
    setup
}

/// [`RaftWorld`]'s checks, plus the quorum arithmetic: how many servers are up against the
/// majority needed, and how many writes committed at each number of failures.
pub struct QuorumWorld {
    inner: RaftWorld,
    servers: Vec<NodeId>,
    n: u32,
    /// Narration for the step just evaluated.
    notes: Vec<String>,
    was_up: Vec<bool>,
    crashes: u32,
    /// For each write the client started, how many servers were down at that moment.
    started_with_down: VecMap<u32, u32>,
    counted: usize,
    /// Writes committed, indexed by the number of servers down when each was started.
    committed_by_down: Vec<u64>,
    told_stuck: bool,
    told_arithmetic: bool,
}

impl QuorumWorld {
    fn new(inner: RaftWorld, servers: Vec<NodeId>) -> Self {
        let n = servers.len() as u32;
        QuorumWorld {
            inner,
            servers,
            n,
            notes: Vec::new(),
            was_up: vec![true; n as usize],
            crashes: 0,
            started_with_down: VecMap::new(),
            counted: 0,
            committed_by_down: vec![0; n as usize + 1],
            told_stuck: false,
            told_arithmetic: false,
        }
    }

    fn live<'a>(&self, nodes: &Nodes<'a>, id: NodeId) -> Option<&'a RaftServer> {
        nodes.live::<RaftServer>(id)
    }

    fn client<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a RaftClient> {
        nodes.live::<RaftClient>(self.inner.client?)
    }

    fn up(&self, nodes: &Nodes<'_>) -> u32 {
        self.servers
            .iter()
            .filter(|id| self.live(nodes, **id).is_some())
            .count() as u32
    }

    fn leader<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a RaftServer> {
        self.servers
            .iter()
            .filter_map(|id| self.live(nodes, *id))
            .filter(|s| s.role == Role::Leader)
            .max_by_key(|s| s.term)
    }

    /// Bookkeeping of the client's writes against the failures at the time each started.
    fn track_writes(&mut self, nodes: &Nodes<'_>) {
        let down = self.n - self.up(nodes);
        let Some(c) = self.client(nodes) else {
            return;
        };
        if let Some(id) = c.outstanding {
            self.started_with_down.get_or_insert_with(id, || down);
        }
        for (id, _) in c.committed.iter().skip(self.counted) {
            let k = self.started_with_down.get(id).copied().unwrap_or(down);
            self.committed_by_down[k as usize] += 1;
        }
        self.counted = c.committed.len();
    }

    /// The arithmetic of this cluster, told once at the start.
    fn arithmetic(&self) -> String {
        let (n, m, f) = (self.n, majority(self.n), tolerated(self.n));
        let failures = if f == 1 { "failure" } else { "failures" };
        let servers = if n == 1 { "server needs" } else { "servers need" };
        let mut text = format!(
            "Quorum arithmetic: {n} {servers} {m} up for a majority, so the cluster survives {f} {failures} (⌊(N−1)/2⌋)."
        );
        if n % 2 == 0 {
            text.push_str(&format!(" {} servers would survive as many.", n - 1));
        }
        text
    }

    /// Narration for each crash: how many are left against the majority needed.
    fn narrate_crashes(&mut self, nodes: &Nodes<'_>) {
        let (n, m, f) = (self.n, majority(self.n), tolerated(self.n));
        for i in 0..self.servers.len() {
            let id = self.servers[i];
            let up_now = self.live(nodes, id).is_some();
            if !self.was_up[i] || up_now {
                continue;
            }
            let up = self.up(nodes);
            let name = nodes.name(id);
            let k = self.crashes;
            let is = if up == 1 { "is" } else { "are" };
            let text = if n == 1 {
                format!("{name}, the only server, is down: nothing is left to lead, store or commit a write, and the client's requests go unanswered.")
            } else if up >= m {
                format!(
                    "{name} is down ({k} down so far; a {n}-server cluster can lose {f}). {up} of {n} servers are up and a majority is {m}, so the cluster still elects and commits."
                )
            } else if up + 1 >= m {
                let leader = self.leader(nodes).map(|l| {
                    format!(
                        " {} still leads and will take the client's next write into its log, but it can never gather {m} copies of it.",
                        nodes.name(l.id)
                    )
                });
                let even = if n % 2 == 0 {
                    format!(
                        " With {n} servers a majority is {m}, so {n} survive {} — no more than {}.",
                        match f {
                            0 => "no failure at all".to_string(),
                            1 => "only 1 failure".to_string(),
                            _ => format!("only {f} failures"),
                        },
                        if n == 2 {
                            "a single server does".to_string()
                        } else {
                            format!("{} servers do", n - 1)
                        }
                    )
                } else {
                    String::new()
                };
                format!(
                    "{name} is down ({k} down, one more than a {n}-server cluster can lose). Only {up} of {n} {is} up, fewer than the {m} a majority needs: from here on no write commits.{}{even}",
                    leader.unwrap_or_default()
                )
            } else {
                format!(
                    "{name} is down too: {up} of {n} up. An election needs {m} votes, so nobody can become leader; the client's requests go unanswered."
                )
            };
            self.notes.push(text);
        }
        // The first write a leader takes after the majority is gone, and why it stays put.
        let up = self.up(nodes);
        if up < m && !self.told_stuck {
            let Some(l) = self.leader(nodes).filter(|l| l.last_index() > l.commit_index) else {
                return;
            };
            let index = l.last_index();
            let Some(entry) = l.log.last() else { return };
            self.told_stuck = true;
            let text = format!(
                "{} takes {} at {index}, but only {up} of {n} servers {} up: at most {up} cop{} can exist, and a commit needs {m}. The write stays uncommitted and the client gets no answer.",
                nodes.name(l.id),
                entry.command,
                if up == 1 { "is" } else { "are" },
                if up == 1 { "y" } else { "ies" }
            );
            self.notes.push(text);
        }
    }
}

impl World for QuorumWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        self.inner.properties()
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.inner.evaluate(nodes, out);
        for (i, id) in self.servers.iter().enumerate() {
            if self.was_up[i] && self.live(nodes, *id).is_none() {
                self.crashes += 1;
            }
        }
        self.track_writes(nodes);
        if !self.told_arithmetic {
            self.told_arithmetic = true;
            let text = self.arithmetic();
            self.notes.push(text);
        }
        self.narrate_crashes(nodes);
        for i in 0..self.servers.len() {
            self.was_up[i] = self.live(nodes, self.servers[i]).is_some();
        }
    }

    fn take_notes(&mut self) -> Vec<String> {
        let mut notes = self.inner.take_notes();
        notes.append(&mut self.notes);
        notes
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        let (up, m) = (self.up(nodes), majority(self.n));
        if up < m {
            return Some(format!(
                "Only {up} of {} servers are up and {m} are needed: nothing can commit and no leader can be elected",
                self.n
            ));
        }
        self.inner.highlight(nodes)
    }

    /// Whatever the wrapped world says (it models no lock today), so a lock added to it
    /// shows here too.
    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<crate::kernel::view::Holding> {
        self.inner.holdings(nodes)
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let mut tables = self.inner.tables(nodes);
        let up = self.up(nodes);
        let m = majority(self.n);
        tables.push(TableView {
            title: "Quorum now".into(),
            columns: columns(&[
                "servers up",
                "majority needed",
                "crashed so far",
                "can elect and commit",
            ]),
            rows: vec![vec![
                format!("{up} of {}", self.n),
                m.to_string(),
                (self.n - up).to_string(),
                if up >= m { "yes" } else { "NO" }.to_string(),
            ]],
        });
        let rows = (1..=MAX_SERVERS)
            .map(|size| {
                let mut note = Vec::new();
                if size == self.n {
                    note.push("◀ this run".to_string());
                }
                if size % 2 == 0 {
                    note.push(format!("no more than {}", size - 1));
                }
                vec![
                    size.to_string(),
                    majority(size).to_string(),
                    tolerated(size).to_string(),
                    note.join(" · "),
                ]
            })
            .collect();
        tables.push(TableView {
            title: "Cluster size and failures tolerated".into(),
            columns: columns(&[
                "servers N",
                "majority ⌊N/2⌋+1",
                "failures tolerated ⌊(N−1)/2⌋",
                "",
            ]),
            rows,
        });
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, Value> {
        let mut out = self.inner.outcome(nodes);
        let f = tolerated(self.n);
        out.insert("servers".into(), json!(self.n));
        out.insert("majority".into(), json!(majority(self.n)));
        out.insert("failures_tolerated".into(), json!(f));
        out.insert("crashes".into(), json!(self.crashes));
        let by_down: Vec<u64> =
            self.committed_by_down[..=(self.crashes as usize).min(self.n as usize)].to_vec();
        out.insert("writes_committed_by_failures".into(), Value::from(by_down));
        let last = self.committed_by_down.iter().rposition(|w| *w > 0);
        out.insert(
            "crashes_until_writes_stopped".into(),
            match last {
                Some(k) if (k as u32) < self.crashes => json!(k + 1),
                _ => Value::Null,
            },
        );
        let (before, after) = self
            .committed_by_down
            .split_at((f as usize + 1).min(self.committed_by_down.len()));
        out.insert(
            "writes_committed_before_loss".into(),
            json!(before.iter().sum::<u64>()),
        );
        out.insert(
            "writes_committed_after_loss".into(),
            json!(after.iter().sum::<u64>()),
        );
        let stuck = self.client(nodes).is_some_and(|c| c.outstanding.is_some());
        out.insert("client_stuck".into(), json!(stuck));
        out
    }
}
