//! `raft-partition` (curriculum §6): five servers are cut 2 | 3 around the leader. The
//! minority keeps its old leader but cannot commit; the majority elects a new one and
//! carries on. When the network heals, the old leader steps down and the entries it took
//! during the split, never committed, are discarded.

use super::raft_beats;
use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::raft::RaftBug;
use crate::scenarios::raft_common::promised_verdicts;
use crate::scenarios::raft_common::{
    bug, build_with_world, common_params, usual_timing, ClusterPlan, RaftCast, Watch,
};
use crate::scenarios::{Expectation, Listing, Params};
use serde_json::Value;
use std::collections::BTreeMap;

pub const ID: &str = "raft-partition";
pub const SPLIT_MS: u64 = 700;
pub const HEAL_MS: u64 = 1_800;
pub const STOP_AT_MS: u64 = 3_500;
/// With `bug=skip-up-to-date-check`: when S2, cut off alone since the heal, is back.
pub const S2_BACK_MS: u64 = 2_900;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a leader cut off from the majority keep appending but never commit",
        "Watch the majority side elect a new leader",
        "See the old leader's uncommitted entries replaced when the network heals",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt:
            "S1 leads but sits on the minority side of a partition. What happens to the writes it accepts?",
        answers: &[
            "They commit on the minority",
            "They stay uncommitted and are later overwritten",
            "They are copied to the majority",
        ],
        correct: 1,
        why: "Without a majority nothing commits; after healing the newer leader's log wins.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§6",
        title: "Raft: a partition around the leader",
        summary: "Five servers; S1 leads and the client has written twice. At 0.7 s the network splits {S1, S2, client} from {S3, S4, S5}. S1 still believes it leads and appends the client's write, but with two of five it can never commit. The three elect a new leader in a higher term. At 1.8 s the network heals: S1 sees the newer term, steps down, and its uncommitted entry is overwritten.",
        params: common_params(),
    }
}

/// Timing like the default: timeouts well above the heartbeat, and short enough for the
/// majority to elect a leader well inside the split.
fn story(params: &Params) -> bool {
    usual_timing(params)
}

/// With `bug=skip-up-to-date-check` the run is scripted to show the bug: S2 stays cut off
/// after the heal, and comes back with a higher term and a log that lacks committed writes.
fn stale_voter_story(params: &Params) -> bool {
    bug(params) == RaftBug::SkipUpToDateCheck && story(params)
}

pub fn expectation(params: &Params) -> Expectation {
    let mut verdicts = promised_verdicts(bug(params));
    let mut outcome = Vec::new();
    if stale_voter_story(params) {
        verdicts.push(("leader-completeness".to_string(), Verdict::Violated));
        verdicts.push(("state-machine-safety".to_string(), Verdict::Violated));
        outcome.push(("first_leader".to_string(), json!("S1")));
        outcome.push(("watched_side_commits".to_string(), json!(0)));
    }
    if bug(params) == RaftBug::None && story(params) {
        outcome.push(("first_leader".to_string(), json!("S1")));
        outcome.push(("watched_side_commits".to_string(), json!(0)));
        outcome.push(("old_leader_stepped_down".to_string(), json!(true)));
        outcome.push(("minority_entries_discarded".to_string(), json!(true)));
        outcome.push(("writes_committed".to_string(), json!(4)));
        outcome.push(("logs_converged".to_string(), json!(true)));
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let stale_voter = stale_voter_story(params);
    // S1 and S2, with the client, are cut off from S3, S4 and S5.
    let scripted = move |cast: &RaftCast| {
        let [s1, s2] = [cast.servers[0], cast.servers[1]];
        let client = cast.client.expect("the plan writes");
        let mut scripted = vec![
            (
                SPLIT_MS,
                Fault::Partition {
                    side: vec![s1, s2, client],
                },
            ),
            (HEAL_MS, Fault::Heal),
        ];
        if stale_voter {
            // S2 stays cut off a while longer: it misses the writes the new leader commits
            // after the heal, and its election timer keeps running out, raising its term.
            scripted.push((HEAL_MS, Fault::Partition { side: vec![s2] }));
            scripted.push((S2_BACK_MS, Fault::Heal));
        }
        scripted
    };
    let watch = |cast: &RaftCast| Watch {
        side: cast.servers[..2].to_vec(),
        from_us: SPLIT_MS * MS_US,
        until_us: HEAL_MS * MS_US,
    };
    let (mut setup, cast) = build_with_world(
        params,
        ClusterPlan {
            servers: 5,
            writes: 4,
            client_start_ms: 500,
            stop_at_ms: STOP_AT_MS,
            scripted: Some(Box::new(scripted)),
            watch: Some(Box::new(watch)),
            stagger_first: true,
            ..ClusterPlan::default()
        },
        Some(derive_outcome),
    );
    raft_beats::partition(&mut setup, &cast, stale_voter);
    setup
}

/// Whether S1 ended as a follower after stepping down, and whether entries were discarded.
fn derive_outcome(o: &mut BTreeMap<String, Value>) {
    let stepped = o["final_roles"][0] == json!("FOLLOWER") && o["step_downs"].as_u64().unwrap_or(0) >= 1;
    let discarded = o["entries_discarded"].as_u64().unwrap_or(0) >= 1;
    o.insert("old_leader_stepped_down".into(), json!(stepped));
    o.insert("minority_entries_discarded".into(), json!(discarded));
}
