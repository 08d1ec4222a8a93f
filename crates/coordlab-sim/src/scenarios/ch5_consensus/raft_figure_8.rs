//! `raft-figure-8` (curriculum §6): the commit rule of the Raft paper's Figure 8, played out
//! on five servers. A leader must not call an entry of an *earlier* term committed just
//! because a majority stores it: a server whose log ends in a later term can still win an
//! election and overwrite that entry. `commit_rule=count-replicas` plants exactly that
//! mistake ([`RaftBug::CommitOldTermByCount`]) and the run loses an entry it had committed and
//! applied; `current-term-only`, the paper's rule, waits until an entry of the leader's own
//! term sits on top, and then the entry is safe for good.
//!
//! [`RaftBug::CommitOldTermByCount`]: crate::protocols::raft::RaftBug::CommitOldTermByCount
//!
//! The script, in true time:
//! - 0.15 s: client A writes `x=1`; S1 (the quickest timer) leads term 1 and commits it at #1.
//! - 0.25 s: S1 reboots and wins term 2. At 0.39 s its links to S3, S4 and S5 fail, and
//!   client A's `y=2` lands at #2 on S1 and S2 only (figure (a)).
//! - 0.45 s: S1 crashes; S5 wins term 3 with S3 and S4. At 0.64 s S5's links fail too, and
//!   client B's `z=3` lands at #2 on S5 alone; at 0.68 s S5 crashes (figure (b)).
//! - 0.69 s: the network heals; 0.70 s: S1 restarts and wins term 4, copying its term-2 entry
//!   to S3 and S4 — now on a majority (figure (c)). Client C writes `x=4` at 0.98 s.
//! - S1 crashes right after it first commits #2: at 0.97 s with count-replicas (it counted #2
//!   alone), at 1.02 s with current-term-only (#2 only commits with `x=4` on top).
//! - 1.03 s: S5 restarts. With count-replicas it wins term 5 and overwrites #2 everywhere
//!   (figure (d)); with the correct rule it can never collect a majority (figure (e)).
//! - 1.6 s: S1 restarts and falls in with whoever leads.
//!
//! Each server has its own election timeout range so the right server stands first at each
//! turn (S1 about 0.1 s, S5 about 0.2 s, the others about 0.8 s). The script's timing is fixed
//! — the scenario offers no timing parameters — so a sweep's random faults land on the story
//! as written.

use crate::json;
use crate::kernel::collections::VecSet;
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::raft::{ClientConfig, Entry, LogIndex, RaftClient, RaftServer, Role, Term};
use crate::scenarios::lease_setup::choice;
use crate::scenarios::raft_common::{build, ClusterPlan, RaftCast, RaftWorld, CLIENT_FAULTS, PROPERTIES};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

pub const ID: &str = "raft-figure-8";
pub const STOP_AT_MS: u64 = 2_400;

const SERVERS: u32 = 5;
/// S1…S5, as the builder added them.
type Five = [NodeId; 5];
const MAJORITY: usize = 3;
/// The index the story is about.
const CONTESTED: LogIndex = LogIndex(2);

/// Election timeout range per server (ms). S1 always stands first when it is up, S5 next;
/// S2–S4 wait long enough never to stand while the story runs.
const TIMEOUTS_MS: [(u64, u64); 5] = [(100, 110), (800, 900), (800, 900), (800, 900), (220, 230)];

pub const S1_REBOOT_MS: u64 = 250;
pub const CUT_S1_MS: u64 = 390;
pub const S1_CRASH_MS: u64 = 450;
pub const CUT_S5_MS: u64 = 640;
pub const S5_CRASH_MS: u64 = 680;
pub const HEAL_MS: u64 = 690;
pub const S1_RESTART_MS: u64 = 700;
/// With count-replicas S1 first commits #2 as soon as S3 stores it (by about 0.95 s).
pub const S1_CRASH_COUNTED_MS: u64 = 970;
/// With current-term-only S1 first commits #2 once client C's entry is on a majority.
pub const S1_CRASH_COMMITTED_MS: u64 = 1_020;
pub const S5_RESTART_MS: u64 = 1_030;
pub const S1_BACK_MS: u64 = 1_600;

/// One scripted client: a write or two aimed at the server that leads at that moment.
struct ClientPlan {
    name: &'static str,
    /// The server it writes to, by its place: S1 is 0.
    target: usize,
    first_id: u32,
    writes: u32,
    start_ms: u64,
    /// Pause after a committed write before the next one.
    interval_ms: u64,
    /// When it would send again, measured from its last send: after the demo, so each write
    /// is made once (a retry would land the same command in the log a second time).
    retry_ms: u64,
}

const CLIENTS: [ClientPlan; 3] = [
    // `x=1` at 0.15 s, committed by about 0.17 s; `y=2` 0.245 s later, just after S1's
    // links to S3..S5 fail.
    ClientPlan {
        name: "client A",
        target: 0,
        first_id: 1,
        writes: 2,
        start_ms: 150,
        interval_ms: 245,
        retry_ms: STOP_AT_MS + 50 - 400,
    },
    ClientPlan {
        name: "client B",
        target: 4,
        first_id: 3,
        writes: 1,
        start_ms: 650,
        interval_ms: 100,
        retry_ms: STOP_AT_MS + 50 - 650,
    },
    ClientPlan {
        name: "client C",
        target: 0,
        first_id: 4,
        writes: 1,
        start_ms: 980,
        interval_ms: 100,
        retry_ms: STOP_AT_MS + 50 - 980,
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitRule {
    /// The paper's rule (§5.4.2): count copies only of entries from the leader's own term.
    CurrentTermOnly,
    /// The mistake: commit any entry a majority stores.
    CountReplicas,
}

impl CommitRule {
    pub fn parse(params: &Params) -> CommitRule {
        match params.get("commit_rule").map(String::as_str) {
            Some("count-replicas") => CommitRule::CountReplicas,
            _ => CommitRule::CurrentTermOnly,
        }
    }

    fn crash_ms(self) -> u64 {
        match self {
            CommitRule::CurrentTermOnly => S1_CRASH_COMMITTED_MS,
            CommitRule::CountReplicas => S1_CRASH_COUNTED_MS,
        }
    }
}
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See why counting copies is not enough to commit an old-term entry",
        "Understand the rule: a leader commits only entries of its own term",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "A new leader finds an old-term entry on a majority. May it mark the entry committed?",
        answers: &[
            "Yes, a majority has it",
            "Only once an entry of its own term is on a majority after it",
            "Only if every server has it",
        ],
        correct: 1,
        why: "A server with a later-term log could still win and overwrite it; committing an own-term entry closes that door.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§6",
        title: "Raft: Figure 8 — why a leader commits only its own term's entries",
        summary: "S1 leads term 2 and gets y=2 onto S2 only. S1 crashes; S5 wins term 3 and takes z=3 for the same index 2, which nobody else gets; S5 crashes. S1 comes back, wins term 4 and copies y=2 to S3: now a majority holds it. Then S1 crashes right after it first commits index 2. Counting copies, it commits y=2 at once — and S5, whose log ends in a later term, wins term 5 and overwrites it: an applied entry is lost. With the paper's rule S1 waits until its own term-4 entry x=4 is on a majority and commits both together; after that S5 can never win.",
        params: vec![choice(
            "commit_rule",
            "Commit rule",
            "When a leader may treat an entry as committed. The paper's rule counts copies only of entries from the leader's own term; counting copies of any entry is the mistake Figure 8 shows.",
            &[
                ("current-term-only", "current term only — as in the paper: older entries commit under one of the leader's own"),
                ("count-replicas", "count replicas — the bug: any entry stored on a majority counts as committed"),
            ],
        )],
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let rule = CommitRule::parse(params);
    let broken = |name: &str| {
        rule == CommitRule::CountReplicas && (name == "leader-completeness" || name == "state-machine-safety")
    };
    let verdicts = PROPERTIES
        .iter()
        .map(|(n, _)| {
            let v = if broken(n) {
                Verdict::Violated
            } else {
                Verdict::Holds
            };
            (n.to_string(), v)
        })
        .collect();
    let counted = rule == CommitRule::CountReplicas;
    let outcome = vec![
        ("figure_leaders".to_string(), json!(["S1", "S5", "S1"])),
        ("index2_committed_term".to_string(), json!(2)),
        ("index2_committed_alone".to_string(), json!(counted)),
        (
            "index2_final_term".to_string(),
            json!(if counted { 3 } else { 2 }),
        ),
        (
            "lost_committed_entries".to_string(),
            json!(if counted { 1 } else { 0 }),
        ),
        ("s5_elected_after_commit".to_string(), json!(counted)),
        ("logs_converged".to_string(), json!(true)),
    ];
    Expectation { outcome, verdicts }
}

fn script(rule: CommitRule, [s1_id, s2_id, s3_id, s4_id, s5_id]: Five) -> Vec<(u64, Fault)> {
    let cut = |from, to| Fault::CutLink { from, to };
    vec![
        (S1_REBOOT_MS, Fault::Crash { node: s1_id }),
        (S1_REBOOT_MS + 10, Fault::Restart { node: s1_id }),
        (CUT_S1_MS, cut(s1_id, s3_id)),
        (CUT_S1_MS, cut(s1_id, s4_id)),
        (CUT_S1_MS, cut(s1_id, s5_id)),
        (S1_CRASH_MS, Fault::Crash { node: s1_id }),
        (CUT_S5_MS, cut(s5_id, s2_id)),
        (CUT_S5_MS, cut(s5_id, s3_id)),
        (CUT_S5_MS, cut(s5_id, s4_id)),
        (S5_CRASH_MS, Fault::Crash { node: s5_id }),
        (HEAL_MS, Fault::Heal),
        (S1_RESTART_MS, Fault::Restart { node: s1_id }),
        (rule.crash_ms(), Fault::Crash { node: s1_id }),
        (S5_RESTART_MS, Fault::Restart { node: s5_id }),
        (S1_BACK_MS, Fault::Restart { node: s1_id }),
    ]
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let rule = CommitRule::parse(params);
    // The shared builder reads the planted bug from `bug`; this scenario's switch is its rule.
    let mut built = Params::new();
    if rule == CommitRule::CountReplicas {
        built.insert("bug".into(), "commit-old-term-by-count".into());
    }
    let scripted = move |cast: &RaftCast| script(rule, five(cast));
    let (mut setup, world, cast) = build(
        &built,
        ClusterPlan {
            servers: SERVERS,
            stop_at_ms: STOP_AT_MS,
            scripted: Some(Box::new(scripted)),
            timeouts_ms: TIMEOUTS_MS.to_vec(),
            ..ClusterPlan::default()
        },
    );
    let servers = five(&cast);
    for plan in &CLIENTS {
        let config = ClientConfig {
            servers: servers.to_vec(),
            writes: plan.writes,
            start_ms: plan.start_ms,
            interval_ms: plan.interval_ms,
            retry_ms: plan.retry_ms,
            stop_at_ms: STOP_AT_MS,
            first_id: plan.first_id,
            first_guess: Some(servers[plan.target]),
        };
        setup.add::<RaftClient>(plan.name, "raft-client", &CLIENT_FAULTS, config, ());
    }
    setup.set_world(Figure8World::new(world, rule, servers));
    super::raft_beats::figure_8(&mut setup, &cast, rule == CommitRule::CountReplicas);
    setup
}

/// The five servers the builder added.
fn five(cast: &RaftCast) -> Five {
    std::array::from_fn(|i| cast.servers[i])
}

/// The first entry ever committed at the contested index.
#[derive(Clone, Debug)]
struct FirstCommit {
    entry: Entry,
    /// The term of the server that first counted it committed.
    leader_term: Term,
    /// Whether it was committed with no entry of that term above it (by counting alone).
    alone: bool,
}

/// [`RaftWorld`]'s safety checks, plus the story of index 2: who holds which entry there,
/// when it was first committed and whether that entry survives.
pub struct Figure8World {
    inner: RaftWorld,
    /// S1…S5.
    s: Five,
    rule: CommitRule,
    /// Narration for the step just evaluated.
    notes: Vec<String>,
    said: VecSet<&'static str>,
    first_commit: Option<FirstCommit>,
    s5_elected_after_commit: bool,
    was_up: Vec<bool>,
    /// The term of the entry each server held at #2 at the last step (0: none).
    held_at_contested: Vec<u64>,
}

impl Figure8World {
    fn new(inner: RaftWorld, rule: CommitRule, s: Five) -> Self {
        Figure8World {
            inner,
            s,
            rule,
            notes: Vec::new(),
            said: VecSet::new(),
            first_commit: None,
            s5_elected_after_commit: false,
            was_up: vec![true; SERVERS as usize],
            held_at_contested: vec![0; SERVERS as usize],
        }
    }

    /// `S1, S2 and S3`.
    fn names(nodes: &Nodes<'_>, ids: &[NodeId]) -> String {
        let names: Vec<&str> = ids.iter().map(|i| nodes.name(*i)).collect();
        match names.as_slice() {
            [] => "no server".into(),
            [one] => one.to_string(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        }
    }

    fn servers(&self) -> impl Iterator<Item = NodeId> {
        self.s.into_iter()
    }

    fn live<'a>(nodes: &Nodes<'a>, id: NodeId) -> Option<&'a RaftServer> {
        nodes.live::<RaftServer>(id)
    }

    fn log<'a>(nodes: &Nodes<'a>, id: NodeId) -> &'a [Entry] {
        nodes.durable::<RaftServer>(id).map_or(&[], |d| &d.log)
    }

    fn entry_at(nodes: &Nodes<'_>, id: NodeId, index: LogIndex) -> Option<Entry> {
        Self::log(nodes, id).get(index.0 as usize - 1).cloned()
    }

    fn last_term(nodes: &Nodes<'_>, id: NodeId) -> Term {
        Self::log(nodes, id).last().map_or(Term(0), |e| e.term)
    }

    /// Servers whose persisted log holds exactly `entry` at `index`.
    fn holders(&self, nodes: &Nodes<'_>, index: LogIndex, entry: &Entry) -> Vec<NodeId> {
        self.servers()
            .filter(|id| Self::entry_at(nodes, *id, index).as_ref() == Some(entry))
            .collect()
    }

    /// Servers whose log holds an entry of `term` at `index`.
    fn holders_of_term(&self, nodes: &Nodes<'_>, index: LogIndex, term: Term) -> Vec<NodeId> {
        self.servers()
            .filter(|id| Self::entry_at(nodes, *id, index).is_some_and(|e| e.term == term))
            .collect()
    }

    /// The entry a majority of persisted logs holds at `index`, if any.
    fn majority_entry(&self, nodes: &Nodes<'_>, index: LogIndex) -> Option<Entry> {
        self.servers()
            .filter_map(|id| Self::entry_at(nodes, id, index))
            .find(|e| self.holders(nodes, index, e).len() >= MAJORITY)
    }

    fn lost(&self, nodes: &Nodes<'_>) -> bool {
        self.first_commit
            .as_ref()
            .is_some_and(|f| self.holders(nodes, CONTESTED, &f.entry).len() < MAJORITY)
    }

    /// Tells `text` once per run.
    fn say(&mut self, key: &'static str, text: impl FnOnce() -> String) {
        if self.said.insert(key) {
            self.notes.push(text());
        }
    }

    /// Bookkeeping the outcome needs, done on every run (sweeps included).
    fn track(&mut self, nodes: &Nodes<'_>) {
        let [_, _, _, _, s5_id] = self.s;
        if self.first_commit.is_none() {
            if let Some((entry, term)) = self.inner.committed.get(&CONTESTED) {
                let above = self
                    .inner
                    .committed
                    .iter()
                    .any(|(i, (e, _))| *i > CONTESTED && e.term == *term);
                self.first_commit = Some(FirstCommit {
                    entry: entry.clone(),
                    leader_term: *term,
                    alone: !above,
                });
            }
        }
        if let Some(f) = &self.first_commit {
            let s5_leads =
                Self::live(nodes, s5_id).is_some_and(|s| s.role == Role::Leader && s.term > f.leader_term);
            self.s5_elected_after_commit |= s5_leads;
        }
    }

    /// The story's narration, told when the state shows each turn of it.
    fn narrate(&mut self, nodes: &Nodes<'_>) {
        let [s1_id, s2_id, s3_id, s4_id, s5_id] = self.s;
        let leader = |id: NodeId, term: u64| {
            Self::live(nodes, id).is_some_and(|s| s.role == Role::Leader && s.term == Term(term))
        };
        if let Some((first, _)) = self.inner.committed.get(&LogIndex(1)).cloned() {
            self.say("setup", || {
                format!(
                    "Every log starts alike: {} is committed at #1 in term {}, as in the paper's figure. Watch index #2 from here on.",
                    first.command, first.term
                )
            });
        }
        let command = |id: NodeId| {
            Self::entry_at(nodes, id, CONTESTED).map_or(String::new(), |e| e.command.to_string())
        };
        let t2 = self.holders_of_term(nodes, CONTESTED, Term(2));
        if leader(s1_id, 2) && t2.len() >= 2 {
            self.say("a", || {
                format!(
                    "(a) S1 leads term 2, and its entry at #2 ({}) is stored on {} only — {} of 5, short of the 3 a commit needs, so nobody treats it as committed. S1's links to S3, S4 and S5 are down.",
                    command(s1_id),
                    Self::names(nodes, &t2),
                    t2.len()
                )
            });
        }
        if leader(s5_id, 3) {
            let votes: Vec<NodeId> = Self::live(nodes, s5_id).map_or(Vec::new(), |s| {
                s.votes.iter().copied().filter(|v| *v != s5_id).collect()
            });
            let s2_refused =
                !votes.contains(&s2_id) && Self::last_term(nodes, s2_id) > Self::last_term(nodes, s5_id);
            self.say("b-elected", || {
                format!(
                    "(b) S1 is down and S5 wins term 3 with its own vote and those of {}.{}",
                    Self::names(nodes, &votes),
                    if s2_refused {
                        " S2 turned it down: S2's log ends in term 2, S5's only in term 1, so S5 might lack entries S2 holds."
                    } else {
                        ""
                    }
                )
            });
        }
        let t3 = self.holders_of_term(nodes, CONTESTED, Term(3));
        if !t3.is_empty() && !t2.is_empty() {
            self.say("b-entry", || {
                format!(
                    "(b) S5 takes {} as #2 in term 3, but its links are down and no one else gets it. Index #2 now holds two different entries: term 2 on {}, term 3 on {}.",
                    command(s5_id),
                    Self::names(nodes, &t2),
                    Self::names(nodes, &t3)
                )
            });
        }
        if leader(s1_id, 4) {
            self.say("c-elected", || {
                "(c) S5 is down; S1 is back and wins term 4. As leader it copies its own log — the term-2 entry at #2 included — to every follower that lacks it.".into()
            });
        }
        // What S1 knows: itself plus every follower it has seen store #2.
        let s1 = Self::live(nodes, s1_id).filter(|s| {
            let known = 1 + s.match_index.values().filter(|m| **m >= CONTESTED).count();
            s.role == Role::Leader && s.term > Term(2) && known >= MAJORITY
        });
        if let Some(s1) = s1.filter(|_| t2.len() >= MAJORITY) {
            let term = s1.term;
            let mut known: Vec<NodeId> = s1
                .match_index
                .iter()
                .filter(|(_, m)| **m >= CONTESTED)
                .map(|(id, _)| *id)
                .collect();
            known.insert(0, s1_id);
            if s1.commit_index >= CONTESTED {
                self.say("majority", || {
                    format!(
                        "(c) S1 now knows the term-2 entry at #2 is on {} — a majority — and, counting copies, marks it committed and applies it. But it was written in term 2, not in S1's term {term}: S5, whose log ends in term 3, can still win the votes of S2, S3 and S4 and replace it.",
                        Self::names(nodes, &known)
                    )
                });
            } else {
                self.say("majority", || {
                    format!(
                        "(c) S1 now knows the term-2 entry at #2 is on {} — a majority — yet it does not commit it. It was written in term 2, not in S1's term {term}, and S5's log ends in term 3: S5 could still win the votes of S2, S3 and S4 and replace it. For an entry of an older term, a majority of copies is not enough.",
                        Self::names(nodes, &known)
                    )
                });
            }
        }
        if let Some(f) = self.first_commit.clone().filter(|f| !f.alone) {
            let term = f.leader_term;
            let own = self
                .inner
                .committed
                .iter()
                .find(|(i, (e, _))| **i > CONTESTED && e.term == term)
                .map(|(i, (e, _))| format!("{} at {i}", e.command))
                .unwrap_or_default();
            self.say("e", || {
                format!(
                    "(e) S1's own entry of term {term} ({own}) is now on a majority, so S1 commits it — and #2 beneath it commits with it. From now on every majority includes a server whose log ends in term {term}, newer than S5's term 3: S5 can never be elected without #2."
                )
            });
        }
        let s1_up = Self::live(nodes, s1_id).is_some();
        if self.was_up[0] && !s1_up && self.first_commit.is_some() {
            let own = self.first_commit.as_ref().map_or(Term(0), |f| f.leader_term);
            let has_own = Self::log(nodes, s1_id).iter().any(|e| e.term == own);
            self.say("crash", || {
                if has_own {
                    format!("S1 crashes right after it committed #2 together with its own term-{own} entry. Both are safe now: no server that lacks them can be elected.")
                } else {
                    format!("S1 crashes right after it counted #2 committed — before it has stored a single entry of its own term {own}.")
                }
            });
        }
        if let Some(f) = self.first_commit.clone() {
            let s5 = Self::live(nodes, s5_id).filter(|s| s.term > f.leader_term);
            if let Some(s5) = s5 {
                let term = s5.term;
                // Servers that would vote for S5: up, with a log no newer than its own.
                let mine = Self::last_term(nodes, s5_id);
                let (newer, willing): (Vec<NodeId>, Vec<NodeId>) = [s1_id, s2_id, s3_id, s4_id]
                    .into_iter()
                    .filter(|id| Self::live(nodes, *id).is_some())
                    .partition(|id| Self::last_term(nodes, *id) > mine);
                if s5.role == Role::Candidate && willing.len() + 1 < MAJORITY {
                    self.say("s5-cannot", || {
                        format!(
                            "S5 stands in term {term}, but it cannot win: {} hold logs that end in a newer term than its own term {mine}, and refuse. Without them S5 cannot gather 3 votes, so the committed #2 stays.",
                            Self::names(nodes, &newer)
                        )
                    });
                }
                let lacks = Self::entry_at(nodes, s5_id, CONTESTED).as_ref() != Some(&f.entry);
                if s5.role == Role::Leader && lacks {
                    let votes: Vec<NodeId> = s5.votes.iter().copied().filter(|v| *v != s5_id).collect();
                    self.say("d-elected", || {
                        format!(
                            "(d) S5 wins term {term} with its own vote and those of {}: its log ends in term {mine}, newer than theirs, so the vote check lets it through. Yet S5 lacks the entry S1 counted committed at #2 — a leader missing a committed entry.",
                            Self::names(nodes, &votes)
                        )
                    });
                }
            }
        }
        if self.lost(nodes) {
            let entry = self.first_commit.as_ref().map(|f| f.entry.command.clone());
            self.say("lost", || {
                let entry = entry.map(|c| c.to_string()).unwrap_or_default();
                format!(
                    "(d) S5 has overwritten #2 on the others with its own term-3 entry. The {entry} that S1 counted committed and applied is no longer on a majority: a committed entry is lost."
                )
            });
        }
        // A server's entry at #2 is replaced.
        for id in self.servers() {
            let now = Self::entry_at(nodes, id, CONTESTED).map_or(0, |e| e.term.0);
            let before = self.held_at_contested[id.index()];
            self.held_at_contested[id.index()] = now;
            if before == 0 || now == 0 || before == now {
                continue;
            }
            let committed_one = self
                .first_commit
                .as_ref()
                .is_some_and(|f| f.entry.term.0 == before);
            let applied = Self::live(nodes, id).is_some_and(|s| s.last_applied >= CONTESTED);
            if committed_one && id == s1_id {
                self.say("s1-drops", || {
                    "S1 is back and follows S5: it drops its own #2 — the very entry it had counted committed and applied before it crashed.".into()
                });
            } else if committed_one {
                self.say("first-overwrite", || {
                    let who = nodes.name(id);
                    format!(
                        "{who} takes the leader's word that its old #2 was never committed — yet S1 had counted it committed{}.",
                        if applied { format!(", and {who} itself had already applied it") } else { String::new() }
                    )
                });
            } else if id == s5_id {
                self.say("s5-repaired", || {
                    "S5's term-3 entry at #2, never committed, is replaced by the committed one. Every server agrees on #2 again.".into()
                });
            }
        }
    }
}

impl World for Figure8World {
    fn properties(&self) -> Vec<PropertySpec> {
        self.inner.properties()
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.inner.evaluate(nodes, out);
        self.track(nodes);
        self.narrate(nodes);
        for id in self.servers() {
            self.was_up[id.index()] = Self::live(nodes, id).is_some();
        }
    }

    fn take_notes(&mut self) -> Vec<String> {
        // This world tells the story of index 2 itself, the broken properties included.
        self.inner.take_notes();
        std::mem::take(&mut self.notes)
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        if let Some(f) = &self.first_commit {
            if self.lost(nodes) {
                return Some(format!(
                    "#2 was committed as {} (term {}) and applied, but a majority now holds something else there: a committed entry is lost",
                    f.entry.command, f.entry.term
                ));
            }
            if f.alone && self.rule == CommitRule::CountReplicas {
                return Some(format!(
                    "#2 counts as committed, but it is a term-{} entry with nothing of term {} above it: a server whose log ends in a later term can still be elected and overwrite it",
                    f.entry.term, f.leader_term
                ));
            }
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
        let rows = self
            .servers()
            .map(|id| {
                let entry = Self::entry_at(nodes, id, CONTESTED);
                let committed = match Self::live(nodes, id) {
                    Some(s) if entry.is_some() && s.commit_index >= CONTESTED => "✓ counts it committed",
                    Some(_) if entry.is_some() => "… not committed here",
                    Some(_) => "—",
                    None => "down",
                };
                vec![
                    nodes.name(id).to_string(),
                    entry.as_ref().map_or("—".into(), |e| e.command.to_string()),
                    entry.as_ref().map_or("—".into(), |e| e.term.0.to_string()),
                    committed.to_string(),
                    Self::last_term(nodes, id).0.to_string(),
                ]
            })
            .collect();
        tables.push(TableView {
            title: "Index #2 on each server".into(),
            columns: columns(&["server", "entry at #2", "its term", "status", "last log term"]),
            rows,
        });
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, Value> {
        let mut out = self.inner.outcome(nodes);
        let rule = match self.rule {
            CommitRule::CurrentTermOnly => "current-term-only",
            CommitRule::CountReplicas => "count-replicas",
        };
        out.insert("commit_rule".into(), json!(rule));
        let figure: Vec<Value> = (2..=4)
            .map(|t| {
                self.inner
                    .leaders
                    .iter()
                    .find(|(term, _)| *term == Term(t))
                    .map_or(Value::Null, |(_, l)| json!(nodes.name(*l)))
            })
            .collect();
        out.insert("figure_leaders".into(), Value::Array(figure));
        let f = self.first_commit.as_ref();
        out.insert(
            "index2_committed_term".into(),
            f.map_or(Value::Null, |f| json!(f.entry.term.0)),
        );
        out.insert(
            "index2_committed_alone".into(),
            f.map_or(Value::Null, |f| json!(f.alone)),
        );
        out.insert(
            "index2_final_term".into(),
            self.majority_entry(nodes, CONTESTED)
                .map_or(Value::Null, |e| json!(e.term.0)),
        );
        let lost = self
            .inner
            .committed
            .iter()
            .filter(|(i, (e, _))| self.holders(nodes, **i, e).len() < MAJORITY)
            .count();
        out.insert("lost_committed_entries".into(), json!(lost));
        out.insert(
            "s5_elected_after_commit".into(),
            json!(self.s5_elected_after_commit),
        );
        out
    }
}
