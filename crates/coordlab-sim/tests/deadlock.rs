//! `deadlock`: opposite lock orders deadlock, the database aborts one transfer after
//! `deadlock_timeout` and it retries; a fixed order never deadlocks. Money is conserved.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(order: &str, timeout_ms: u32, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("order".to_string(), order.to_string());
    params.insert("deadlock_timeout_ms".to_string(), timeout_ms.to_string());
    RunRequest {
        scenario: "deadlock".to_string(),
        params,
        seed,
        actions: vec![],
    }
}

fn checked(order: &str, timeout_ms: u32, seed: u64) -> Trace {
    let req = request(order, timeout_ms, seed);
    let trace = run(&req, Limits::default(), Recording::Summary).unwrap();
    let miss = expectation_for(&req).unwrap().mismatches(&trace);
    assert!(
        miss.is_empty(),
        "{order} timeout={timeout_ms} seed={seed}: {miss:?}"
    );
    trace
}

#[test]
fn opposite_orders_deadlock_once_and_the_victim_retries_for_every_seed() {
    for seed in 0..300 {
        let t = checked("opposite", 1000, seed);
        assert_eq!(t.outcome["balance_1"], json!(110));
        assert_eq!(t.outcome["balance_2"], json!(90));
        assert_eq!(t.outcome["transfers_committed"], json!(2));
    }
}

#[test]
fn a_fixed_order_never_deadlocks() {
    for seed in 0..300 {
        let t = checked("ordered", 1000, seed);
        assert_eq!(t.outcome["total"], json!(200));
    }
}

/// The stuck pair waits about `deadlock_timeout` before anything moves: the detection delay
/// is the cost of the deadlock.
#[test]
fn the_wait_grows_with_deadlock_timeout() {
    let wait = |ms| {
        checked("opposite", ms, 2).outcome["total_wait_ms"]
            .as_u64()
            .unwrap()
    };
    let (short, long) = (wait(50), wait(2000));
    assert!(short < 200, "{short}");
    assert!(long >= 2000, "{long}");
    let ordered = checked("ordered", 2000, 2).outcome["total_wait_ms"]
        .as_u64()
        .unwrap();
    assert!(ordered < 100, "{ordered}");
}

/// The model always aborts the transaction whose check ran; the narration does not pass that
/// off as PostgreSQL's rule, whose choice of victim is not predictable.
#[test]
fn the_narration_says_a_real_servers_victim_is_not_predictable() {
    let t = run(&request("opposite", 1000, 1), Limits::default(), Recording::Lines).unwrap();
    let beat = t.beats.iter().find(|b| b.key == "detected").unwrap();
    assert!(beat.seq.is_some());
    assert!(
        beat.text
            .contains("Which one a real PostgreSQL aborts is not predictable"),
        "{}",
        beat.text
    );
    let cycle = t.beats.iter().find(|b| b.key == "cycle").unwrap();
    assert!(cycle
        .question
        .as_ref()
        .unwrap()
        .why
        .contains("which one you cannot predict"));
    assert!(t.entries.iter().flat_map(|e| &e.notes).any(|n| n.contains(
        "This model aborts the one whose check ran; which one a real PostgreSQL aborts is not predictable."
    )));
}
