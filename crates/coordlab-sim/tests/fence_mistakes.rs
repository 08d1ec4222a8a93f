//! `fence-mistakes`: the zombie story with four wrong fences and the right one. Each wrong
//! fence lets A's stale step 2 land; the lease table's counter refuses it. Every variant meets
//! its declared expectation over many seeds.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

const VARIANTS: [&str; 5] = [
    "timestamp",
    "random-id",
    "per-process-counter",
    "reread-token",
    "lease-counter",
];

fn request(fence: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("fence".to_string(), fence.to_string());
    RunRequest {
        scenario: "fence-mistakes".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(fence: &str) -> Trace {
    run(&request(fence, 1), Limits::default(), Recording::Lines).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

/// A's accepted write of step 2, if any: the stale write.
fn a_step_2_landed(t: &Trace) -> bool {
    t.outcome["accepted_writes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["worker"] == json!("worker-A") && w["step"] == json!(2))
}

#[test]
fn every_variant_meets_its_expectation_over_many_seeds() {
    for fence in VARIANTS {
        for seed in 0..100 {
            let req = request(fence, seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let missed = expectation_for(&req).unwrap().mismatches(&t);
            assert!(missed.is_empty(), "{fence} seed {seed}: {missed:?}");
        }
    }
}

#[test]
fn each_wrong_fence_lets_the_stale_write_land_and_the_lease_counter_does_not() {
    for fence in VARIANTS {
        let t = trace(fence);
        let correct = fence == "lease-counter";
        assert_eq!(a_step_2_landed(&t), !correct, "{fence}");
        assert_eq!(
            verdict(&t, "no-stale-write"),
            if correct {
                Verdict::Holds
            } else {
                Verdict::Violated
            },
            "{fence}"
        );
    }
}

#[test]
fn a_clock_ahead_or_a_larger_random_id_gets_the_real_holder_refused() {
    for fence in ["timestamp", "random-id"] {
        let t = trace(fence);
        let rejected = t.outcome["rejected_writes"].as_array().unwrap().clone();
        assert_eq!(rejected.len(), 1, "{fence}");
        assert_eq!(rejected[0]["worker"], json!("worker-B"), "{fence}");
        assert_eq!(t.outcome["finished_by"], json!(["worker-A"]), "{fence}");
    }
}

#[test]
fn both_processes_count_to_one_and_a_reread_picks_up_the_new_holders_34() {
    let t = trace("per-process-counter");
    assert!(t.outcome["accepted_writes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["token"] == json!(1)));
    let t = trace("reread-token");
    let a: Vec<u64> = t.outcome["accepted_writes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["worker"] == json!("worker-A"))
        .map(|w| w["token"].as_u64().unwrap())
        .collect();
    assert_eq!(a, [33, 34, 34, 34]);
    assert!(t
        .entries
        .iter()
        .any(|e| e.notes.iter().any(|n| n.contains("fences itself back in"))));
}
