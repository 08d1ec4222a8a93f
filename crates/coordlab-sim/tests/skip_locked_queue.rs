//! Each `skip-locked-queue` variant reaches its declared outcome, whatever the seed and the
//! number of workers.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(claim: &str, workers: u32, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("claim".to_string(), claim.to_string());
    params.insert("workers".to_string(), workers.to_string());
    RunRequest {
        scenario: "skip-locked-queue".to_string(),
        params,
        seed,
        actions: vec![],
    }
}

fn runs(claim: &str) -> impl Iterator<Item = (u32, u64, Trace)> + '_ {
    (2..=5).flat_map(move |workers| {
        (0..60).map(move |seed| {
            let req = request(claim, workers, seed);
            let trace = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&trace);
            assert!(miss.is_empty(), "{claim} workers={workers} seed={seed}: {miss:?}");
            (workers, seed, trace)
        })
    })
}

fn verdict(trace: &Trace, name: &str) -> Verdict {
    trace.properties.iter().find(|p| p.name == name).unwrap().verdict
}

#[test]
fn skip_locked_gives_every_worker_its_own_job_and_nobody_waits() {
    for (w, seed, t) in runs("skip-locked") {
        assert_eq!(t.outcome["total_wait_ms"], json!(0), "workers={w} seed={seed}");
        assert_eq!(t.outcome["jobs_done_twice"], json!(0));
    }
}

#[test]
fn plain_for_update_makes_workers_wait_but_never_fail() {
    for (w, seed, t) in runs("for-update") {
        assert!(
            t.outcome["lock_waits"].as_u64().unwrap() > 0,
            "workers={w} seed={seed}"
        );
        assert!(t.outcome["total_wait_ms"].as_u64().unwrap() > 0);
        assert_eq!(t.outcome["errors"], json!(0));
    }
}

#[test]
fn nowait_fails_fast_and_the_retries_still_finish_every_job() {
    for (w, seed, t) in runs("nowait") {
        assert!(
            t.outcome["errors"].as_u64().unwrap() > 0,
            "workers={w} seed={seed}"
        );
        assert_eq!(t.outcome["total_wait_ms"], json!(0));
        assert_eq!(verdict(&t, "no-job-done-twice"), Verdict::Holds);
    }
}

#[test]
fn a_plain_select_lets_two_workers_do_the_same_job() {
    for (w, seed, t) in runs("plain") {
        assert!(
            t.outcome["jobs_done_twice"].as_u64().unwrap() > 0,
            "workers={w} seed={seed}"
        );
        assert_eq!(verdict(&t, "no-job-done-twice"), Verdict::Violated);
    }
}

/// SKIP LOCKED spreads the work: with three workers the six jobs take about two rounds of
/// work, where FOR UPDATE serialises them.
#[test]
fn skip_locked_finishes_sooner_than_for_update() {
    let end = |claim: &str| {
        let t = run(&request(claim, 3, 1), Limits::default(), Recording::Summary).unwrap();
        t.outcome["last_job_committed_at_ms"].as_u64().unwrap()
    };
    assert!(
        end("skip-locked") * 2 < end("for-update"),
        "{} vs {}",
        end("skip-locked"),
        end("for-update")
    );
}
