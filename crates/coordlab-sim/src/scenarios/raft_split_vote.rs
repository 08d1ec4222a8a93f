//! `raft-split-vote` (curriculum §6): why Raft draws election timeouts at random. With
//! identical timeouts every follower stands for election at the same instant, each votes for
//! itself, nobody reaches a majority, and the same thing happens again next round — for ever.
//! With randomized timeouts one server usually times out first and wins before the others
//! wake up.

use super::raft_common::{build, common_params, num, servers_param, ClusterPlan, PROPERTIES};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::engine::{Engine, Limits, Recording};
use crate::kernel::faults::Action;
use crate::properties::Verdict;
use crate::protocols::raft::RaftBug;
use crate::scenarios::raft_common::bug;
use crate::trace::Trace;
use serde_json::json;

pub const ID: &str = "raft-split-vote";
pub const STOP_AT_MS: u64 = 2_000;

pub fn info() -> ScenarioInfo {
    let mut params = vec![
        ParamSpec {
            key: "timeouts",
            label: "Election timeouts",
            help: "Whether each server draws its timeout at random from the range, or all use the minimum.",
            default: "randomized",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "randomized",
                        label: "randomized — each server draws from min..max",
                    },
                    ChoiceOption {
                        value: "identical",
                        label: "identical — every server waits exactly the minimum",
                    },
                ],
            },
        },
        servers_param(3),
    ];
    params.extend(common_params());
    ScenarioInfo {
        id: ID,
        chapter: 5,
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
    let mut verdicts = Vec::new();
    let mut outcome = Vec::new();
    if bug(params) == RaftBug::None {
        verdicts = PROPERTIES
            .iter()
            .map(|(n, _)| (n.to_string(), Verdict::Holds))
            .collect();
    }
    if identical(params) {
        // Every server starts at 0 and waits exactly as long: a deterministic livelock.
        outcome.push(("first_leader".to_string(), json!(null)));
    } else {
        let min = num(params, "election_timeout_ms_min", 150);
        let max = num(params, "election_timeout_ms_max", 300).max(min);
        if max >= min + 100 && max <= 400 && num(params, "heartbeat_ms", 50) * 2 < min {
            outcome.push(("leader_elected".to_string(), json!(true)));
        }
    }
    Expectation { outcome, verdicts }
}

pub fn run(
    params: &Params,
    seed: u64,
    actions: &[Action],
    limits: Limits,
    recording: Recording,
) -> Result<Trace, String> {
    let mut params_used = params.clone();
    if identical(params) {
        let min = num(params, "election_timeout_ms_min", 150).to_string();
        params_used.insert("election_timeout_ms_max".into(), min);
    }
    let setup = build(
        &params_used,
        ClusterPlan {
            servers: num(params, "servers", 5) as u32,
            writes: 0,
            client_start_ms: 0,
            stop_at_ms: STOP_AT_MS,
            scripted: Vec::new(),
            watch: None,
            stagger_first: false,
        },
    );
    let engine = Engine::new(setup, seed, actions, limits, recording)?;
    let mut trace = engine.run(ID, seed, params.clone());
    let elected = !trace.outcome.get("first_leader").is_none_or(|l| l.is_null());
    let rounds = trace
        .outcome
        .get("final_terms")
        .and_then(|t| t.as_array())
        .map_or(0, |t| t.iter().filter_map(|x| x.as_u64()).max().unwrap_or(0));
    trace.outcome.insert("leader_elected".into(), json!(elected));
    trace.outcome.insert("highest_term".into(), json!(rounds));
    Ok(trace)
}
