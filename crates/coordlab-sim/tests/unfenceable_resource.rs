//! `unfenceable-resource`: both variants meet their expectation for many seeds; the zombie's
//! instruction reaches the rail after B's, and only the idempotency key makes it a replay.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(key: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("idempotency_key".into(), key.into());
    RunRequest {
        scenario: "unfenceable-resource".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(key: &str, seed: u64) -> Trace {
    run(&request(key, seed), Limits::default(), Recording::Lines).unwrap()
}

fn position(t: &Trace, needle: &str) -> usize {
    t.entries
        .iter()
        .position(|e| e.text.contains(needle))
        .unwrap_or_else(|| panic!("seed {}: no entry contains {needle:?}", t.seed))
}

#[test]
fn both_variants_meet_their_expectation_across_seeds() {
    for key in ["off", "on"] {
        let expected = expectation_for(&request(key, 0)).unwrap();
        for seed in 0..200 {
            let t = run(&request(key, seed), Limits::default(), Recording::Summary).unwrap();
            let miss = expected.mismatches(&t);
            assert!(miss.is_empty(), "idempotency_key={key} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn only_the_key_lets_the_rail_recognise_the_zombies_instruction_as_a_replay() {
    for seed in 0..40 {
        let off = trace("off", seed);
        assert_eq!(off.outcome["replays_recognised"], json!(0), "seed {seed}");
        assert_eq!(off.outcome["paid_total"], json!(50), "seed {seed}");
        let a_pays = position(&off, "worker-A -> payment-rail: pay ₹10 (step 1)");
        assert!(
            off.entries[a_pays]
                .violations
                .contains(&"no-double-payment".to_string()),
            "seed {seed}: the second payment is where safety breaks"
        );

        let on = trace("on", seed);
        assert_eq!(on.outcome["replays_recognised"], json!(1), "seed {seed}");
        assert_eq!(on.outcome["paid_total"], json!(40), "seed {seed}");
        let a_pays = position(&on, "worker-A -> payment-rail: pay ₹10 (step 1, key payout-42#1)");
        assert!(
            on.entries[a_pays]
                .notes
                .iter()
                .any(|n| n.contains("recognised as a replay")),
            "seed {seed}"
        );
        position(&on, "payment-rail -> worker-A: replay recognised");
    }
}

#[test]
fn the_zombie_pays_after_b_took_over_and_stops_only_when_its_renewal_fails() {
    let t = trace("off", 1);
    let b_granted = position(&t, "lease-store -> worker-B: granted payout-42, token 34");
    let b_pays = position(&t, "worker-B -> payment-rail: pay ₹10 (step 1)");
    let a_wakes = position(&t, "worker-A resumes");
    let a_pays = position(&t, "worker-A -> payment-rail: pay ₹10 (step 1)");
    let a_told = position(&t, "lease-store -> worker-A: payout-42 is held");
    assert!(b_granted < b_pays && b_pays < a_wakes && a_wakes < a_pays && a_pays < a_told);
    assert!(t.entries[a_told]
        .notes
        .iter()
        .any(|n| n.contains("It stops immediately")));
    // A sends exactly one instruction: the renewal's refusal stops it before step 2.
    let a_instructions = t
        .entries
        .iter()
        .filter(|e| e.text.starts_with("worker-A -> payment-rail: pay"))
        .count();
    assert_eq!(a_instructions, 1);
    assert_eq!(t.outcome["max_concurrent_holders"], json!(2));
    let verdict = |name: &str| t.properties.iter().find(|p| p.name == name).unwrap().verdict;
    assert_eq!(verdict("no-double-payment"), Verdict::Violated);
    assert_eq!(verdict("tokens-increase"), Verdict::Holds);
}
