//! `duplicate-job`: both variants reach their declared outcome for many seeds; without a lock
//! both replicas debit, with a lease exactly one does and the other backs off for good.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(lock: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("lock".to_string(), lock.to_string());
    RunRequest {
        scenario: "duplicate-job".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(lock: &str, seed: u64) -> Trace {
    run(&request(lock, seed), Limits::default(), Recording::Lines).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

/// How many entries are a given worker's acquire request arriving at the store.
fn acquires_by(t: &Trace, worker: &str) -> usize {
    let needle = format!("{worker} -> lease-store: acquire");
    t.entries.iter().filter(|e| e.text.contains(&needle)).count()
}

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    for lock in ["none", "lease"] {
        for seed in 0..200 {
            let req = request(lock, seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "lock={lock} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn without_a_lock_both_replicas_run_the_job_and_the_account_is_debited_twice() {
    let t = trace("none", 1);
    let writers: Vec<&str> = t.outcome["accepted_writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["worker"].as_str().unwrap())
        .collect();
    assert_eq!(writers.len(), 2, "{writers:?}");
    assert!(
        writers.contains(&"replica-A") && writers.contains(&"replica-B"),
        "{writers:?}"
    );
    assert_eq!(t.outcome["balance"], json!(40));
    assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated);
    assert_eq!(
        acquires_by(&t, "replica-A") + acquires_by(&t, "replica-B"),
        0,
        "nobody asked the store"
    );
}

#[test]
fn with_a_lease_exactly_one_replica_runs_and_the_other_asks_once_and_backs_off() {
    let mut winners = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let t = trace("lease", seed);
        let grants = t.outcome["grants"].as_array().unwrap();
        assert_eq!(grants.len(), 1, "seed {seed}: {grants:?}");
        let winner = grants[0]["worker"].as_str().unwrap().to_string();
        let loser = if winner == "replica-A" {
            "replica-B"
        } else {
            "replica-A"
        };
        let writes = t.outcome["accepted_writes"].as_array().unwrap();
        assert_eq!(writes.len(), 1, "seed {seed}");
        assert_eq!(writes[0]["worker"], json!(winner), "seed {seed}");
        assert_eq!(t.outcome["finished_by"], json!([winner]), "seed {seed}");
        assert_eq!(
            acquires_by(&t, loser),
            1,
            "seed {seed}: the loser asks exactly once"
        );
        assert!(
            t.entries
                .iter()
                .any(|e| e.text == format!("lease-store -> {loser}: job:nightly-debit is held: zero rows")),
            "seed {seed}: the loser is told the lease is held"
        );
        assert_eq!(t.outcome["balance"], json!(70));
        winners.insert(winner);
    }
    assert_eq!(
        winners.len(),
        2,
        "the start jitter lets either replica win: {winners:?}"
    );
}

#[test]
fn every_step_is_narrated() {
    for lock in ["none", "lease"] {
        for seed in 0..20 {
            let t = trace(lock, seed);
            let silent: Vec<String> = t
                .entries
                .iter()
                .filter(|e| e.notes.is_empty())
                .map(|e| e.line())
                .collect();
            assert!(silent.is_empty(), "lock={lock} seed={seed}: {silent:#?}");
        }
    }
}
