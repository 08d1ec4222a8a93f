//! `raft-election` (curriculum §6): a leader emerges, is crashed, and the survivors elect a
//! new one in a higher term; the old leader restarts with its stale term and falls in line
//! as soon as it hears the new leader.

use super::raft_common::{bug, build_with_world, common_params, num, servers_param, ClusterPlan, PROPERTIES};
use super::{Expectation, Params, ScenarioInfo};
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::properties::Verdict;
use crate::protocols::raft::RaftBug;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const ID: &str = "raft-election";
pub const CRASH_MS: u64 = 600;
pub const RESTART_MS: u64 = 1_400;
pub const STOP_AT_MS: u64 = 2_000;

pub fn info() -> ScenarioInfo {
    let mut params = vec![servers_param(3)];
    params.extend(common_params());
    ScenarioInfo {
        id: ID,
        chapter: 5,
        sections: "§6",
        title: "Raft: electing a leader",
        summary: "S1 boots first and becomes leader. At 0.6 s it crashes; the others' election timers run out and one of them wins a higher term. At 1.4 s S1 restarts, still in its old term, and follows the new leader as soon as it hears from it.",
        params,
    }
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
    if story(params) {
        outcome.push(("first_leader".to_string(), json!("S1")));
        outcome.push(("restarted_leader_follows".to_string(), json!(true)));
        outcome.push(("new_leader_in_higher_term".to_string(), json!(true)));
    }
    Expectation { outcome, verdicts }
}

/// The told story holds with the default timing (timeouts well above the heartbeat).
fn story(params: &Params) -> bool {
    let min = num(params, "election_timeout_ms_min", 150);
    let max = num(params, "election_timeout_ms_max", 300).max(min);
    let hb = num(params, "heartbeat_ms", 50);
    hb * 2 < min && max <= 400 && min >= 100
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let leader = NodeId(0);
    build_with_world(
        params,
        ClusterPlan {
            servers: num(params, "servers", 5) as u32,
            stop_at_ms: STOP_AT_MS,
            scripted: vec![
                (CRASH_MS, Fault::Crash { node: leader }),
                (RESTART_MS, Fault::Restart { node: leader }),
            ],
            stagger_first: true,
            ..ClusterPlan::default()
        },
        Some(derive_outcome),
    )
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
