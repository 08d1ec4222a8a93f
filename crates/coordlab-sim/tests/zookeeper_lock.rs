//! `zookeeper-lock`: both watch styles reach their declared outcome for many seeds; with
//! predecessor watches each release wakes exactly the next waiter, with the lock-node watch
//! every release wakes the whole queue; the frozen holder's session expires, the next waiter
//! takes over with a higher token and the ledger refuses the late write.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::sweep::sweep;
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

use crate::story::{beat_at, holding};

fn request(pairs: &[(&str, &str)], seed: u64) -> RunRequest {
    let params: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RunRequest {
        scenario: "zookeeper-lock".into(),
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

fn at(t: &Trace, needle: &str) -> usize {
    t.entries
        .iter()
        .position(|e| e.text.contains(needle) || e.notes.iter().any(|n| n.contains(needle)))
        .unwrap_or_else(|| panic!("no entry with `{needle}`"))
}

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    let variants: [&[(&str, &str)]; 6] = [
        &[("watch", "predecessor")],
        &[("watch", "lock-node")],
        &[("watch", "predecessor"), ("pause_ms", "0")],
        &[("watch", "lock-node"), ("pause_ms", "0"), ("waiters", "8")],
        &[
            ("watch", "predecessor"),
            ("waiters", "2"),
            ("session_timeout_ms", "2000"),
        ],
        &[("watch", "predecessor"), ("pause_ms", "1000")],
    ];
    for pairs in variants {
        for seed in 0..200 {
            let req = request(pairs, seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "{pairs:?} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn with_predecessor_watches_each_release_wakes_exactly_the_next_waiter() {
    for waiters in ["2", "4", "8"] {
        let t = trace(&[("watch", "predecessor"), ("waiters", waiters)], 5);
        let n: u64 = waiters.parse().unwrap();
        let per_release = t.outcome["wakeups_per_release"].as_array().unwrap().clone();
        assert_eq!(per_release.len() as u64, n + 1, "{per_release:?}");
        // Every release but the last hands over to exactly one waiter; the last has nobody.
        assert!(
            per_release[..n as usize].iter().all(|w| *w == json!(1)),
            "{per_release:?}"
        );
        assert_eq!(per_release[n as usize], json!(0));
        assert_eq!(t.outcome["wakeups_on_create"], json!(0));
        assert_eq!(verdict(&t, "one-wakeup-per-release"), Verdict::Holds);
        // Each waiter is woken once in its whole life.
        for k in 2..=n + 1 {
            let woken = t
                .entries
                .iter()
                .filter(|e| e.text.contains(&format!("zookeeper -> worker-{k}: watch fired")))
                .count();
            assert_eq!(woken, 1, "worker-{k} with {waiters} waiters");
        }
    }
}

#[test]
fn watching_the_lock_node_wakes_the_whole_queue_on_every_release() {
    let t = trace(&[("watch", "lock-node"), ("waiters", "4")], 5);
    assert_eq!(t.outcome["wakeups_per_release"], json!([4, 3, 2, 1, 0]));
    assert_eq!(t.outcome["max_wakeups_per_release"], json!(4));
    assert!(t.outcome["wakeups_on_create"].as_u64().unwrap() > 0);
    assert_eq!(verdict(&t, "one-wakeup-per-release"), Verdict::Violated);
    // The herd costs wake-ups, not safety.
    assert_eq!(verdict(&t, "one-holder-per-store"), Verdict::Holds);
    assert_eq!(verdict(&t, "tokens-increase"), Verdict::Holds);
}

#[test]
fn the_frozen_holder_loses_its_node_and_its_late_write_is_refused() {
    let t = trace(&[], 2);
    let expiry = &t.entries[at(&t, "session 0x101 expires")];
    // worker-1 was last heard before its pause at 1.5 s: expiry comes one session timeout
    // (4 s) after that, by ZooKeeper's clock.
    assert!(
        (5_000_000..5_500_000).contains(&expiry.time_us),
        "{}",
        expiry.time_us
    );
    assert!(expiry.notes.iter().any(|n| n.contains("n-0000000000 is deleted")));
    let grants = t.outcome["grants"].as_array().unwrap();
    assert_eq!(
        grants[0],
        json!({"worker": "worker-1", "token_or_revision": 0, "granted_by": "zookeeper"})
    );
    assert_eq!(
        grants[1],
        json!({"worker": "worker-2", "token_or_revision": 1, "granted_by": "zookeeper"})
    );
    let takeover = at(&t, "worker-2 holds the lock");
    let b_write = at(&t, "worker-2 -> ledger: step 3");
    let late = at(&t, "worker-1 -> ledger: step 2");
    assert!(at(&t, "session 0x101 expires") < takeover && takeover < b_write && b_write < late);
    let rejected = t.outcome["rejected_writes"].as_array().unwrap();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0]["worker"], "worker-1");
    assert_eq!(rejected[0]["token"], 0);
    assert_eq!(t.outcome["max_concurrent_holders"], json!(1));
    assert_eq!(t.outcome["max_concurrent_believers"], json!(2));
    assert_eq!(verdict(&t, "fence-monotonic"), Verdict::Holds);
}

#[test]
fn the_zombie_window_is_highlighted_only_while_worker_1_still_believes() {
    let t = run(&request(&[], 3), Limits::default(), Recording::Full).unwrap();
    let flagged: Vec<u64> = t
        .entries
        .iter()
        .filter(|e| e.snapshot.as_ref().unwrap().highlight.is_some())
        .map(|e| e.time_us)
        .collect();
    assert!(!flagged.is_empty());
    // From worker-2's takeover (after the expiry at ~5.4 s) to worker-1's refused write
    // (after it wakes at 9.5 s).
    assert!(
        flagged.iter().all(|us| (5_000_000..9_600_000).contains(us)),
        "{flagged:?}"
    );
}

#[test]
fn a_pause_shorter_than_the_session_timeout_costs_nothing() {
    let t = trace(&[("pause_ms", "1000")], 1);
    assert_eq!(t.outcome["first_holder_session_expired"], json!(false));
    assert_eq!(t.outcome["rejected_writes"], json!([]));
    assert_eq!(t.outcome["max_concurrent_believers"], json!(1));
}

#[test]
fn random_faults_never_break_the_lock_or_the_fence() {
    for watch in ["predecessor", "lock-node"] {
        let report = sweep(
            &request(&[("watch", watch)], 1),
            0..150,
            &[
                "one-holder-per-store".to_string(),
                "tokens-increase".to_string(),
                "fence-monotonic".to_string(),
            ],
        )
        .unwrap();
        eprintln!(
            "zookeeper-lock watch={watch}: {} random runs, findings {:?}",
            report.runs, report.findings
        );
        assert_eq!(report.runs, 150);
        assert!(report.findings.is_empty(), "{watch}: {:?}", report.findings);
    }
}

#[test]
fn each_watch_style_tells_its_story_in_beats_with_one_question() {
    for (watch, keys, wake) in [
        (
            "predecessor",
            &[
                "first-holds",
                "queue",
                "freeze",
                "expired",
                "second-holds",
                "fenced",
            ][..],
            1,
        ),
        (
            "lock-node",
            &[
                "first-holds",
                "queue",
                "freeze",
                "expired",
                "second-holds",
                "herd",
                "fenced",
            ][..],
            2,
        ),
    ] {
        let t = trace(&[("watch", watch)], 1);
        let got: Vec<&str> = t.beats.iter().map(|b| b.key.as_str()).collect();
        assert_eq!(got, keys, "{watch}");
        let seq = |key: &str| t.beats.iter().find(|b| b.key == key).unwrap().seq.unwrap() as usize;
        assert_eq!(seq("expired"), at(&t, "session 0x101 expires"), "{watch}");
        assert_eq!(seq("fenced"), at(&t, "The ledger refuses"), "{watch}");
        // One question: how many waiters the expiry wakes (one, or the whole herd).
        let questions: Vec<_> = t.beats.iter().filter_map(|b| b.question.as_ref()).collect();
        assert_eq!(questions.len(), 1, "{watch}");
        assert_eq!(questions[0].correct, wake, "{watch}");
        assert!(seq("freeze") < seq("expired"));
    }
}

#[test]
fn after_its_session_expires_the_frozen_holder_believes_and_worker_2_is_first_in_line() {
    for watch in ["predecessor", "lock-node"] {
        for seed in 0..10 {
            let t = trace(&[("watch", watch)], seed);
            let ctx = format!("watch={watch} seed={seed}");
            let first = beat_at(&t, "first-holds");
            let (expired, second) = (beat_at(&t, "expired"), beat_at(&t, "second-holds"));
            assert_eq!(holding(&t, first, "worker-1"), (true, true), "{ctx}");
            // ZooKeeper deleted worker-1's node: worker-2's is the lowest before it has listed.
            assert_eq!(holding(&t, expired, "worker-1"), (true, false), "{ctx}");
            assert_eq!(holding(&t, expired, "worker-2"), (false, true), "{ctx}");
            assert_eq!(holding(&t, second, "worker-1"), (true, false), "{ctx}");
            assert_eq!(holding(&t, second, "worker-2"), (true, true), "{ctx}");
            for (seq, e) in t.entries.iter().enumerate() {
                let ids: Vec<u32> = e.holdings.iter().map(|h| h.node.0).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ctx} step {seq}: {ids:?}");
                // The zombie warning is a believer that ZooKeeper's tree does not name.
                let zombie = e.holdings.iter().any(|h| h.believes && !h.granted);
                assert_eq!(e.highlight.is_some(), zombie, "{ctx} step {seq}");
            }
        }
    }
}

/// The freeze beat asks how many waiters the session's expiry wakes only where the pause
/// outlasts the session: a 3 s pause under a 4 s timeout expires nothing.
#[test]
fn the_expiry_question_is_asked_only_when_the_session_expires() {
    let asks = |pairs: &[(&str, &str)]| {
        let t = trace(pairs, 1);
        let freeze = t.beats.iter().find(|b| b.key == "freeze").expect("a freeze beat");
        freeze.question.is_some()
    };
    assert!(asks(&[]));
    assert!(!asks(&[("pause_ms", "3000")]));
}
