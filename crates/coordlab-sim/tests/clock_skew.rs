//! `clock-skew`: every variant the scenario decides meets its expectation for many seeds; the
//! default run's danger is a clock step at a real drift; the worker with a margin stays safe
//! through thousands of random clock steps; the unsafe window exists only when A's clock is
//! wrong and lies between B's takeover and A's discovery; and the fence catches the late
//! write only when B has already written.

use coordlab_sim::kernel::faults::Action;
use coordlab_sim::properties::{PropertyKind, Verdict};
use coordlab_sim::scenarios::ch3_late_holders::clock_skew::{forecast, info, MARGIN_MS, REAL_DRIFT_PPM};
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::trace::EventKind;
use coordlab_sim::{run, Fault, Limits, NodeId, Recording, RunRequest, Trace};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

const A: NodeId = NodeId(1);

fn request(offset_ms: &str, drift_ppm: &str, seed: u64) -> RunRequest {
    with_margin("none", offset_ms, drift_ppm, seed)
}

fn with_margin(margin: &str, offset_ms: &str, drift_ppm: &str, seed: u64) -> RunRequest {
    let params: Params = [
        ("margin", margin),
        ("offset_ms", offset_ms),
        ("drift_ppm", drift_ppm),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    RunRequest {
        scenario: "clock-skew".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn defaults(seed: u64) -> RunRequest {
    RunRequest {
        scenario: "clock-skew".into(),
        params: Params::new(),
        seed,
        actions: vec![],
    }
}

fn faults(t: &Trace) -> Vec<(u64, Fault)> {
    t.entries
        .iter()
        .filter(|e| e.kind == EventKind::Fault)
        .map(|e| (e.time_us, e.fault.clone().unwrap()))
        .collect()
}

fn default_of(key: &str) -> i64 {
    info()
        .params
        .iter()
        .find(|p| p.key == key)
        .unwrap()
        .default
        .parse()
        .unwrap()
}

#[test]
fn the_default_run_s_danger_is_a_clock_step_at_a_real_drift() {
    // The default drift is what real quartz does, and says so.
    let drift = default_of("drift_ppm");
    assert!(drift != 0 && drift.abs() <= REAL_DRIFT_PPM, "{drift}");
    let help = info().params.iter().find(|p| p.key == "drift_ppm").unwrap().help;
    assert!(help.contains("±100 ppm"), "{help}");
    // The default steps A's clock back by seconds, through the kernel's clock-step fault.
    let step = default_of("offset_ms");
    assert!(step <= -1_000, "{step}");
    for seed in 0..100 {
        let t = run(&defaults(seed), Limits::default(), Recording::Lines).unwrap();
        assert_eq!(
            faults(&t),
            vec![
                (
                    0,
                    Fault::ClockDrift {
                        node: A,
                        drift_ppm: drift
                    }
                ),
                (
                    16_000_000,
                    Fault::ClockJump {
                        node: A,
                        delta_ms: step
                    }
                ),
            ],
            "seed {seed}"
        );
        assert_eq!(t.outcome["max_concurrent_holders"], json!(2), "seed {seed}");
        assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated, "seed {seed}");
        assert_eq!(verdict(&t, "fence-monotonic"), Verdict::Holds, "seed {seed}");
        // The same run without the step is safe: the drift alone does nothing.
        let no_step = request("0", &drift.to_string(), seed);
        let t = run(&no_step, Limits::default(), Recording::Summary).unwrap();
        assert_eq!(t.outcome["max_concurrent_holders"], json!(1), "seed {seed}");
        assert_eq!(verdict(&t, "no-double-debit"), Verdict::Holds, "seed {seed}");
    }
}

/// Random clock steps on worker A, injected as user actions at random steps, with a random
/// real drift: how many runs end with two holders or a violated safety property.
fn clock_step_sweep(margin: &str, seeds: std::ops::Range<u64>) -> (u64, u64) {
    let (mut two_holders, mut violated) = (0, 0);
    for seed in seeds {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let drift = rng.gen_range(-REAL_DRIFT_PPM..=REAL_DRIFT_PPM);
        let delta_ms = rng.gen_range(-(MARGIN_MS as i64)..=MARGIN_MS as i64);
        let at_step = rng.gen_range(0..50u32);
        let mut r = with_margin(margin, "0", &drift.to_string(), seed);
        r.actions = vec![Action {
            at_step,
            fault: Fault::ClockJump { node: A, delta_ms },
        }];
        let t = run(&r, Limits::default(), Recording::Summary).unwrap();
        if t.outcome["max_concurrent_holders"] != json!(1) {
            two_holders += 1;
        }
        if t.properties
            .iter()
            .any(|p| p.kind == PropertyKind::Always && p.verdict == Verdict::Violated)
        {
            violated += 1;
        }
    }
    (two_holders, violated)
}

#[test]
fn with_a_10_s_margin_3000_random_clock_steps_of_up_to_10_s_leave_one_holder() {
    assert_eq!(clock_step_sweep("10s", 0..3_000), (0, 0));
    // Without the margin the same sweep finds both dangers, so it can fail.
    let (two_holders, violated) = clock_step_sweep("none", 0..3_000);
    assert!(two_holders > 300 && violated > 300, "{two_holders} {violated}");
}

#[test]
fn the_margin_variant_is_safe_and_finishes_at_the_default_clock() {
    let mut margin = Params::new();
    margin.insert("margin".into(), "10s".into());
    for seed in 0..200 {
        let r = RunRequest {
            params: margin.clone(),
            ..defaults(seed)
        };
        let t = run(&r, Limits::default(), Recording::Summary).unwrap();
        assert_eq!(t.outcome["max_concurrent_holders"], json!(1), "seed {seed}");
        assert_eq!(t.outcome["balance"], json!(40), "seed {seed}");
        assert_eq!(t.outcome["finished_by"], json!(["worker-B"]), "seed {seed}");
        assert!(expectation_for(&r).unwrap().mismatches(&t).is_empty());
    }
    // The forecast agrees for the whole step range at real drift.
    for offset in [-10_000, -5_000, 0, 5_000, 10_000] {
        let f = forecast(offset, -REAL_DRIFT_PPM, Some(MARGIN_MS));
        assert_eq!((f.holders, f.double_debit), (Some(1), Some(false)), "{offset}");
    }
}

/// Every beat of the story a run declares happens, in order.
fn all_beats_happen(r: &RunRequest) {
    let t = run(r, Limits::default(), Recording::Summary).unwrap();
    assert!(t.beats.len() >= 3, "{r:?}");
    let missed: Vec<&str> = t
        .beats
        .iter()
        .filter(|b| b.seq.is_none())
        .map(|b| b.title.as_str())
        .collect();
    assert!(missed.is_empty(), "{}: {missed:?}", r.to_line());
}

#[test]
fn the_other_stories_are_told_in_beats_too() {
    // An exaggerated drift (the fence refuses A's late write), a correct clock (A stops by
    // its own clock), a step forward, and a step back with the margin.
    for (margin, offset, drift) in [
        ("none", "0", "-200000"),
        ("none", "0", "0"),
        ("none", "5000", "-100"),
        ("10s", "-10000", "100"),
        ("10s", "0", "0"),
    ] {
        for seed in 0..100 {
            all_beats_happen(&with_margin(margin, offset, drift, seed));
        }
    }
}

fn trace(offset_ms: &str, drift_ppm: &str, seed: u64, recording: Recording) -> Trace {
    run(&request(offset_ms, drift_ppm, seed), Limits::default(), recording).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

/// The time of the first entry whose text contains `needle`.
fn at(t: &Trace, needle: &str) -> u64 {
    t.entries
        .iter()
        .find(|e| e.text.contains(needle))
        .unwrap_or_else(|| panic!("no entry contains {needle:?} (seed {})", t.seed))
        .time_us
}

#[test]
fn every_decided_variant_meets_its_expectation_across_seeds() {
    // (offset_ms, drift_ppm): the default, real drift alone, a correct clock, exaggerated
    // slower and faster clocks, and clock steps both ways.
    let variants = [
        ("-5000", "-100"),
        ("0", "100"),
        ("0", "-200000"),
        ("0", "0"),
        ("0", "-100000"),
        ("0", "-300000"),
        ("0", "100000"),
        ("0", "300000"),
        ("-10000", "0"),
        ("5000", "0"),
        ("10000", "-200000"),
        ("-5000", "-200000"),
    ];
    let margins = ["none", "10s"];
    for (margin, (offset, drift)) in margins
        .iter()
        .flat_map(|m| variants.iter().map(move |v| (*m, *v)))
    {
        let expected = expectation_for(&with_margin(margin, offset, drift, 0)).unwrap();
        // These variants are all decidable: the test must not pass on an empty promise.
        assert!(
            expected
                .outcome
                .iter()
                .any(|(k, _)| k == "max_concurrent_holders")
                && expected.verdicts.iter().any(|(k, _)| k == "no-double-debit"),
            "margin={margin} offset={offset} drift={drift}: {expected:?}"
        );
        for seed in 0..100 {
            let r = with_margin(margin, offset, drift, seed);
            let t = run(&r, Limits::default(), Recording::Summary).unwrap();
            let miss = expected.mismatches(&t);
            assert!(miss.is_empty(), "{} : {miss:?}", r.to_line());
        }
    }
}

#[test]
fn the_headline_variants_declare_two_holders_with_skew_and_one_with_a_correct_clock() {
    let holders = |drift: &str| {
        expectation_for(&request("0", drift, 0))
            .unwrap()
            .outcome
            .into_iter()
            .find(|(k, _)| k == "max_concurrent_holders")
            .map(|(_, v)| v)
    };
    assert_eq!(holders("-200000"), Some(json!(2)));
    assert_eq!(holders("0"), Some(json!(1)));
}

#[test]
fn the_window_opens_at_b_s_takeover_and_closes_when_a_learns_of_it() {
    for seed in 0..40 {
        let t = trace("0", "-200000", seed, Recording::Full);
        let b_granted = at(&t, "lease-store -> worker-B: granted account-42, token 34");
        let a_refused = at(&t, "ledger -> worker-A: step 5: UPDATE 0 (rejected)");
        let flagged: Vec<u64> = t
            .entries
            .iter()
            .filter(|e| e.snapshot.as_ref().unwrap().highlight.is_some())
            .map(|e| e.time_us)
            .collect();
        assert_eq!(flagged.first(), Some(&b_granted), "seed {seed}");
        assert!(
            flagged.iter().all(|&us| (b_granted..a_refused).contains(&us)),
            "seed {seed}: {flagged:?} outside {b_granted}..{a_refused}"
        );
        assert_eq!(
            t.outcome["unsafe_window_ms"],
            json!((a_refused - b_granted) / 1_000),
            "seed {seed}"
        );
        // Roughly the 7.5 s A's slow clock adds to its last step, minus B's poll delay.
        let window_ms = t.outcome["unsafe_window_ms"].as_u64().unwrap();
        assert!((6_500..7_500).contains(&window_ms), "seed {seed}: {window_ms}");
        // At the takeover A's node card shows its clock about 6 s behind.
        let takeover = t.entries.iter().find(|e| e.time_us == b_granted).unwrap();
        let a_offset_us = takeover.snapshot.as_ref().unwrap().nodes[1].clock_offset_us;
        assert!(
            (-6_200_000..-6_000_000).contains(&a_offset_us),
            "seed {seed}: {a_offset_us}"
        );
    }
}

#[test]
fn with_a_correct_clock_a_stops_itself_before_b_takes_over() {
    for seed in 0..40 {
        let t = trace("0", "0", seed, Recording::Full);
        assert!(
            t.entries
                .iter()
                .all(|e| e.snapshot.as_ref().unwrap().highlight.is_none()),
            "seed {seed}"
        );
        assert_eq!(t.outcome["unsafe_window_ms"], json!(0));
        assert_eq!(t.outcome["max_concurrent_holders"], json!(1));
        let a_stops = t
            .entries
            .iter()
            .find(|e| {
                e.notes
                    .iter()
                    .any(|n| n == "By worker-A's own clock its lease has run out, so it stops before step 6.")
            })
            .unwrap_or_else(|| panic!("seed {seed}: A never stopped by its own clock"))
            .time_us;
        let b_granted = at(&t, "lease-store -> worker-B: granted account-42, token 34");
        assert!(a_stops < b_granted, "seed {seed}");
        // B finds A's five steps and does the last one.
        at(&t, "ledger -> worker-B: 5 step(s) done");
        assert_eq!(t.outcome["finished_by"], json!(["worker-B"]));
    }
}

#[test]
fn the_clock_faults_are_scripted_through_the_fault_path() {
    let t = trace("-5000", "-200000", 1, Recording::Lines);
    let faults: Vec<(u64, Fault)> = t
        .entries
        .iter()
        .filter(|e| e.kind == EventKind::Fault)
        .map(|e| (e.time_us, e.fault.clone().unwrap()))
        .collect();
    assert_eq!(
        faults,
        vec![
            (
                0,
                Fault::ClockDrift {
                    node: NodeId(1),
                    drift_ppm: -200_000
                }
            ),
            (
                16_000_000,
                Fault::ClockJump {
                    node: NodeId(1),
                    delta_ms: -5_000
                }
            ),
        ]
    );
    let correct = trace("0", "0", 1, Recording::Lines);
    assert!(correct.entries.iter().all(|e| e.kind != EventKind::Fault));
}

#[test]
fn the_fence_refuses_the_late_write_only_when_b_has_written_first() {
    // 20% slow: A's step-5 write lands after B's step 5, so the predicate refuses it.
    let t = trace("0", "-200000", 1, Recording::Lines);
    assert_eq!(
        t.outcome["rejected_writes"],
        json!([{"worker": "worker-A", "token": 33, "step": 5, "reason": "token 33 < 34: a newer holder exists"}])
    );
    assert_eq!(t.outcome["balance"], json!(40));
    assert_eq!(t.outcome["finished_by"], json!(["worker-B"]));

    // A correct rate but a clock stepped back 10 s: A's step 6 lands after B took over but
    // before B's first write. Nothing newer than 33 has reached the ledger, so it applies,
    // and B does step 6 again.
    let t = trace("-10000", "0", 1, Recording::Lines);
    assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated);
    assert_eq!(verdict(&t, "fence-monotonic"), Verdict::Holds);
    assert_eq!(t.outcome["rejected_writes"], json!([]));
    let step6: Vec<&serde_json::Value> = t.outcome["accepted_writes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["step"] == 6)
        .collect();
    assert_eq!(
        step6,
        vec![
            &json!({"worker": "worker-A", "token": 33, "step": 6}),
            &json!({"worker": "worker-B", "token": 34, "step": 6})
        ]
    );
}

#[test]
fn the_clock_step_beat_says_the_danger_assumes_a_wall_clock() {
    let t = run(&defaults(1), Limits::default(), Recording::Summary).unwrap();
    let step = t.beats.iter().find(|b| b.key == "clock-step").unwrap();
    assert!(step.seq.is_some());
    assert!(step.text.contains("wall clock"), "{}", step.text);
    assert!(
        step.text.contains("monotonic clock, which NTP never steps"),
        "{}",
        step.text
    );
}
