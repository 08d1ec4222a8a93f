//! `raft-election` (curriculum §6): a leader emerges, is crashed, and the survivors elect a
//! new one in a higher term; the old leader restarts with its stale term and falls in line
//! as soon as it hears the new leader.

use super::raft_beats;
use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::properties::Verdict;
use crate::protocols::raft::{RaftBug, MAX_SERVERS};
use crate::scenarios::raft_common::{
    bug, build_with_world, common_params, election_timeouts_ms, num, servers_param, usual_timing,
    verdicts_if_correct, ClusterPlan, RaftCast, PROPERTIES,
};
use crate::scenarios::{Expectation, Listing, Params};
use serde_json::Value;
use std::collections::BTreeMap;

pub const ID: &str = "raft-election";
pub const CRASH_MS: u64 = 600;
pub const RESTART_MS: u64 = 1_400;
pub const STOP_AT_MS: u64 = 2_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See followers start an election when heartbeats stop",
        "Watch a candidate win with a majority in a higher term",
        "See a restarted old leader follow the newer term",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "S1 restarts in an old term and hears from the new leader. What does it do?",
        answers: &[
            "Claims leadership again",
            "Adopts the newer term and follows",
            "Starts a new election at once",
        ],
        correct: 1,
        why: "A higher term always wins: a server that sees one steps down to follower.",
    },
};

pub fn info() -> Listing {
    let mut params = vec![servers_param(3)];
    params.extend(common_params());
    Listing {
        sections: "§6",
        title: "Raft: electing a leader",
        summary: "S1 boots first and becomes leader. At 0.6 s it crashes; the others' election timers run out and one of them wins a higher term. At 1.4 s S1 restarts, still in its old term, and follows the new leader as soon as it hears from it.",
        params,
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let mut verdicts = verdicts_if_correct(params);
    let mut outcome = Vec::new();
    if forget_vote_story(params) {
        // Two leaders of term 1, made by second votes; no client, so the logs stay empty.
        verdicts = PROPERTIES
            .iter()
            .map(|(n, _)| {
                let broken = *n == "election-safety" || *n == "one-vote-per-term";
                let v = if broken { Verdict::Violated } else { Verdict::Holds };
                (n.to_string(), v)
            })
            .collect();
        outcome.push(("first_leader".to_string(), json!("S1")));
        outcome.push(("restarted_leader_follows".to_string(), json!(true)));
    } else if story(params) {
        outcome.push(("first_leader".to_string(), json!("S1")));
        outcome.push(("restarted_leader_follows".to_string(), json!(true)));
        outcome.push(("new_leader_in_higher_term".to_string(), json!(true)));
    }
    Expectation { outcome, verdicts }
}

/// The told story holds with the default timing (timeouts well above the heartbeat).
fn story(params: &Params) -> bool {
    usual_timing(params) && election_timeouts_ms(params, 150).0 >= 100
}

/// With `bug=forget-vote-on-restart` and timing like the default, the run is scripted to
/// show the bug: two leaders of term 1.
fn forget_vote_story(params: &Params) -> bool {
    bug(params) == RaftBug::ForgetVoteOnRestart
        && story(params)
        && num(params, "election_timeout_ms_min", 150) > 120
}

/// The faults that make a server vote twice in term 1, at true times (ms). S1's messages to
/// the last server are lost, so that server never hears of term 1 and later stands in it
/// too. Meanwhile the servers whose votes it needs (S2 … S⌊N/2⌋+1, all of which voted for
/// S1) crash and restart before its timer can run out — with the bug, without their votes.
fn forget_vote_faults(servers: &[NodeId], min_ms: u64) -> Vec<(u64, Fault)> {
    let (s1, last) = (servers[0], servers[servers.len() - 1]);
    let voters = &servers[1..servers.len() / 2 + 1];
    let mut out = vec![(0, Fault::CutLink { from: s1, to: last })];
    for &v in voters {
        out.push((min_ms * 2 / 3, Fault::Crash { node: v }));
    }
    for &v in voters {
        out.push((min_ms * 5 / 6, Fault::Restart { node: v }));
    }
    out.push((FORGET_VOTE_HEAL_MS, Fault::Heal));
    out
}

/// When the link from S1 is repaired in the forget-vote story (term 1 has two leaders by then).
pub const FORGET_VOTE_HEAL_MS: u64 = 500;

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let n = num(params, "servers", 5) as u32;
    let forget_vote = forget_vote_story(params);
    let min_ms = num(params, "election_timeout_ms_min", 150);
    let scripted = move |cast: &RaftCast| {
        let mut scripted = Vec::new();
        if forget_vote {
            scripted = forget_vote_faults(&cast.servers, min_ms);
        }
        // S1 leads term 1 (it boots first), and crashes.
        let leader = cast.servers[0];
        scripted.push((CRASH_MS, Fault::Crash { node: leader }));
        scripted.push((RESTART_MS, Fault::Restart { node: leader }));
        scripted
    };
    let (mut setup, cast) = build_with_world(
        params,
        ClusterPlan {
            servers: n,
            stop_at_ms: STOP_AT_MS,
            scripted: Some(Box::new(scripted)),
            stagger_first: true,
            narrate_restarts: true,
            ..ClusterPlan::default()
        },
        Some(derive_outcome),
    );
    if forget_vote_story(params) {
        raft_beats::election_forgets_votes(&mut setup, &cast);
    } else {
        let usual = crate::scenarios::raft_common::usual_timing(params);
        raft_beats::election(&mut setup, &cast, n.clamp(1, MAX_SERVERS), usual);
    }
    setup
}

/// Derived facts for the story, from the run's own outcome: a leader other than S1 won a
/// term above 1, and S1 ends as a follower of the final leader's term.
fn derive_outcome(outcome: &mut BTreeMap<String, Value>) {
    let leaders = outcome
        .get("leaders")
        .and_then(|l| l.as_array())
        .cloned()
        .unwrap_or_default();
    let higher = leaders
        .iter()
        .any(|l| l["term"].as_u64().unwrap_or(0) > 1 && l["leader"] != json!("S1"));
    let roles = outcome.get("final_roles").cloned().unwrap_or_default();
    let terms = outcome.get("final_terms").cloned().unwrap_or_default();
    let final_term = outcome.get("final_leader_term").cloned().unwrap_or_default();
    let follows = roles[0] == json!("FOLLOWER") && terms[0] == final_term && !final_term.is_null();
    outcome.insert("new_leader_in_higher_term".into(), json!(higher));
    outcome.insert("restarted_leader_follows".into(), json!(follows));
}
