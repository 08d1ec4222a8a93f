//! `lease-lifecycle`: both renewal rules reach their declared outcome for many seeds; the
//! correct rule shows the whole life of a lease, the buggy one makes a worker's own write
//! bounce off its own newer token.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(renewal: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("renewal".to_string(), renewal.to_string());
    RunRequest {
        scenario: "lease-lifecycle".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(renewal: &str, seed: u64) -> Trace {
    run(&request(renewal, seed), Limits::default(), Recording::Lines).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

/// The index of the first entry whose line or narration contains `needle`.
fn first(t: &Trace, needle: &str) -> usize {
    t.entries
        .iter()
        .position(|e| e.text.contains(needle) || e.notes.iter().any(|n| n.contains(needle)))
        .unwrap_or_else(|| panic!("no entry mentions {needle:?}"))
}

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    for renewal in ["keeps-token", "increments-token"] {
        for seed in 0..200 {
            let req = request(renewal, seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "renewal={renewal} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn the_lease_is_acquired_renewed_lost_taken_over_released_and_acquired_afresh_in_that_order() {
    for seed in [1, 7, 42] {
        let t = trace("keeps-token", seed);
        let steps = [
            first(&t, "worker-A holds it with token 1"),
            first(
                &t,
                "worker-A already owns account-42: the renewal extends it by 9 s and keeps token 1",
            ),
            first(&t, "worker-A crashes"),
            first(&t, "worker-B asks for account-42, but worker-A holds it"),
            first(&t, "worker-A's lease on account-42 (token 1) has expired"),
            first(&t, "worker-B takes it over: token 1 becomes 2"),
            first(&t, "worker-B takes over the job at step 2"),
            first(&t, "worker-B releases account-42; the row is deleted"),
            first(&t, "worker-A restarts"),
            first(&t, "worker-A holds it with token 3"),
            first(&t, "The job is already complete"),
        ];
        assert!(
            steps.windows(2).all(|w| w[0] < w[1]),
            "seed {seed}: out of order {steps:?}"
        );
        // The clean release is a compare-and-delete.
        let release = &t.entries[steps[7]];
        assert_eq!(
            release.text,
            "worker-B -> lease-store: DELETE lease account-42 WHERE owner = me"
        );
        assert_eq!(t.outcome["rejected_writes"], json!([]));
    }
}

#[test]
fn with_increments_token_the_workers_own_write_is_rejected_by_its_own_renewal() {
    for seed in [1, 7, 42] {
        let t = trace("increments-token", seed);
        let rejected = t.outcome["rejected_writes"].as_array().unwrap();
        assert_eq!(
            rejected[0],
            json!({"worker": "worker-A", "token": 1, "step": 1, "reason": "token 1 < 2: a newer holder exists"})
        );
        // The token that beat it is A's own: the second grant is A's renewal, and nobody else
        // was granted anything before A's write bounced.
        let grants = t.outcome["grants"].as_array().unwrap();
        assert_eq!(
            grants[1],
            json!({"worker": "worker-A", "token": 2, "kind": "renewal"})
        );
        let bounced = first(&t, "ledger -> worker-A: step 1: UPDATE 0 (rejected)");
        let b_granted = first(&t, "lease-store -> worker-B: granted");
        assert!(bounced < b_granted, "seed {seed}");
        assert!(
            t.entries[bounced]
                .notes
                .iter()
                .any(|n| n.contains("fenced itself out")),
            "seed {seed}: {:?}",
            t.entries[bounced].notes
        );
        assert_eq!(verdict(&t, "tokens-increase"), Verdict::Violated);
        assert_eq!(
            verdict(&t, "fence-monotonic"),
            Verdict::Holds,
            "the ledger did its job"
        );
        assert_eq!(verdict(&t, "job-completes"), Verdict::Violated);
    }
}

#[test]
fn keeping_the_token_lets_the_same_heartbeat_pattern_complete_the_job() {
    let t = trace("keeps-token", 3);
    let grants = t.outcome["grants"].as_array().unwrap();
    assert!(grants.iter().filter(|g| g["kind"] == "renewal").all(|g| {
        let holder_token = if g["worker"] == "worker-A" { 1 } else { 2 };
        g["token"] == holder_token
    }));
    assert_eq!(t.outcome["balance"], json!(80));
    assert_eq!(verdict(&t, "job-completes"), Verdict::Holds);
}

#[test]
fn every_step_is_narrated() {
    for renewal in ["keeps-token", "increments-token"] {
        for seed in 0..20 {
            let t = trace(renewal, seed);
            let silent: Vec<String> = t
                .entries
                .iter()
                .filter(|e| e.notes.is_empty())
                .map(|e| e.line())
                .collect();
            assert!(silent.is_empty(), "renewal={renewal} seed={seed}: {silent:#?}");
        }
    }
}
