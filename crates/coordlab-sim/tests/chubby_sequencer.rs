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

fn trace(pairs: &[(&str, &str)]) -> coordlab_sim::Trace {
    run(&request(pairs, 1), Limits::default(), Recording::Lines).unwrap()
}

/// Deliveries of `label` sent by node `from` (client-A is 1, client-B is 2).
fn delivered(t: &coordlab_sim::Trace, from: u32, label: &str) -> Vec<u64> {
    t.entries
        .iter()
        .filter(|e| e.kind == coordlab_sim::trace::EventKind::Deliver)
        .filter_map(|e| e.message.as_ref().map(|m| (e.time_us, m)))
        .filter(|(_, m)| m.from.0 == from && m.label == label)
        .map(|(at, _)| at)
        .collect()
}

#[test]
fn the_cell_holds_a_keepalive_until_the_lease_nears_its_end() {
    let t = trace(&[("check", "yes")]);
    // A sends one KeepAlive at its grant, not one every few seconds, before it dies at 3.5 s.
    let keepalives = delivered(&t, 1, "renew");
    assert_eq!(keepalives.len(), 1, "{keepalives:?}");
    // The cell answers it about 11 s in, just before the 12 s lease would end.
    let answer = t
        .entries
        .iter()
        .find(|e| {
            e.notes
                .iter()
                .any(|n| n.contains("has held client-A's KeepAlive"))
        })
        .expect("the held KeepAlive is answered");
    assert!(
        (10_900_000..11_300_000).contains(&answer.time_us),
        "{}",
        answer.time_us
    );
    // So the dead client's session ends a lease later, about 23 s in.
    let ends = t
        .entries
        .iter()
        .find(|e| e.notes.iter().any(|n| n.contains("session lease runs out")))
        .unwrap();
    assert!(
        (22_900_000..23_400_000).contains(&ends.time_us),
        "{}",
        ends.time_us
    );
}
