//! `duplicate-job`: every variant reaches its declared outcome for many seeds; without a lock
//! both replicas debit, with a lease exactly one does and the other backs off for good — as
//! long as the second asks while the first holds the lease. A replica that fires after the
//! first let go runs the job again, unless the run's key is claimed too.

use coordlab_sim::kernel::faults::parse_script;
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

/// replica-B frozen for 5 s before its timer fires: it asks after replica-A has finished.
fn late_b(lock: &str, seed: u64) -> Trace {
    let req = RunRequest {
        actions: parse_script("2@pause:2:5000").unwrap(),
        ..request(lock, seed)
    };
    run(&req, Limits::default(), Recording::Lines).unwrap()
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
    for lock in ["none", "lease", "lease-and-run-key"] {
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
    for lock in ["none", "lease", "lease-and-run-key"] {
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

#[test]
fn a_lease_does_not_stop_a_replica_that_fires_after_the_first_run_finished() {
    for seed in 0..20 {
        let t = late_b("lease", seed);
        let grants = t.outcome["grants"].as_array().unwrap();
        assert_eq!(
            grants.len(),
            2,
            "seed {seed}: both get the lease, one after the other"
        );
        assert_eq!(t.outcome["max_concurrent_holders"], json!(1), "seed {seed}");
        assert_eq!(t.outcome["balance"], json!(40), "seed {seed}");
        assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated);
        let grant_b = t
            .entries
            .iter()
            .find(|e| e.text.starts_with("lease-store -> replica-B: granted"))
            .unwrap();
        assert!(
            grant_b.notes.iter().any(|n| n
                .contains("A lease keeps copies from overlapping; it does not remember that a run happened")),
            "seed {seed}: {:?}",
            grant_b.notes
        );
    }
}

#[test]
fn with_a_run_key_the_late_replica_finds_the_run_taken_and_does_nothing() {
    for seed in 0..20 {
        let t = late_b("lease-and-run-key", seed);
        assert_eq!(t.outcome["balance"], json!(70), "seed {seed}");
        assert_eq!(t.outcome["conflicts"], json!(1), "seed {seed}");
        assert_eq!(t.outcome["finished_by"], json!(["replica-A"]), "seed {seed}");
        assert_eq!(verdict(&t, "no-double-debit"), Verdict::Holds);
        assert!(t
            .entries
            .iter()
            .any(|e| e.text == "ledger -> replica-B: duplicate key: ROLLBACK"
                && e.notes.iter().any(|n| n.contains("this run happened"))));
    }
}

/// `lock=lease-and-run-key`, seed 1, with replica-A crashed as the entry after `after`
/// (the first entry whose text starts with it) — replica-A wins the lease with seed 1.
fn crash_a_after(after: &str) -> Trace {
    let plain = trace("lease-and-run-key", 1);
    let at = plain
        .entries
        .iter()
        .position(|e| e.text.starts_with(after))
        .unwrap_or_else(|| panic!("no entry `{after}`"));
    let req = RunRequest {
        actions: parse_script(&format!("{}@crash:1", at + 1)).unwrap(),
        ..request("lease-and-run-key", 1)
    };
    run(&req, Limits::default(), Recording::Lines).unwrap()
}

/// The beats reached, in the order they happened.
fn beat_titles(t: &Trace) -> Vec<String> {
    let mut reached: Vec<(u32, String)> = t.reached_beats().map(|(s, b)| (s, b.title.clone())).collect();
    reached.sort();
    reached.into_iter().map(|(_, title)| title).collect()
}

#[test]
fn a_holder_that_crashes_before_its_commit_leaves_the_run_to_the_other_replica_exactly_once() {
    let t = crash_a_after("lease-store -> replica-A: granted");
    assert_eq!(t.outcome["balance"], json!(70), "the job is done once");
    assert_eq!(t.outcome["finished_by"], json!(["replica-B"]));
    assert_eq!(verdict(&t, "job-completes"), Verdict::Holds);
    assert_eq!(verdict(&t, "no-double-debit"), Verdict::Holds);
    let crashed = t
        .entries
        .iter()
        .position(|e| e.text == "replica-A crashes")
        .unwrap();
    let (debit_at, _) = t
        .reached_beats()
        .find(|(_, b)| b.title == "The debit and the run key commit together")
        .expect("the debit beat");
    assert!(
        debit_at as usize > crashed,
        "replica-B commits after replica-A's crash"
    );
}

#[test]
fn a_holder_that_crashes_after_its_commit_has_done_the_job_and_the_retry_rolls_back() {
    let t = crash_a_after("replica-A -> ledger: BEGIN; INSERT INTO job_run");
    assert_eq!(t.outcome["balance"], json!(70));
    assert_eq!(t.outcome["conflicts"], json!(1), "replica-B's attempt rolls back");
    assert_eq!(
        t.outcome["finished_by"],
        json!([]),
        "nobody heard the commit, but the key is there"
    );
    assert_eq!(verdict(&t, "job-completes"), Verdict::Holds);
    assert_eq!(verdict(&t, "no-double-debit"), Verdict::Holds);
    assert!(beat_titles(&t).contains(&"A second attempt finds the key and rolls back".to_string()));
}

#[test]
fn the_run_key_variant_tells_its_own_story_in_its_beats() {
    let t = trace("lease-and-run-key", 1);
    assert_eq!(
        beat_titles(&t),
        [
            "2am: the job fires on both replicas",
            "One replica gets the lease",
            "The other replica backs off, to ask again",
            "The debit and the run key commit together",
            "The lease goes; the run key stays",
            "A second attempt finds the key and rolls back",
        ]
    );
}
