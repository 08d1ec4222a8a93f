//! `hazelcast-fenced-lock`: the paused holder's write with the old fence is refused by a
//! storage that compares fences, and lands at one that does not.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest};
use serde_json::json;

fn request(pairs: &[(&str, &str)], seed: u64) -> RunRequest {
    let params: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RunRequest {
        scenario: "hazelcast-fenced-lock".into(),
        params,
        seed,
        actions: vec![],
    }
}

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    for storage in ["checks-fence", "ignores-fence"] {
        for seed in 0..100 {
            let req = request(&[("storage", storage)], seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "storage={storage} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn the_old_fence_is_refused_and_the_holder_stops() {
    let t = run(&request(&[], 1), Limits::default(), Recording::Lines).unwrap();
    assert_eq!(t.outcome["stale_writes_refused"], json!(1));
    assert_eq!(t.outcome["stale_writes_applied"], json!(0));
    assert!(t
        .entries
        .iter()
        .any(|e| e.text.contains("client-A -> storage: write step 2 with #41")));
    assert!(t
        .entries
        .iter()
        .any(|e| e.notes.iter().any(|n| n.contains("abandons the job"))));
}
