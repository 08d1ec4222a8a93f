//! `redisson-watchdog`: each variant reaches its declared outcome over many seeds, and the
//! full GC pause lets the frozen holder write after B took over.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(pause: &str, seed: u64) -> RunRequest {
    let params: Params = [("pause".to_string(), pause.to_string())].into_iter().collect();
    RunRequest {
        scenario: "redisson-watchdog".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(pause: &str, seed: u64) -> Trace {
    run(&request(pause, seed), Limits::default(), Recording::Lines).unwrap()
}

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    for pause in ["full-gc", "stuck-thread", "none"] {
        for seed in 0..100 {
            let req = request(pause, seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "pause={pause} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn a_full_gc_stops_the_watchdog_and_the_frozen_holder_writes_after_b() {
    let t = trace("full-gc", 1);
    assert_eq!(t.outcome["max_concurrent_holders"], json!(2));
    assert!(t.outcome["stale_writes_applied"].as_u64().unwrap() >= 1);
    let b_write = t
        .entries
        .iter()
        .position(|e| e.text.contains("client-B -> storage: write"))
        .unwrap();
    let a_late = t
        .entries
        .iter()
        .position(|e| e.text.contains("client-A -> storage: write step 3"))
        .unwrap();
    assert!(b_write < a_late, "A's late write comes after B's first write");
    assert!(t
        .entries
        .iter()
        .any(|e| e.notes.iter().any(|n| n.contains("IllegalMonitorStateException"))));
}

#[test]
fn a_stuck_thread_keeps_the_lock_renewed_and_b_starves() {
    let t = trace("stuck-thread", 1);
    assert_eq!(t.outcome["b_got_the_lock"], json!(false));
    assert!(t.outcome["renewals"].as_u64().unwrap() >= 15);
}

#[test]
fn without_a_pause_the_clients_take_turns() {
    let t = trace("none", 1);
    assert_eq!(t.outcome["b_got_the_lock"], json!(true));
    assert_eq!(t.outcome["max_concurrent_holders"], json!(1));
}

/// Times at which `label` sent by node `from` was delivered (client-A is 1, client-B is 2).
fn delivered(t: &Trace, from: u32, label: &str) -> Vec<u64> {
    t.entries
        .iter()
        .filter(|e| e.kind == coordlab_sim::trace::EventKind::Deliver)
        .filter_map(|e| e.message.as_ref().map(|m| (e.time_us, m)))
        .filter(|(_, m)| m.from.0 == from && m.label == label)
        .map(|(at, _)| at)
        .collect()
}

#[test]
fn the_waiter_waits_out_the_ttl_or_an_unlock_message_not_a_poll_every_second() {
    // Stuck holder, watchdog renewing: B asks again only when the key's TTL would run out.
    let t = trace("stuck-thread", 1);
    let asks = delivered(&t, 2, "lock()");
    assert!(asks.len() <= 12, "{} asks in three minutes", asks.len());
    assert!(asks.windows(2).all(|w| w[1] - w[0] >= 9_000_000), "{asks:?}");
    // No pause: A's unlock publishes on the channel and B asks within milliseconds.
    let t = trace("none", 1);
    let published = delivered(&t, 0, "PUBLISH: unlocked");
    assert_eq!(published.len(), 1);
    let next = delivered(&t, 2, "lock()")
        .into_iter()
        .find(|at| *at > published[0])
        .unwrap();
    assert!(next - published[0] < 20_000, "{}", next - published[0]);
}

#[test]
fn the_starving_waiter_beat_says_it_waits_out_the_ttl() {
    let t = trace("stuck-thread", 1);
    let b = t.beats.iter().find(|b| b.key == "b-starves").unwrap();
    assert!(b.seq.is_some());
    assert!(b.text.contains("TTL would have run out"), "{}", b.text);
    assert!(!b.text.contains("every second"), "{}", b.text);
}
