//! `zombie-worker`: every fencing variant reaches its declared outcome for many seeds, and the
//! centrepiece story happens as the curriculum tells it.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(pairs: &[(&str, &str)], seed: u64) -> RunRequest {
    let params: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RunRequest {
        scenario: "zombie-worker".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(pairs: &[(&str, &str)], seed: u64) -> Trace {
    run(&request(pairs, seed), Limits::default(), Recording::Lines).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    for fencing in [
        "none",
        "write-predicate",
        "app-check",
        "first-write-only",
        "retry-after-reject",
    ] {
        for seed in 0..200 {
            let req = request(&[("fencing", fencing)], seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "fencing={fencing} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn with_the_write_predicate_b_34_is_accepted_and_a_33_is_rejected() {
    let t = trace(&[("fencing", "write-predicate")], 1);
    let accepted = t.outcome["accepted_writes"].as_array().unwrap();
    assert!(accepted
        .iter()
        .all(|w| w["worker"] == "worker-B" && w["token"] == 34));
    assert_eq!(accepted.len(), 4);
    assert_eq!(
        t.outcome["rejected_writes"],
        json!([{"worker": "worker-A", "token": 33, "step": 1, "reason": "token 33 < 34: a newer holder exists"}])
    );
    assert_eq!(t.outcome["balance"], json!(60));
    assert_eq!(t.outcome["max_concurrent_holders"], json!(2));
}

#[test]
fn the_story_follows_the_curriculum_timeline() {
    let t = trace(&[("fencing", "none")], 3);
    let grants = t.outcome["grants"].as_array().unwrap();
    // A takes over the row an earlier run left at fence_token 32: the counter lives on the row.
    assert_eq!(
        grants[0],
        json!({"worker": "worker-A", "token": 33, "kind": "takeover"})
    );
    assert_eq!(
        grants[1],
        json!({"worker": "worker-B", "token": 34, "kind": "takeover"})
    );
    let at = |needle: &str| {
        t.entries
            .iter()
            .find(|e| e.text.contains(needle))
            .unwrap_or_else(|| panic!("{needle}"))
            .time_us
    };
    let expiry = at("(token 33) reaches its expiry");
    let takeover = at("granted account-42, token 34");
    let wake = at("worker-A resumes");
    assert!((30_000_000..30_200_000).contains(&expiry), "{expiry}");
    assert!(takeover > expiry && takeover < wake);
    assert_eq!(wake, 41_000_000);
    // Without fencing the zombie's write lands after B's.
    let a_write = t
        .entries
        .iter()
        .position(|e| e.text.contains("worker-A -> ledger: step 1"))
        .unwrap();
    let b_write = t
        .entries
        .iter()
        .position(|e| e.text.contains("worker-B -> ledger: step 1"))
        .unwrap();
    assert!(b_write < a_write);
    assert_eq!(verdict(&t, "fence-monotonic"), Verdict::Violated);
}

#[test]
fn app_check_passes_before_the_pause_and_the_stale_write_lands_after() {
    let t = trace(&[("fencing", "app-check")], 1);
    let check = t
        .entries
        .iter()
        .position(|e| e.text.contains("ledger -> worker-A: last_token = 0"))
        .expect("A checked");
    let b_write = t
        .entries
        .iter()
        .position(|e| e.text.contains("worker-B -> ledger: step 1"))
        .unwrap();
    let a_write = t
        .entries
        .iter()
        .position(|e| e.text.contains("worker-A -> ledger: step 1"))
        .unwrap();
    assert!(
        check < b_write && b_write < a_write,
        "B's write slips between A's check and A's write"
    );
    assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated);
}

#[test]
fn first_write_only_blocks_the_zombie_at_step_one_but_not_later() {
    let blocked = trace(&[("fencing", "first-write-only"), ("pause_start_ms", "1000")], 4);
    assert_eq!(verdict(&blocked, "no-double-debit"), Verdict::Holds);
    let free = trace(&[("fencing", "first-write-only"), ("pause_start_ms", "5000")], 4);
    assert_eq!(verdict(&free, "no-double-debit"), Verdict::Violated);
    let stale = free.outcome["accepted_writes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["worker"] == "worker-A" && w["step"] == 2);
    assert!(
        stale,
        "A's unfenced step 2 lands: {}",
        free.outcome["accepted_writes"]
    );
}

#[test]
fn retrying_after_a_rejection_runs_the_job_twice() {
    let t = trace(&[("fencing", "retry-after-reject")], 1);
    assert_eq!(t.outcome["balance"], json!(20));
    assert_eq!(
        verdict(&t, "fence-monotonic"),
        Verdict::Holds,
        "the retry holds a genuine, newer token"
    );
    assert!(t.outcome["grants"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["worker"] == "worker-A" && g["token"] == 35));
}

#[test]
fn without_a_pause_a_does_the_job_and_b_finds_it_done() {
    let t = trace(&[("fencing", "none"), ("pause_ms", "0")], 1);
    assert_eq!(t.outcome["balance"], json!(60));
    assert_eq!(t.outcome["max_concurrent_holders"], json!(1));
    assert!(
        t.properties.iter().all(|p| p.verdict == Verdict::Holds),
        "{:?}",
        t.properties
    );
}

#[test]
fn the_unsafe_window_is_highlighted_while_both_believe() {
    let t = run(
        &request(&[("fencing", "write-predicate")], 1),
        Limits::default(),
        Recording::Full,
    )
    .unwrap();
    let flagged: Vec<u64> = t
        .entries
        .iter()
        .filter(|e| e.snapshot.as_ref().unwrap().highlight.is_some())
        .map(|e| e.time_us)
        .collect();
    assert!(!flagged.is_empty());
    assert!(
        flagged.iter().all(|&us| (30_000_000..=41_100_000).contains(&us)),
        "{flagged:?}"
    );
}
