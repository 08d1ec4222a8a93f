//! `raft-stale-leader` (curriculum §6): terms as fencing tokens. The leader freezes in a
//! stop-the-world pause; the others elect a new leader in a higher term. When the old
//! leader wakes it still believes it leads: its overdue heartbeat fires first and sends
//! AppendEntries with its old term. Then it reads what piled up during the pause; the first
//! message stamped with the newer term makes it step down. Its stale AppendEntries still
//! arrive, and every server that has moved on rejects them.

use super::raft_beats;
use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::setup::Setup;
use crate::scenarios::raft_common::{
    build_with_world, common_params, election_timeouts_ms, int_param, num, promise, servers_param,
    usual_timing, ClusterPlan, RaftCast,
};
use crate::scenarios::{Expectation, Listing, Params};
use serde_json::Value;
use std::collections::BTreeMap;

pub const ID: &str = "raft-stale-leader";
pub const PAUSE_AT_MS: u64 = 800;
pub const STOP_AT_MS: u64 = 3_000;
/// How much longer than two election timeouts S1's pause must last for the story: room for
/// the votes and the new leader's first AppendEntries, so the newer term is in place when S1
/// wakes.
const PAUSE_MARGIN_MS: u64 = 200;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a paused leader wake and act on an old term",
        "Watch followers reject messages stamped with an older term",
        "See the term work as a fencing token",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "A leader wakes from a pause and sends AppendEntries in its old term. What do the others do?",
        answers: &[
            "Accept them",
            "Start a new election",
            "Reject them, since they already know a newer term",
        ],
        correct: 2,
        why: "Every message carries its term, and a server ignores anything older than what it has seen.",
    },
};

pub fn info() -> Listing {
    let mut params = vec![
        servers_param(3),
        int_param(
            "pause_ms",
            "Pause length",
            "How long the leader S1 stays frozen, from 0.8 s.",
            "1000",
            1,
            2_000,
            "ms",
        ),
    ];
    params.extend(common_params());
    Listing {
        sections: "§6",
        title: "Raft: the term fences a stale leader",
        summary: "S1 leads, then freezes in a GC pause at 0.8 s. The others hear nothing, elect a new leader in a higher term and move on. S1 wakes still sure it leads: its overdue heartbeat fires first and sends AppendEntries stamped with its old term. Then S1 reads the messages that piled up while it was frozen; the first one stamped with the newer term makes S1 step down. Its stale AppendEntries reach the others anyway, and each one rejects them: the term works as a fencing token.",
        params,
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let (_, max) = election_timeouts_ms(params, 150);
    // The pause must outlast an election by a margin for the story to happen.
    let story = usual_timing(params) && num(params, "pause_ms", 1_000) >= 2 * max + PAUSE_MARGIN_MS;
    let told = [
        ("first_leader", json!("S1")),
        ("stale_leader_fenced", json!(true)),
        ("old_leader_stepped_down", json!(true)),
    ];
    promise(params, story, told)
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let duration_ms = num(params, "pause_ms", 1_000);
    // S1, the first leader, freezes.
    let scripted = move |cast: &RaftCast| {
        let node = cast.servers[0];
        vec![(PAUSE_AT_MS, Fault::Pause { node, duration_ms })]
    };
    let (mut setup, cast) = build_with_world(
        params,
        ClusterPlan {
            servers: num(params, "servers", 5) as u32,
            stop_at_ms: STOP_AT_MS,
            scripted: Some(Box::new(scripted)),
            stagger_first: true,
            ..ClusterPlan::default()
        },
        Some(derive_outcome),
    );
    raft_beats::stale_leader(&mut setup, &cast);
    setup
}

/// Whether a stale AppendEntries was refused, and whether S1 ended as a follower after
/// stepping down.
fn derive_outcome(o: &mut BTreeMap<String, Value>) {
    let fenced = o["stale_appends_rejected"].as_u64().unwrap_or(0) >= 1;
    let stepped = o["final_roles"][0] == json!("FOLLOWER") && o["step_downs"].as_u64().unwrap_or(0) >= 1;
    o.insert("stale_leader_fenced".into(), json!(fenced));
    o.insert("old_leader_stepped_down".into(), json!(stepped));
}
