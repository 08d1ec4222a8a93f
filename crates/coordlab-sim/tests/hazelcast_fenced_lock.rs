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

/// A pause shorter than the session TTL: A wakes with its session open and finishes, and only
/// then does B get the lock. The two beats that say so fire in order, after A's last write and
/// with one holder at a time; in the default story (a pause past the TTL) neither fires.
#[test]
fn a_short_pause_is_told_as_a_wake_in_time() {
    for seed in 0..30 {
        for pause in ["5000", "10000", "20000"] {
            let req = request(&[("pause_ms", pause)], seed);
            let t = run(&req, Limits::default(), Recording::Lines).unwrap();
            let fired: Vec<(&str, u32)> = t
                .beats
                .iter()
                .filter_map(|b| Some((b.key.as_str(), b.seq?)))
                .collect();
            let keys: Vec<&str> = fired.iter().map(|(k, _)| *k).collect();
            assert_eq!(
                keys,
                ["a-locks", "a-freezes", "a-wakes-in-time", "b-after-a"],
                "pause {pause} seed {seed}"
            );
            assert_eq!(t.outcome["max_concurrent_holders"], json!(1));
            let b_locks = fired[3].1 as usize;
            let a_last_write = t
                .entries
                .iter()
                .rposition(|e| e.text.starts_with("client-A -> storage: write"))
                .expect("A writes");
            assert!(
                a_last_write < b_locks,
                "pause {pause} seed {seed}: B locked at {b_locks}, A wrote at {a_last_write}"
            );
        }
        let t = run(&request(&[], seed), Limits::default(), Recording::Summary).unwrap();
        assert!(!t
            .beats
            .iter()
            .any(|b| b.key == "a-wakes-in-time" || b.key == "b-after-a"));
    }
}
