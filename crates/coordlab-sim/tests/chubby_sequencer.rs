//! `chubby-sequencer`: lock-delay covers only writes that arrive within it; the storage's
//! sequencer check refuses a late write however late it is.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest};
use serde_json::json;

fn request(pairs: &[(&str, &str)], seed: u64) -> RunRequest {
    let params: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RunRequest {
        scenario: "chubby-sequencer".into(),
        params,
        seed,
        actions: vec![],
    }
}

const CASES: &[&[(&str, &str)]] = &[
    &[],
    &[("check", "yes")],
    &[("lock_delay_ms", "0")],
    &[("lock_delay_ms", "0"), ("check", "yes")],
    &[("write_delay_ms", "30000")],
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
fn lock_delay_covers_a_write_that_arrives_within_it_and_the_check_covers_any() {
    let applied = |pairs: &[(&str, &str)]| {
        let t = run(&request(pairs, 1), Limits::default(), Recording::Summary).unwrap();
        (
            t.outcome["stale_writes_applied"].clone(),
            t.outcome["stale_writes_refused"].clone(),
        )
    };
    // 90 s late: past the 60 s lock-delay, after B's writes.
    assert_eq!(applied(&[("check", "no")]), (json!(1), json!(0)));
    assert_eq!(applied(&[("check", "yes")]), (json!(0), json!(1)));
    // 30 s late: inside the lock-delay, before B could take the lock.
    assert_eq!(
        applied(&[("check", "no"), ("write_delay_ms", "30000")]),
        (json!(0), json!(0))
    );
}
