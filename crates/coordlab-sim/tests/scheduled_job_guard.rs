//! `scheduled-job-guard`: ShedLock's row gives one run per schedule while the clocks agree;
//! an instance whose clock runs ahead, with `:now` from the database, lets the job run twice
//! unless lockAtLeastFor covers the skew.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest};
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
