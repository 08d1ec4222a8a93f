//! `raft-split-vote` (curriculum §6): why Raft draws election timeouts at random. With
//! identical timeouts every follower stands for election at the same instant, each votes for
//! itself, nobody reaches a majority, and the same thing happens again next round — for ever.
//! With randomized timeouts one server usually times out first and wins before the others
//! wake up.

use super::raft_beats;
use crate::json;
use crate::kernel::setup::Setup;
use crate::scenarios::lease_setup::choice;
use crate::scenarios::raft_common::{
    build_with_world, common_params, num, servers_param, usual_timing, verdicts_if_correct, ClusterPlan,
};
use crate::scenarios::{Expectation, Listing, Params};
use serde_json::Value;
use std::collections::BTreeMap;

pub const ID: &str = "raft-split-vote";
pub const STOP_AT_MS: u64 = 2_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See identical timeouts split the vote for ever",
        "See random timeouts let one server win first",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Why does Raft pick election timeouts at random?",
        answers: &[
            "To save network traffic",
            "So one server usually wakes first and wins before the others stand",
            "To make terms shorter",
        ],
        correct: 1,
        why: "Spreading the timeouts makes it unlikely that several candidates split the votes again.",
    },
};

pub fn info() -> Listing {
    let mut params = vec![
        choice(
            "timeouts",
            "Election timeouts",
            "Whether each server draws its timeout at random from the range, or all use the minimum.",
            &[
                ("randomized", "randomized — each server draws from min..max"),
                ("identical", "identical — every server waits exactly the minimum"),
            ],
        ),
        servers_param(3),
    ];
    params.extend(common_params());
    Listing {
        sections: "§6",
        title: "Raft: split votes and random timeouts",
        summary: "All servers boot together and nobody leads. With identical timeouts they all stand for election at once, each keeps its own vote, and no term ever gets a majority. With randomized timeouts one of them wakes first and is elected before the rest stir.",
        params,
    }
}

fn identical(params: &Params) -> bool {
    params.get("timeouts").map(String::as_str) == Some("identical")
}

pub fn expectation(params: &Params) -> Expectation {
    let verdicts = verdicts_if_correct(params);
    let mut outcome = Vec::new();
    if identical(params) {
        // Every server starts at 0 and waits exactly as long: a deterministic livelock.
        outcome.push(("first_leader".to_string(), json!(null)));
    } else {
        if usual_timing(params) {
            outcome.push(("leader_elected".to_string(), json!(true)));
        }
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let mut params_used = params.clone();
    let identical_max = identical(params).then(|| num(params, "election_timeout_ms_min", 150).to_string());
    if let Some(min) = &identical_max {
        params_used.insert("election_timeout_ms_max".into(), min.clone());
    }
    let (mut setup, _) = build_with_world(
        &params_used,
        ClusterPlan {
            servers: num(params, "servers", 5) as u32,
            stop_at_ms: STOP_AT_MS,
            ..ClusterPlan::default()
        },
        Some(derive_outcome),
    );
    raft_beats::split_vote(&mut setup, identical_max.is_some());
    if let Some(min) = identical_max {
        // Identical timeouts: every server waits exactly the minimum.
        setup.derive_param("election_timeout_ms_max", min);
    }
    setup
}

/// Whether anyone was ever elected, and how many rounds the servers went through.
fn derive_outcome(outcome: &mut BTreeMap<String, Value>) {
    let elected = !outcome.get("first_leader").is_none_or(|l| l.is_null());
    let rounds = outcome
        .get("final_terms")
        .and_then(|t| t.as_array())
        .map_or(0, |t| t.iter().filter_map(|x| x.as_u64()).max().unwrap_or(0));
    outcome.insert("leader_elected".into(), json!(elected));
    outcome.insert("highest_term".into(), json!(rounds));
}
