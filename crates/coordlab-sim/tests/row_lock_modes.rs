//! `row-lock-modes`: every combination of modes waits exactly as PostgreSQL's conflict table
//! says, and no two holders ever hold conflicting modes.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest};
use serde_json::json;

const MODES: [&str; 7] = [
    "read",
    "key-share",
    "share",
    "no-key-update",
    "update",
    "update-name",
    "insert-child",
];

fn request(t1: &str, t2: &str, t3: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    for (k, v) in [("t1", t1), ("t2", t2), ("t3", t3)] {
        params.insert(k.to_string(), v.to_string());
    }
    RunRequest {
        scenario: "row-lock-modes".to_string(),
        params,
        seed,
        actions: vec![],
    }
}

#[test]
fn every_combination_of_modes_meets_its_expectation() {
    for t1 in MODES {
        for t2 in MODES {
            for t3 in MODES.iter().copied().chain(["none"]) {
                let req = request(t1, t2, t3, 7);
                let trace = run(&req, Limits::default(), Recording::Summary).unwrap();
                let miss = expectation_for(&req).unwrap().mismatches(&trace);
                assert!(miss.is_empty(), "{t1} {t2} {t3}: {miss:?}");
            }
        }
    }
}

fn waited(t1: &str, t2: &str) -> bool {
    let trace = run(&request(t1, t2, "none", 1), Limits::default(), Recording::Summary).unwrap();
    trace.outcome["txn_2_waited"] == json!(true)
}

#[test]
fn the_foreign_key_check_waits_only_for_for_update() {
    assert!(
        !waited("update-name", "insert-child"),
        "NO KEY UPDATE lets the child insert through"
    );
    assert!(!waited("share", "insert-child"));
    assert!(
        waited("update", "insert-child"),
        "FOR UPDATE blocks even FOR KEY SHARE"
    );
}

#[test]
fn plain_reads_never_wait_and_are_never_waited_for() {
    for m in MODES {
        assert!(!waited(m, "read"), "{m} then read");
        assert!(!waited("read", m), "read then {m}");
    }
}

#[test]
fn share_locks_share_and_update_locks_do_not() {
    assert!(!waited("share", "share"));
    assert!(waited("share", "no-key-update"));
    assert!(waited("no-key-update", "no-key-update"));
    assert!(!waited("key-share", "no-key-update"));
}
