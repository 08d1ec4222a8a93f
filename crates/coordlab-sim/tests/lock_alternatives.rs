//! `lock-alternatives`: for every method and seed exactly one replica runs the 2am job; the
//! insert and the update are decided by the database (either replica can win), and
//! partitioning needs no arbiter at all.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;
use std::collections::BTreeSet;

const METHODS: [&str; 3] = ["unique-constraint", "conditional-update", "partitioning"];

fn request(method: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("method".into(), method.into());
    RunRequest {
        scenario: "lock-alternatives".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(method: &str, seed: u64, recording: Recording) -> Trace {
    run(&request(method, seed), Limits::default(), recording).unwrap()
}

fn winner(t: &Trace) -> String {
    let finished = t.outcome["finished_by"].as_array().unwrap();
    assert_eq!(finished.len(), 1, "seed {}: {finished:?}", t.seed);
    finished[0].as_str().unwrap().to_string()
}

#[test]
fn every_method_meets_its_expectation_across_seeds() {
    for method in METHODS {
        let expected = expectation_for(&request(method, 0)).unwrap();
        for seed in 0..200 {
            let t = trace(method, seed, Recording::Summary);
            let miss = expected.mismatches(&t);
            assert!(miss.is_empty(), "method={method} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn exactly_one_replica_runs_the_job_for_every_method_and_seed() {
    for method in METHODS {
        for seed in 0..200 {
            let t = trace(method, seed, Recording::Summary);
            let who = winner(&t);
            let writes = t.outcome["accepted_writes"].as_array().unwrap();
            assert_eq!(writes.len(), 2, "method={method} seed={seed}");
            assert!(
                writes.iter().all(|w| w["worker"] == json!(who)),
                "method={method} seed={seed}: {writes:?}"
            );
            assert_eq!(t.outcome["balance"], json!(60), "method={method} seed={seed}");
        }
    }
}

#[test]
fn the_database_picks_either_replica_but_partitioning_always_routes_to_a() {
    for method in ["unique-constraint", "conditional-update"] {
        let winners: BTreeSet<String> = (0..40)
            .map(|seed| winner(&trace(method, seed, Recording::Summary)))
            .collect();
        assert_eq!(winners.len(), 2, "{method}: {winners:?}");
    }
    let winners: BTreeSet<String> = (0..40)
        .map(|seed| winner(&trace("partitioning", seed, Recording::Summary)))
        .collect();
    assert_eq!(winners, BTreeSet::from(["replica-A".to_string()]));
}

#[test]
fn the_loser_hears_it_from_the_database_and_partitioning_asks_nobody() {
    for (method, refusal) in [
        ("unique-constraint", "job-db -> replica-"),
        ("conditional-update", "job-db -> replica-"),
    ] {
        let t = trace(method, 1, Recording::Lines);
        assert_eq!(t.outcome["conflicts"], json!(1));
        let answers: Vec<&str> = t
            .entries
            .iter()
            .filter(|e| e.text.starts_with(refusal))
            .map(|e| e.text.rsplit(": ").next().unwrap())
            .collect();
        assert_eq!(answers, vec!["1 row(s)", "0 row(s)"], "{method}");
    }
    let t = trace("partitioning", 1, Recording::Lines);
    assert_eq!(t.outcome["conflicts"], json!(0));
    assert!(t.nodes.iter().all(|n| n.name != "job-db"));
    // The only messages are replica-A's writes and the ledger's answers.
    assert!(t
        .entries
        .iter()
        .filter(|e| e.message.is_some())
        .all(|e| e.text.starts_with("replica-A -> ledger") || e.text.starts_with("ledger -> replica-A")));
    assert!(t.entries.iter().any(|e| e
        .notes
        .iter()
        .any(|n| n.contains("replica-B does not consume the partition"))));
}
