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

fn lines(claim: &str, workers: u32, seed: u64, actions: &str) -> Trace {
    let mut req = request(claim, workers, seed);
    req.actions = coordlab_sim::kernel::faults::parse_script(actions).unwrap();
    run(&req, Limits::default(), Recording::Lines).unwrap()
}

fn notes(t: &Trace) -> Vec<&String> {
    t.entries.iter().flat_map(|e| &e.notes).collect()
}

/// SKIP LOCKED returning no row means no *unlocked* pending job, not an empty queue.
#[test]
fn an_empty_skip_locked_claim_is_not_called_an_empty_queue() {
    for seed in 0..40 {
        let t = lines("skip-locked", 3, seed, "");
        let said = notes(&t);
        assert!(!said.iter().any(|n| n.contains("queue is empty")), "seed {seed}");
        // Workers finish at different times: someone's last claim skipped a job still held.
        assert!(
            said.iter()
                .any(|n| n.contains("claim found no unlocked pending job, so it stops")),
            "seed {seed}"
        );
    }
}

/// worker-2 crashes holding job 6 just after the others' SKIP LOCKED claims passed over it;
/// the database rolls it back and the job is pending again. Those empty claims are not
/// narrated as an empty queue, and worker-2 does job 6 when it comes back.
#[test]
fn after_a_crash_rolls_a_job_back_no_claim_says_the_queue_is_empty() {
    let t = lines("skip-locked", 3, 1, "63@crash:2;70@restart:2");
    let said = notes(&t);
    let rolled_back = said
        .iter()
        .position(|n| n.contains("worker-2's connection is gone: the database rolls its transaction back"))
        .expect("the crash rolls worker-2's job back");
    let stops = said
        .iter()
        .rposition(|n| n.contains("worker-1's claim found no unlocked pending job, so it stops"))
        .expect("worker-1 stops");
    assert!(rolled_back < stops, "worker-1 stops after the rollback");
    assert!(!said.iter().any(|n| n.contains("queue is empty")));
    assert_eq!(t.outcome["jobs_done"], json!(6));
    assert_eq!(t.outcome["jobs_done_twice"], json!(0));
}

/// With a plain SELECT the second UPDATE of job 1 need not wait (the first may have committed
/// already); the beat names what went wrong, not a wait.
#[test]
fn the_plain_claim_beat_blames_the_missing_status_check_not_a_wait() {
    let t = lines("plain", 3, 1, "");
    let beat = t.beats.iter().find(|b| b.key == "twice").unwrap();
    assert!(beat.seq.is_some());
    assert!(beat
        .text
        .contains("It has no status check, so it ran though job 1 was already done"));
    assert!(!beat.text.contains("waited"));
    let first = t.beats.iter().find(|b| b.key == "first-claim").unwrap();
    assert!(first.text.contains("A plain SELECT locks nothing."));
}
