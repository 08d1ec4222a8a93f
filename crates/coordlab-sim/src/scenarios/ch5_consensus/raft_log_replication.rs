//! `raft-log-replication` (curriculum §6): a client writes through the leader; each entry
//! commits once a majority stores it. One follower is slow and another crashes for a while;
//! neither holds the client up, and the crashed one catches up after it restarts.

use super::raft_beats;
use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::setup::Setup;
use crate::protocols::raft::MAX_SERVERS;
use crate::scenarios::raft_common::{
    build_with_world, common_params, int_param, num, promise, servers_param, usual_timing, ClusterPlan,
    RaftCast,
};
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "raft-log-replication";
pub const STOP_AT_MS: u64 = 3_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Follow a write from client to leader to a majority of logs",
        "See an entry commit once a majority stores it, even with a follower down",
        "Watch a restarted follower catch up",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "When is a log entry committed?",
        answers: &[
            "When a majority of servers store it",
            "When the leader appends it",
            "When every server stores it",
        ],
        correct: 0,
        why: "A majority is enough: any future leader must share at least one server with it.",
    },
};

pub fn info() -> Listing {
    let mut params = vec![
        servers_param(1),
        int_param(
            "writes",
            "Client writes",
            "How many `set` commands the client sends, one after another.",
            "6",
            1,
            12,
            "",
        ),
    ];
    params.extend(common_params());
    Listing {
        sections: "§6",
        title: "Raft: replicating the log",
        summary: "The client's writes go to the leader, which appends them and commits each once a majority stores it. The last follower answers slowly; with five servers or more, the one before it also crashes from 0.8 s to 1.6 s: the majority keeps committing, and the restarted follower is brought up to date.",
        params,
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let story = usual_timing(params);
    let told = [
        ("writes_committed", json!(num(params, "writes", 6))),
        ("first_leader", json!("S1")),
        ("logs_converged", json!(true)),
    ];
    promise(params, story, told)
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let servers = num(params, "servers", 5) as u32;
    // The last follower is slow; the one before it crashes for a while.
    let scripted = |cast: &RaftCast| {
        let n = cast.servers.len();
        let mut scripted = Vec::new();
        if n >= 3 {
            let last = cast.servers[n - 1];
            scripted.push((
                300,
                Fault::SlowNode {
                    node: last,
                    extra_ms: 40,
                },
            ));
        }
        if n >= 5 {
            let before_last = cast.servers[n - 2];
            scripted.push((800, Fault::Crash { node: before_last }));
            scripted.push((1_600, Fault::Restart { node: before_last }));
        }
        scripted
    };
    let (mut setup, cast) = build_with_world(
        params,
        ClusterPlan {
            servers,
            writes: num(params, "writes", 6) as u32,
            client_start_ms: 400,
            stop_at_ms: STOP_AT_MS,
            scripted: Some(Box::new(scripted)),
            stagger_first: true,
            ..ClusterPlan::default()
        },
        None,
    );
    raft_beats::log_replication(
        &mut setup,
        &cast,
        servers.clamp(1, MAX_SERVERS),
        num(params, "writes", 6),
    );
    setup
}
