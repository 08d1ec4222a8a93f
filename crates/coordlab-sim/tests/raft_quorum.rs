//! `raft-quorum`: servers crash one by one under a writing client. Writes keep committing up
//! to ⌊(N−1)/2⌋ failures and stop at the next one; an even cluster survives no more failures
//! than the odd one below it.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::trace::{Snapshot, StopReason, TableView};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(pairs: &[(&str, &str)], seed: u64) -> RunRequest {
    let params: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RunRequest {
        scenario: "raft-quorum".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn sized(servers: u32, seed: u64, recording: Recording) -> Trace {
    let n = servers.to_string();
    run(&request(&[("servers", &n)], seed), Limits::default(), recording).unwrap()
}

fn table<'a>(s: &'a Snapshot, title: &str) -> &'a TableView {
    s.tables.iter().find(|t| t.title == title).unwrap()
}

#[test]
fn every_cluster_size_meets_its_expectation_across_seeds() {
    for servers in 1..=7u32 {
        for seed in 0..40 {
            let n = servers.to_string();
            let req = request(&[("servers", &n)], seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "servers={servers} seed={seed}: {miss:?}");
            assert_eq!(t.stop, StopReason::Quiescent, "servers={servers} seed={seed}");
            for p in &t.properties {
                assert_eq!(
                    p.verdict,
                    Verdict::Holds,
                    "servers={servers} seed={seed}: {}",
                    p.name
                );
            }
        }
    }
}

#[test]
fn writes_commit_at_every_tolerated_failure_count_and_never_after() {
    for servers in 1..=7u32 {
        for seed in 0..20 {
            let t = sized(servers, seed, Recording::Summary);
            let f = (servers - 1) / 2;
            let by = t.outcome["writes_committed_by_failures"]
                .as_array()
                .unwrap()
                .clone();
            for (k, w) in by.iter().enumerate() {
                let w = w.as_u64().unwrap();
                if k as u32 <= f {
                    assert!(
                        w > 0,
                        "servers={servers} seed={seed}: no write with {k} down: {by:?}"
                    );
                } else {
                    assert_eq!(
                        w, 0,
                        "servers={servers} seed={seed}: a write with {k} down: {by:?}"
                    );
                }
            }
            assert_eq!(t.outcome["crashes_until_writes_stopped"], json!(f + 1));
            assert_eq!(t.outcome["writes_committed_after_loss"], json!(0));
            assert!(t.outcome["writes_committed_before_loss"].as_u64().unwrap() > f as u64);
            assert_eq!(t.outcome["client_stuck"], json!(true));
        }
    }
}

#[test]
fn four_servers_tolerate_no_more_failures_than_three_and_six_no_more_than_five() {
    for (odd, even) in [(3u32, 4u32), (5, 6)] {
        for seed in 0..20 {
            let a = sized(odd, seed, Recording::Summary).outcome;
            let b = sized(even, seed, Recording::Summary).outcome;
            assert_eq!(
                a["failures_tolerated"], b["failures_tolerated"],
                "{odd} vs {even}"
            );
            assert_eq!(
                a["crashes_until_writes_stopped"], b["crashes_until_writes_stopped"],
                "{odd} vs {even} seed={seed}"
            );
            // The even cluster needs a bigger majority for the same tolerance.
            assert_eq!(
                b["majority"].as_u64().unwrap(),
                a["majority"].as_u64().unwrap() + 1
            );
        }
    }
    let three = sized(3, 1, Recording::Summary).outcome;
    assert_eq!(three["failures_tolerated"], json!(1));
    assert_eq!(three["crashes_until_writes_stopped"], json!(2));
    let seven = sized(7, 1, Recording::Summary).outcome;
    assert_eq!(seven["failures_tolerated"], json!(3));
    assert_eq!(seven["crashes_until_writes_stopped"], json!(4));
}

#[test]
fn the_table_lists_sizes_one_to_seven_and_marks_the_chosen_one() {
    for servers in [3u32, 4] {
        let t = sized(servers, 1, Recording::Full);
        let snap = t.entries[0].snapshot.clone().unwrap();
        let sizes = table(&snap, "Cluster size and failures tolerated");
        let expect: Vec<(&str, &str, &str)> = vec![
            ("1", "1", "0"),
            ("2", "2", "0"),
            ("3", "2", "1"),
            ("4", "3", "1"),
            ("5", "3", "2"),
            ("6", "4", "2"),
            ("7", "4", "3"),
        ];
        assert_eq!(sizes.rows.len(), 7);
        for (row, (n, m, f)) in sizes.rows.iter().zip(expect) {
            assert_eq!((row[0].as_str(), row[1].as_str(), row[2].as_str()), (n, m, f));
            let chosen = row[0] == servers.to_string();
            assert_eq!(row[3].contains("this run"), chosen, "{row:?}");
        }
        assert!(sizes.rows[3][3].contains("no more than 3"));
        assert!(sizes.rows[5][3].contains("no more than 5"));
    }
}

#[test]
fn each_crash_is_narrated_with_the_survivors_and_the_majority() {
    let t = sized(5, 2, Recording::Lines);
    let crash_notes: Vec<String> = t
        .entries
        .iter()
        .filter(|e| e.fault.is_some())
        .flat_map(|e| e.notes.clone())
        .collect();
    let has = |s: &str| crash_notes.iter().any(|n| n.contains(s));
    assert!(has("S5 is down (1 down so far; a 5-server cluster can lose 2). 4 of 5 servers are up and a majority is 3"));
    assert!(has(
        "S4 is down (2 down so far; a 5-server cluster can lose 2). 3 of 5 servers are up"
    ));
    assert!(has("S3 is down (3 down, one more than a 5-server cluster can lose). Only 2 of 5 are up, fewer than the 3"));
    assert!(has("S1 is down too: 1 of 5 up"));
    let t = sized(4, 2, Recording::Lines);
    let text = crate::story::notes(&t);
    assert!(text
        .iter()
        .any(|n| n.contains("so 4 survive only 1 failure — no more than 3 servers do")));
}

#[test]
fn after_the_loss_the_leader_holds_the_write_uncommitted_and_the_window_is_marked() {
    let t = sized(5, 3, Recording::Full);
    let crash_of = |name: &str| {
        t.entries
            .iter()
            .find(|e| e.text == format!("{name} crashes"))
            .unwrap()
            .seq as usize
    };
    let (lost, leader_down) = (crash_of("S3"), crash_of("S1"));
    // Just before the leader goes too, its log ends in an entry that is not committed.
    let before = t.entries[leader_down - 1].snapshot.clone().unwrap();
    let logs = table(&before, "Logs");
    let s1_last = logs.rows.iter().rfind(|r| r[0] == "S1").unwrap();
    assert_eq!(s1_last[4], "… not committed", "{s1_last:?}");
    let now = table(&before, "Quorum now");
    assert_eq!(now.rows[0][0], "2 of 5");
    assert_eq!(now.rows[0][3], "NO");
    // Every step from the loss on carries the warning; none before it.
    for e in &t.entries {
        let h = e.snapshot.as_ref().unwrap().highlight.clone().unwrap_or_default();
        let marked = h.starts_with("Only ");
        assert_eq!(marked, e.seq as usize >= lost, "step {}: {h:?}", e.seq);
    }
    let text = crate::story::notes(&t);
    assert!(text
        .iter()
        .any(|n| n.starts_with("S1 takes") && n.contains("The write stays uncommitted")));
}

#[test]
fn the_story_survives_every_planted_bug() {
    for bug in [
        "skip-up-to-date-check",
        "commit-old-term-by-count",
        "forget-vote-on-restart",
    ] {
        for seed in 0..20 {
            let req = request(&[("bug", bug)], seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "bug={bug} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn runs_are_deterministic_and_short_enough_to_step_through() {
    let a = sized(5, 6, Recording::Full);
    let b = sized(5, 6, Recording::Full);
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert!(a.event_count < 1_000, "{} events", a.event_count);
}
