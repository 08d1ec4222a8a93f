//! `lock-granularity`: without an index the update by e-mail locks every row it scans and the
//! unrelated update waits; with the index it locks one row and nobody waits.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest};
use serde_json::json;

fn request(index: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("index".to_string(), index.to_string());
    RunRequest {
        scenario: "lock-granularity".to_string(),
        params,
        seed,
        actions: vec![],
    }
}

#[test]
fn both_variants_meet_their_expectation_for_every_seed() {
    for index in ["no", "yes"] {
        for seed in 0..200 {
            let req = request(index, seed);
            let trace = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&trace);
            assert!(miss.is_empty(), "index={index} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn without_the_index_support_waits_about_as_long_as_billing_holds_its_transaction() {
    let t = run(&request("no", 1), Limits::default(), Recording::Summary).unwrap();
    let waited = t.outcome["total_wait_ms"].as_u64().unwrap();
    assert!((80..=110).contains(&waited), "{waited}");
    let t = run(&request("yes", 1), Limits::default(), Recording::Summary).unwrap();
    assert_eq!(t.outcome["total_wait_ms"], json!(0));
}
