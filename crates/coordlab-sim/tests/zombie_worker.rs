//! `zombie-worker`: every fencing variant reaches its declared outcome for many seeds, and the
//! centrepiece story happens as the curriculum tells it.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

use crate::story::{beat_at, holding};

fn request(pairs: &[(&str, &str)], seed: u64) -> RunRequest {
    let params: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RunRequest {
        scenario: "zombie-worker".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(pairs: &[(&str, &str)], seed: u64) -> Trace {
    run(&request(pairs, seed), Limits::default(), Recording::Lines).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

/// Every value of the `fencing` parameter.
const FENCING: [&str; 6] = [
    "none",
    "write-predicate",
    "app-check",
    "first-write-only",
    "retry-after-reject",
    "fence-on-takeover",
];

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    for fencing in FENCING {
        for seed in 0..200 {
            let req = request(&[("fencing", fencing)], seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "fencing={fencing} seed={seed}: {miss:?}");
        }
    }
}

/// The index of the first entry whose text contains `needle`.
fn position(t: &Trace, needle: &str) -> usize {
    t.entries
        .iter()
        .position(|e| e.text.contains(needle))
        .unwrap_or_else(|| panic!("no entry with `{needle}`"))
}

/// The step (entry index) where property `name` was first violated.
fn violated_at(t: &Trace, name: &str) -> usize {
    let p = t.properties.iter().find(|p| p.name == name).unwrap();
    p.first_violation_seq.expect("violated") as usize
}

#[test]
fn with_the_write_predicate_b_34_is_accepted_and_a_33_is_rejected() {
    let t = trace(&[("fencing", "write-predicate")], 1);
    // A wrote step 1 before it froze; B took over at step 2.
    assert_eq!(
        t.outcome["accepted_writes"],
        json!([
            {"worker": "worker-A", "token": 33, "step": 1},
            {"worker": "worker-B", "token": 34, "step": 2},
            {"worker": "worker-B", "token": 34, "step": 3},
            {"worker": "worker-B", "token": 34, "step": 4},
        ])
    );
    assert_eq!(
        t.outcome["rejected_writes"],
        json!([{"worker": "worker-A", "token": 33, "step": 2, "reason": "token 33 < 34: a newer holder exists"}])
    );
    assert_eq!(t.outcome["balance"], json!(60));
    assert_eq!(t.outcome["max_concurrent_holders"], json!(2));
}

#[test]
fn the_story_follows_the_curriculum_timeline() {
    let t = trace(&[("fencing", "none")], 3);
    let grants = t.outcome["grants"].as_array().unwrap();
    // A takes over the row an earlier run left at fence_token 32: the counter lives on the row.
    assert_eq!(
        grants[0],
        json!({"worker": "worker-A", "token": 33, "kind": "takeover"})
    );
    assert_eq!(
        grants[1],
        json!({"worker": "worker-B", "token": 34, "kind": "takeover"})
    );
    let at = |needle: &str| t.entries[position(&t, needle)].time_us;
    let a_step_1 = at("worker-A -> ledger: step 1");
    let freeze = at("worker-A freezes");
    let expiry = at("(token 33) reaches its expiry");
    let takeover = at("granted account-42, token 34");
    let wake = at("worker-A resumes");
    assert!(a_step_1 < freeze, "A writes step 1, then freezes");
    assert_eq!(freeze, 5_000_000);
    assert!((30_000_000..30_200_000).contains(&expiry), "{expiry}");
    assert!(takeover > expiry && takeover < wake);
    assert_eq!(wake, 41_000_000);
    // B carries on from step 2; without fencing the zombie's step 2 lands after B's.
    let b_write = position(&t, "worker-B -> ledger: step 2");
    let a_write = position(&t, "worker-A -> ledger: step 2");
    assert!(b_write < a_write);
    assert_eq!(verdict(&t, "fence-monotonic"), Verdict::Violated);
}

#[test]
fn app_check_passes_before_the_pause_and_the_stale_write_lands_after() {
    let t = trace(&[("fencing", "app-check")], 1);
    // A checks the token for step 2 right after its step 1, before it freezes.
    let check = position(&t, "ledger -> worker-A: last_token = 33");
    let b_write = position(&t, "worker-B -> ledger: step 2");
    let a_write = position(&t, "worker-A -> ledger: step 2");
    assert!(
        check < b_write && b_write < a_write,
        "B's write slips between A's check and A's write"
    );
    assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated);
}

/// The curriculum's "blocked at step one, free at step four" in the variant's default run:
/// A, frozen before its first write, is refused at step 1 and lands step 2 unchecked.
#[test]
fn first_write_only_refuses_the_zombie_at_step_1_and_lets_step_2_through_by_default() {
    for seed in [1, 4, 42] {
        let t = trace(&[("fencing", "first-write-only")], seed);
        assert_eq!(
            t.params["pause_start_ms"], "2000",
            "the variant brings its own defaults"
        );
        assert_eq!(t.params["heartbeat_ms"], "0");
        let rejected = t.outcome["rejected_writes"].as_array().unwrap();
        assert!(
            rejected
                .iter()
                .any(|w| w["worker"] == "worker-A" && w["step"] == 1),
            "seed {seed}: A's fenced step 1 is refused: {rejected:?}"
        );
        let accepted = t.outcome["accepted_writes"].as_array().unwrap();
        assert!(
            accepted
                .iter()
                .any(|w| w["worker"] == "worker-A" && w["step"] == 2),
            "seed {seed}: A's unfenced step 2 lands: {accepted:?}"
        );
        let refusal = position(&t, "worker-A -> ledger: step 1");
        let landing = position(&t, "worker-A -> ledger: step 2");
        assert!(refusal < landing);
        assert!(t.entries[refusal].text.ends_with("AND last_token <= 33"));
        assert!(t.entries[landing].text.contains("token 33 unchecked"));
        assert_eq!(verdict(&t, "fence-monotonic"), Verdict::Violated);
        assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated);
        assert_eq!(
            t.outcome["balance"],
            json!(30),
            "B's four steps and A's steps 2–4"
        );
        let moves_on = &t.entries[refusal..landing];
        assert!(moves_on.iter().any(|e| e
            .notes
            .iter()
            .any(|n| n.contains("logs step 1 as failed and goes on to the next step"))));
    }
    // Frozen after step 1 (the scenario's other default), the same code lets step 2 through
    // without ever being refused.
    let late = trace(
        &[
            ("fencing", "first-write-only"),
            ("pause_start_ms", "5000"),
            ("heartbeat_ms", "10000"),
        ],
        4,
    );
    assert!(late.outcome["rejected_writes"].as_array().unwrap().is_empty());
    assert_eq!(verdict(&late, "no-double-debit"), Verdict::Violated);
    let a_write = position(&late, "worker-A: finishes the work of step 2");
    assert!(
        late.entries[a_write].notes[0].contains("Only step 1's write asked the ledger to check the token")
    );
}

#[test]
fn retrying_after_a_rejection_runs_the_job_twice() {
    let t = trace(&[("fencing", "retry-after-reject")], 1);
    assert_eq!(t.outcome["balance"], json!(30));
    assert_eq!(
        verdict(&t, "fence-monotonic"),
        Verdict::Holds,
        "the retry holds a genuine, newer token"
    );
    assert!(t.outcome["grants"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["worker"] == "worker-A" && g["token"] == 35));
}

/// A wakes at 32 s: after B took over and read the progress, before B's first write.
const IN_THE_GAP: (&str, &str) = ("pause_ms", "27000");

#[test]
fn the_write_predicate_leaves_a_gap_between_the_new_holder_s_progress_read_and_its_first_write() {
    for seed in 0..50 {
        let t = trace(&[("fencing", "write-predicate"), IN_THE_GAP], seed);
        assert_eq!(verdict(&t, "fence-monotonic"), Verdict::Holds, "seed {seed}");
        assert_eq!(verdict(&t, "no-double-debit"), Verdict::Violated, "seed {seed}");
        assert_eq!(t.outcome["balance"], json!(50), "seed {seed}");
        let a_write = position(&t, "worker-A -> ledger: step 2");
        assert!(
            t.entries[a_write]
                .notes
                .iter()
                .any(|n| n.contains("worker-B holds 34, but 34 has not reached the ledger yet")),
            "seed {seed}: the gap is narrated where A's write lands: {:?}",
            t.entries[a_write].notes
        );
    }
}

#[test]
fn fencing_on_takeover_closes_the_gap() {
    for seed in 0..50 {
        let t = trace(&[("fencing", "fence-on-takeover"), IN_THE_GAP], seed);
        assert_eq!(verdict(&t, "no-double-debit"), Verdict::Holds, "seed {seed}");
        assert_eq!(t.outcome["balance"], json!(60), "seed {seed}");
        assert_eq!(
            t.outcome["rejected_writes"],
            json!([{"worker": "worker-A", "token": 33, "step": 2, "reason": "token 33 < 34: a newer holder exists"}]),
            "seed {seed}"
        );
        // B's stamp reached the row before B read the progress.
        let stamp = position(&t, "worker-B -> ledger: stamp: SET last_token = 34");
        let seen = position(&t, "ledger -> worker-B: last_token = 34");
        let read = position(&t, "worker-B -> ledger: how far has the job got?");
        assert!(stamp < seen && seen < read, "seed {seed}");
    }
}

#[test]
fn no_double_debit_breaks_at_the_write_that_debits_a_step_twice() {
    for (fencing, extra) in [
        ("none", None),
        ("app-check", None),
        ("first-write-only", None),
        ("retry-after-reject", None),
        ("write-predicate", Some(IN_THE_GAP)),
    ] {
        let mut pairs = vec![("fencing", fencing)];
        pairs.extend(extra);
        let t = trace(&pairs, 1);
        let twice = t
            .entries
            .iter()
            .position(|e| e.notes.iter().any(|n| n.contains("debited for it twice")))
            .unwrap_or_else(|| panic!("{fencing}: no step debited twice"));
        assert_eq!(violated_at(&t, "no-double-debit"), twice, "fencing={fencing}");
    }
}

#[test]
fn without_a_pause_a_does_the_job_and_b_finds_it_done() {
    let t = trace(&[("fencing", "none"), ("pause_ms", "0")], 1);
    assert_eq!(t.outcome["balance"], json!(60));
    assert_eq!(t.outcome["max_concurrent_holders"], json!(1));
    assert!(
        t.properties.iter().all(|p| p.verdict == Verdict::Holds),
        "{:?}",
        t.properties
    );
}

#[test]
fn the_unsafe_window_is_highlighted_while_both_believe() {
    let t = run(
        &request(&[("fencing", "write-predicate")], 1),
        Limits::default(),
        Recording::Full,
    )
    .unwrap();
    let flagged: Vec<u64> = t
        .entries
        .iter()
        .filter(|e| e.snapshot.as_ref().unwrap().highlight.is_some())
        .map(|e| e.time_us)
        .collect();
    assert!(!flagged.is_empty());
    assert!(
        flagged.iter().all(|&us| (30_000_000..=41_100_000).contains(&us)),
        "{flagged:?}"
    );
}

/// A trainer pressing `n` from the first step: each press jumps to the next beat. The zombie's
/// write is a beat of its own in every variant, reached in a few presses, with the question
/// about it asked one beat before.
#[test]
fn pressing_next_beat_from_the_start_reaches_the_zombie_s_write() {
    for fencing in FENCING {
        for seed in [1, 7, 42] {
            let t = trace(&[("fencing", fencing)], seed);
            let mut at = 0u32;
            let mut presses = 0;
            let landing = loop {
                let next = t
                    .beats
                    .iter()
                    .filter_map(|b| b.seq.map(|s| (s, b)))
                    .find(|(s, _)| *s > at)
                    .unwrap_or_else(|| panic!("{fencing}: no beat after step {at}"));
                presses += 1;
                at = next.0;
                if next.1.key == "a-write" {
                    break next;
                }
            };
            assert!(presses <= 8, "{fencing}: {presses} presses");
            let entry = &t.entries[landing.0 as usize];
            // Frozen before its first write, the first-write-only zombie first writes step 1.
            let a_step = if fencing == "first-write-only" { 1 } else { 2 };
            assert!(
                entry
                    .text
                    .starts_with(&format!("worker-A -> ledger: step {a_step}")),
                "{fencing} seed {seed}: the beat is where the zombie's write reaches the ledger, not {}",
                entry.text
            );
            let refused = t.outcome["rejected_writes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["worker"] == "worker-A" && w["step"] == a_step);
            let safe = matches!(
                fencing,
                "write-predicate" | "retry-after-reject" | "fence-on-takeover" | "first-write-only"
            );
            assert_eq!(
                landing.1.title.contains("refused"),
                safe,
                "{fencing}: {}",
                landing.1.title
            );
            assert_eq!(
                refused, safe,
                "{fencing} seed {seed}: {}",
                t.outcome["rejected_writes"]
            );
            let wakes = t.beats.iter().find(|b| b.key == "a-wakes").unwrap();
            let q = wakes.question.as_ref().expect("a question before the answer");
            assert!(q.prompt.contains("token 33"));
            assert_eq!(
                q.answers[q.correct as usize].starts_with("Refuses"),
                safe,
                "{fencing}"
            );
            assert!(wakes.seq.unwrap() < landing.0);
        }
    }
}

#[test]
fn the_zombie_still_believes_after_the_store_granted_b() {
    for fencing in ["none", "write-predicate", "fence-on-takeover"] {
        for seed in 0..20 {
            let t = trace(&[("fencing", fencing)], seed);
            let ctx = format!("fencing={fencing} seed={seed}");
            let (acquired, froze) = (beat_at(&t, "a-acquires"), beat_at(&t, "a-freezes"));
            let (expired, takeover) = (beat_at(&t, "expires"), beat_at(&t, "b-takes-over"));
            // Before and into its pause A both believes and is the row's owner.
            for seq in acquired..=froze {
                assert_eq!(holding(&t, seq, "worker-A"), (true, true), "{ctx} step {seq}");
            }
            // From the expiry, the row names nobody (or B, once granted): A only believes.
            for seq in expired..=takeover {
                assert_eq!(holding(&t, seq, "worker-A"), (true, false), "{ctx} step {seq}");
            }
            assert_eq!(holding(&t, expired, "worker-B"), (false, false), "{ctx}");
            assert_eq!(holding(&t, takeover, "worker-B"), (true, true), "{ctx}");
            // The store's record moves to B before B hears so.
            assert!(
                (expired..takeover).any(|seq| holding(&t, seq, "worker-B") == (false, true)),
                "{ctx}"
            );
            for (seq, e) in t.entries.iter().enumerate() {
                let ids: Vec<u32> = e.holdings.iter().map(|h| h.node.0).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ctx} step {seq}: {ids:?}");
                assert!(
                    e.holdings.iter().all(|h| h.believes || h.granted),
                    "{ctx} step {seq}"
                );
                assert!(
                    e.holdings.iter().filter(|h| h.granted).count() <= 1,
                    "{ctx} step {seq}"
                );
                // The highlight is the world's own count of believers.
                let believers = e.holdings.iter().filter(|h| h.believes).count();
                assert_eq!(e.highlight.is_some(), believers >= 2, "{ctx} step {seq}");
            }
        }
    }
}

/// Where A wakes close to B's first write, B's poll period decides whether B has written:
/// B takes the lease at its first poll after A's lease ends, up to a whole period later
/// (with a 31 s TTL, 4.5 s). The expectation promises the story only once B's first write
/// is sure to have landed, so every run near that edge meets it.
#[test]
fn near_b_s_first_write_every_variant_meets_its_expectation() {
    let mut missed = Vec::new();
    for fencing in FENCING {
        for ttl_ms in [30_000u64, 31_000, 32_000, 34_500] {
            for start_ms in [1_000u64, 5_000] {
                for heartbeat in ["0", "10000"] {
                    for wake_after_expiry_ms in (0..12_000u64).step_by(250) {
                        let pause = (ttl_ms + wake_after_expiry_ms - start_ms).to_string();
                        let (ttl, start) = (ttl_ms.to_string(), start_ms.to_string());
                        let pairs = [
                            ("fencing", fencing),
                            ("ttl_ms", ttl.as_str()),
                            ("pause_start_ms", start.as_str()),
                            ("pause_ms", pause.as_str()),
                            ("heartbeat_ms", heartbeat),
                        ];
                        let req = request(&pairs, 1);
                        let t = run(&req, Limits::default(), Recording::Summary).unwrap();
                        let miss = expectation_for(&req).unwrap().mismatches(&t);
                        if !miss.is_empty() {
                            missed.push(format!("{pairs:?}: {miss:?}"));
                        }
                    }
                }
            }
        }
    }
    assert!(missed.is_empty(), "{} runs missed: {missed:#?}", missed.len());
}

/// The beats tell the run the parameters make, not the default one: A freezing after its
/// second step under a 40 s lease is told as such, with B starting step 3, and the numbers
/// of the default story (step 2, 30 s, 11 s, 37 s) appear nowhere.
#[test]
fn the_beats_follow_the_parameters() {
    let t = trace(
        &[
            ("fencing", "app-check"),
            ("ttl_ms", "40000"),
            ("pause_start_ms", "9000"),
            ("pause_ms", "50000"),
            ("heartbeat_ms", "15000"),
        ],
        1,
    );
    let text = |key: &str| {
        let b = t
            .beats
            .iter()
            .find(|b| b.key == key)
            .unwrap_or_else(|| panic!("no beat {key}"));
        assert!(b.seq.is_some(), "beat {key} never happens");
        format!("{} — {}", b.title, b.text)
    };
    assert!(text("a-acquires").contains("for 40 s"), "{}", text("a-acquires"));
    assert!(
        text("a-freezes").contains("after step 2"),
        "{}",
        text("a-freezes")
    );
    assert!(
        text("b-takes-over").contains("starts step 3"),
        "{}",
        text("b-takes-over")
    );
    assert!(text("b-writes").contains("step 3"), "{}", text("b-writes"));
    // A wakes at 59 s, 19 s after its lease ran out, 51 s after its check at about 8 s.
    assert!(text("a-wakes").contains("about 19 s ago"), "{}", text("a-wakes"));
    assert!(text("a-write").contains("51 s old"), "{}", text("a-write"));
}

/// Where the parameters leave the story out (A wakes before its lease runs out), the beats
/// stop at what every run shows instead of telling a takeover that does not happen.
#[test]
fn without_the_story_the_beats_claim_no_takeover() {
    let t = trace(&[("fencing", "write-predicate"), ("pause_ms", "20000")], 1);
    let keys: Vec<&str> = t.beats.iter().map(|b| b.key.as_str()).collect();
    assert_eq!(keys, ["a-acquires", "a-freezes"]);
    assert!(t.beats.iter().all(|b| b.seq.is_some()));
}

/// Each variant's default run promises its story: first-write-only's default (A frozen at
/// 2 s, B's poll half a second after the expiry) once fell outside a bound that allowed B a
/// whole poll period after the expiry.
#[test]
fn every_variant_default_promises_two_holders() {
    for fencing in FENCING {
        let e = expectation_for(&request(&[("fencing", fencing)], 1)).unwrap();
        assert!(
            e.outcome
                .iter()
                .any(|(k, v)| k == "max_concurrent_holders" && *v == json!(2)),
            "{fencing}: {:?}",
            e.outcome
        );
    }
}
