//! `scheduled-job-guard`: ShedLock's row gives one run per schedule while the clocks agree;
//! an instance whose clock runs ahead, with `:now` from the database, lets the job run twice
//! unless lockAtLeastFor covers the skew.

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
        scenario: "scheduled-job-guard".into(),
        params,
        seed,
        actions: vec![],
    }
}

const CASES: &[&[(&str, &str)]] = &[
    &[],
    &[("skew", "none")],
    &[("now", "app")],
    &[("lock_at_least_for_ms", "30000")],
    &[("skew_ms", "3000")],
    &[("skew", "jumps")],
    &[("skew", "jumps"), ("now", "app")],
    &[
        ("skew", "jumps"),
        ("now", "app"),
        ("lock_at_most_for_ms", "40000"),
    ],
    &[("lock_at_least_for_ms", "55000")],
];

#[test]
fn every_case_meets_its_expectation_across_seeds() {
    for pairs in CASES {
        for seed in 0..100 {
            let req = request(pairs, seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "{pairs:?} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn runs_per_schedule() {
    let runs = |pairs: &[(&str, &str)]| {
        let t = run(&request(pairs, 1), Limits::default(), Recording::Summary).unwrap();
        t.outcome["max_runs_per_schedule"].clone()
    };
    assert_eq!(runs(&[("skew", "none")]), json!(1));
    assert_eq!(runs(&[("skew", "ahead")]), json!(2));
    assert_eq!(
        runs(&[("skew", "ahead"), ("lock_at_least_for_ms", "30000")]),
        json!(1)
    );
    assert_eq!(runs(&[("skew", "ahead"), ("now", "app")]), json!(1));
}

fn trace(pairs: &[(&str, &str)]) -> Trace {
    run(&request(pairs, 1), Limits::default(), Recording::Lines).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

fn beat_text(t: &Trace, key: &str) -> String {
    let b = t
        .beats
        .iter()
        .find(|b| b.key == key)
        .unwrap_or_else(|| panic!("no beat {key}"));
    assert!(b.seq.is_some(), "beat {key} never happens");
    b.text.clone()
}

#[test]
fn application_time_gives_one_run_with_a_caveat() {
    let t = trace(&[("skew", "ahead"), ("now", "app")]);
    let why = beat_text(&t, "skipped");
    assert!(why.contains("usingDbTime()"), "{why}");
    assert!(
        why.contains("only because the instance ahead fired first"),
        "{why}"
    );
}

#[test]
fn a_clock_that_jumps_ahead_steals_a_running_lock_with_application_time() {
    let t = trace(&[("skew", "jumps"), ("now", "app")]);
    assert_eq!(verdict(&t, "one-run-at-a-time"), Verdict::Violated);
    assert_eq!(t.outcome["max_runs_per_schedule"], json!(2));
    assert!(beat_text(&t, "two-at-once").contains("app-1 is mid-run"));
    // usingDbTime(): the running lock is never taken from its holder.
    let t = trace(&[("skew", "jumps"), ("now", "db")]);
    assert_eq!(verdict(&t, "one-run-at-a-time"), Verdict::Holds);
    assert!(beat_text(&t, "skipped").contains("usingDbTime()"));
}

/// ShedLock refuses lockAtLeastFor above lockAtMostFor (LockConfiguration throws at every
/// firing): no instance runs the job, the only beat says why, and the same settings one
/// millisecond apart the other way run as usual.
#[test]
fn lock_at_least_for_above_lock_at_most_for_is_refused_and_nothing_runs() {
    let t = trace(&[("lock_at_least_for_ms", "50001")]);
    assert_eq!(t.outcome["runs"], json!(0));
    let fired: Vec<&str> = t
        .beats
        .iter()
        .filter(|b| b.seq.is_some())
        .map(|b| b.key.as_str())
        .collect();
    assert_eq!(fired, ["refused"]);
    assert!(beat_text(&t, "refused").contains("longer than lockAtMostFor"));
    let refusals = t
        .entries
        .iter()
        .filter(|e| e.notes.iter().any(|n| n.contains("IllegalArgumentException")))
        .count();
    assert_eq!(refusals, 6, "two instances, three schedules each");
    // The apps' cards say so from the first firing on, where a trainer looks.
    let full = run(
        &request(&[("lock_at_least_for_ms", "50001")], 1),
        Limits::default(),
        Recording::Full,
    )
    .unwrap();
    let last = full
        .entries
        .last()
        .and_then(|e| e.snapshot.as_deref())
        .expect("a full recording");
    for (node, view) in full.nodes.iter().zip(&last.nodes) {
        if node.name.starts_with("app-") {
            assert_eq!(view.summary.word, "refused", "{}", node.name);
        }
    }
    let equal = trace(&[("lock_at_least_for_ms", "50000")]);
    assert!(
        equal.outcome["runs"].as_u64().unwrap() >= 3,
        "{:?}",
        equal.outcome
    );
    assert!(!equal.beats.iter().any(|b| b.key == "refused"));
}
