//! The player draws a trace recorded without snapshots and asks [`LazySnapshots`] for the
//! state of the step on screen: that state must be exactly the one a full recording holds,
//! in any order of asking, with faults injected, to the end of the run and past it.

use coordlab_sim::kernel::faults::Action;
use coordlab_sim::scenarios::{LazySnapshots, Params};
use coordlab_sim::{run, Fault, Limits, NodeId, Recording, RunRequest};

fn request(id: &str, actions: Vec<Action>) -> RunRequest {
    RunRequest {
        scenario: id.into(),
        params: Params::new(),
        seed: 3,
        actions,
    }
}

#[test]
fn every_snapshot_equals_the_full_recording_s() {
    let pause = vec![Action {
        at_step: 9,
        fault: Fault::Pause {
            node: NodeId(1),
            duration_ms: 40_000,
        },
    }];
    let crash = vec![Action {
        at_step: 40,
        fault: Fault::Crash { node: NodeId(0) },
    }];
    for req in [
        request("zombie-worker", vec![]),
        request("zombie-worker", pause),
        request("raft-election", crash),
        request("redis-failover", vec![]),
        request("lost-update", vec![]),
    ] {
        let full = run(&req, Limits::default(), Recording::Full).unwrap();
        let lines = run(&req, Limits::default(), Recording::Lines).unwrap();
        assert_eq!(lines.entries.len(), full.entries.len());
        let mut lazy = LazySnapshots::new(&req, Limits::default()).unwrap();
        let n = full.entries.len();
        // Ask forwards, then jump back and forth, as stepping and seeking do.
        let order = (0..n).step_by(7).chain([n - 1, 0, n / 2, 1]).chain(0..n);
        for i in order {
            let want = full.entries[i].snapshot.as_ref().unwrap();
            assert_eq!(lazy.at(i).as_deref(), Some(&**want), "{} step {i}", req.scenario);
            assert_eq!(
                lines.entries[i].highlight, want.highlight,
                "{} step {i}",
                req.scenario
            );
            assert!(lines.entries[i].snapshot.is_none());
        }
        assert_eq!(lazy.at(n), None, "past the end");
        assert_eq!(lazy.at(n + 5), None);
        assert!(lazy.at(n - 1).is_some());
    }
}

#[test]
fn the_unsafe_window_is_on_the_entries_without_snapshots() {
    let lines = run(
        &request("zombie-worker", vec![]),
        Limits::default(),
        Recording::Lines,
    )
    .unwrap();
    assert!(lines.entries.iter().any(|e| e.highlight.is_some()));
}
