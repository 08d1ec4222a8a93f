//! `lock-across-call`: every variant meets its expectation for many seeds and call lengths;
//! held across the call, the lease expires mid-call and the API pays twice; claiming the job
//! row and letting go before the call, or a keyed call with a fenced record, pays once.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

const VARIANTS: [&str; 3] = ["inside-lock", "outside-lock", "idempotent-fenced"];

fn request(call: &str, call_ms: u64, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("call".into(), call.into());
    params.insert("call_ms".into(), call_ms.to_string());
    RunRequest {
        scenario: "lock-across-call".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(call: &str, seed: u64) -> Trace {
    run(&request(call, 15_000, seed), Limits::default(), Recording::Lines).unwrap()
}

fn position(t: &Trace, needle: &str) -> usize {
    t.entries
        .iter()
        .position(|e| e.text.contains(needle))
        .unwrap_or_else(|| panic!("seed {}: no entry contains {needle:?}", t.seed))
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

fn beat_text(t: &Trace, key: &str) -> String {
    let b = t.beats.iter().find(|b| b.key == key).expect("declared beat");
    assert!(b.seq.is_some(), "seed {}: beat {key} never happens", t.seed);
    format!("{} — {}", b.title, b.text)
}

#[test]
fn every_variant_meets_its_expectation_across_seeds_and_call_lengths() {
    for call in VARIANTS {
        // In time, in the seed-dependent middle, the default stall, a long stall.
        for call_ms in [5_000, 11_000, 15_000, 40_000] {
            let expected = expectation_for(&request(call, call_ms, 0)).unwrap();
            assert!(!expected.verdicts.is_empty());
            for seed in 0..150 {
                let t = run(
                    &request(call, call_ms, seed),
                    Limits::default(),
                    Recording::Summary,
                )
                .unwrap();
                let miss = expected.mismatches(&t);
                assert!(
                    miss.is_empty(),
                    "call={call} call_ms={call_ms} seed={seed}: {miss:?}"
                );
            }
        }
    }
}

#[test]
fn held_across_the_call_the_api_pays_twice_and_a_records_with_a_stale_token() {
    for seed in 0..40 {
        let t = trace("inside-lock", seed);
        assert_eq!(t.outcome["payments_sent"], json!(2), "seed {seed}");
        assert_eq!(t.outcome["max_concurrent_holders"], json!(2), "seed {seed}");
        let b_granted = position(&t, "lease-store -> worker-B: granted payout-42, token 34");
        let b_paid = position(&t, "payment-api: finishes call 2");
        let a_paid = position(&t, "payment-api: finishes call 1");
        let a_records = position(&t, "worker-A -> ledger: step 1, ₹10, token 33 unchecked");
        assert!(
            b_granted < b_paid && b_paid < a_paid && a_paid < a_records,
            "seed {seed}"
        );
        // The second payout is A's stalled call, and that is where safety breaks.
        assert!(t.entries[a_paid]
            .violations
            .contains(&"no-double-payment".to_string()));
        assert!(t.entries[a_records]
            .violations
            .contains(&"fence-monotonic".to_string()));
        assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated);
    }
    let t = trace("inside-lock", 1);
    assert!(beat_text(&t, "api-pays-twice").starts_with("The API pays out a second time"));
    assert!(beat_text(&t, "a-records").contains("Nothing checks its token"));
}

#[test]
fn claiming_the_job_row_then_calling_without_the_lease_pays_once() {
    for seed in 0..40 {
        let t = trace("outside-lock", seed);
        assert_eq!(t.outcome["payments_sent"], json!(1), "seed {seed}");
        assert_eq!(t.outcome["finished_by"], json!(["worker-A"]), "seed {seed}");
        // A lets go of the lease before it calls; B finds the row taken and never calls.
        let a_releases = position(&t, "worker-A -> lease-store: release payout-42");
        let a_calls = position(&t, "worker-A -> payment-api: pay ₹10");
        let b_refused = position(&t, "job-db -> worker-B: 0 row(s)");
        assert!(a_releases < a_calls && a_calls < b_refused, "seed {seed}");
        assert!(!t
            .entries
            .iter()
            .any(|e| e.text.starts_with("worker-B -> payment-api")));
        assert_eq!(verdict(&t, "no-double-payment"), Verdict::Holds);
    }
}

#[test]
fn a_keyed_call_pays_once_and_the_fenced_record_refuses_a() {
    for seed in 0..40 {
        let t = trace("idempotent-fenced", seed);
        assert_eq!(t.outcome["payments_sent"], json!(1), "seed {seed}");
        assert_eq!(t.outcome["replays_recognised"], json!(1), "seed {seed}");
        let replay = position(&t, "payment-api -> worker-A: replay recognised");
        let refused = position(&t, "ledger -> worker-A: step 1: UPDATE 0 (rejected)");
        assert!(replay < refused, "seed {seed}");
        assert_eq!(t.outcome["balance"], json!(90), "seed {seed}");
        for p in ["no-double-payment", "fence-monotonic", "no-double-debit"] {
            assert_eq!(verdict(&t, p), Verdict::Holds, "seed {seed}: {p}");
        }
    }
    let t = trace("idempotent-fenced", 1);
    assert!(beat_text(&t, "api-pays-once").contains("nothing is sent"));
    assert!(beat_text(&t, "a-refused").contains("UPDATE 0: A stops"));
}

#[test]
fn a_call_shorter_than_the_lease_does_no_harm_in_any_variant() {
    for call in VARIANTS {
        for seed in 0..20 {
            let t = run(&request(call, 5_000, seed), Limits::default(), Recording::Lines).unwrap();
            assert_eq!(t.outcome["payments_sent"], json!(1), "call={call} seed={seed}");
            assert_eq!(
                t.outcome["max_concurrent_holders"],
                json!(1),
                "call={call} seed={seed}"
            );
        }
    }
    let t = run(
        &request("inside-lock", 5_000, 1),
        Limits::default(),
        Recording::Lines,
    )
    .unwrap();
    assert!(beat_text(&t, "a-records").starts_with("A's answer comes back in time"));
}

#[test]
fn every_variant_survives_crashes_and_pauses_of_its_workers() {
    for call in VARIANTS {
        for script in [
            "3@crash:1;40@restart:1",
            "5@pause:1:20000",
            "12@crash:2;30@restart:2",
        ] {
            let mut r = request(call, 15_000, 3);
            r.actions = coordlab_sim::kernel::faults::parse_script(script).unwrap();
            let t = run(&r, Limits::default(), Recording::Lines).unwrap();
            assert_eq!(verdict(&t, "tokens-increase"), Verdict::Holds, "{call} {script}");
        }
    }
}
