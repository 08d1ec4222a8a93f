//! Raft scenarios: every scenario and variant meets its declared expectation for many seeds,
//! and the stories happen as narrated.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::trace::Tone;
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};

fn request(scenario: &str, pairs: &[(&str, &str)], seed: u64) -> RunRequest {
    let params: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RunRequest {
        scenario: scenario.into(),
        params,
        seed,
        actions: vec![],
    }
}

fn lines(scenario: &str, pairs: &[(&str, &str)], seed: u64) -> Trace {
    run(
        &request(scenario, pairs, seed),
        Limits::default(),
        Recording::Lines,
    )
    .unwrap()
}

const SCENARIOS: [&str; 5] = [
    "raft-split-vote",
    "raft-election",
    "raft-log-replication",
    "raft-partition",
    "raft-stale-leader",
];

fn check(scenario: &str, pairs: &[(&str, &str)], seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let req = request(scenario, pairs, seed);
        let t = run(&req, Limits::default(), Recording::Summary).unwrap();
        let miss = expectation_for(&req).unwrap().mismatches(&t);
        assert!(miss.is_empty(), "{scenario} {pairs:?} seed={seed}: {miss:?}");
        assert_eq!(
            t.stop,
            coordlab_sim::trace::StopReason::Quiescent,
            "{scenario} seed={seed}"
        );
    }
}

#[test]
fn every_scenario_meets_its_expectation_with_defaults_across_seeds() {
    for s in SCENARIOS {
        check(s, &[], 0..150);
    }
}

fn every_size(scenario: &str, sizes: &[&str]) {
    for size in sizes {
        check(scenario, &[("servers", size)], 0..100);
    }
}

#[test]
fn election_meets_its_expectation_for_every_cluster_size() {
    every_size("raft-election", &["3", "4", "6", "7"]);
}

#[test]
fn log_replication_meets_its_expectation_for_every_cluster_size() {
    every_size("raft-log-replication", &["1", "2", "3", "4", "6", "7"]);
}

#[test]
fn stale_leader_meets_its_expectation_for_every_cluster_size() {
    every_size("raft-stale-leader", &["3", "4", "6", "7"]);
}

/// With a bug the scenarios promise nothing about safety; the story claims they still make
/// must hold and every run must end on its own.
fn every_bug(scenario: &str) {
    for bug in [
        "skip-up-to-date-check",
        "commit-old-term-by-count",
        "forget-vote-on-restart",
    ] {
        check(scenario, &[("bug", bug)], 0..100);
    }
}

#[test]
fn split_vote_bug_variants_meet_their_expectation() {
    every_bug("raft-split-vote");
}

#[test]
fn election_bug_variants_meet_their_expectation() {
    every_bug("raft-election");
}

#[test]
fn log_replication_bug_variants_meet_their_expectation() {
    every_bug("raft-log-replication");
}

#[test]
fn partition_bug_variants_meet_their_expectation() {
    every_bug("raft-partition");
}

#[test]
fn stale_leader_bug_variants_meet_their_expectation() {
    every_bug("raft-stale-leader");
}

#[test]
fn default_runs_are_short_enough_to_step_through() {
    for s in SCENARIOS {
        let t = lines(s, &[], 1);
        assert!(t.event_count < 1_000, "{s}: {} events", t.event_count);
    }
}

#[test]
fn split_vote_identical_timeouts_never_elect_and_randomized_ones_do() {
    check("raft-split-vote", &[("timeouts", "identical")], 0..100);
    for servers in ["3", "7"] {
        check(
            "raft-split-vote",
            &[("timeouts", "identical"), ("servers", servers)],
            0..50,
        );
        check("raft-split-vote", &[("servers", servers)], 0..100);
    }
    let t = lines("raft-split-vote", &[("timeouts", "identical")], 1);
    assert_eq!(t.outcome["leader_elected"], serde_json::json!(false));
    assert!(
        t.outcome["highest_term"].as_u64().unwrap() >= 5,
        "{:?}",
        t.outcome
    );
    let t = lines("raft-split-vote", &[], 1);
    assert_eq!(t.outcome["leader_elected"], serde_json::json!(true));
}

#[test]
fn election_story_leader_crashes_and_a_new_one_wins_a_higher_term() {
    let t = lines("raft-election", &[], 7);
    let text = notes_of(&t);
    assert!(text
        .iter()
        .any(|n| n.contains("S1 has") && n.contains("LEADER of term 1")));
    assert!(t.outcome["final_leader_term"].as_u64().unwrap() >= 2);
    assert_ne!(t.outcome["final_leader"], serde_json::json!("S1"));
    assert!(text.iter().any(|n| n.starts_with("S1 moves from term 1 to term")));
}

#[test]
fn partition_story_minority_cannot_commit_and_its_entry_is_discarded() {
    let t = lines("raft-partition", &[], 3);
    let text = notes_of(&t);
    assert!(text.iter().any(|n| n.starts_with("S1 drops 1 entry from #3")));
    assert!(text
        .iter()
        .any(|n| n.starts_with("S1 sees term") && n.contains("steps down")));
    assert_eq!(t.outcome["watched_side_commits"], serde_json::json!(0));
}

#[test]
fn stale_leader_story_every_follower_rejects_the_old_term() {
    let t = lines("raft-stale-leader", &[], 11);
    assert_eq!(t.outcome["stale_appends_rejected"], serde_json::json!(4));
    assert_eq!(t.outcome["final_roles"][0], serde_json::json!("FOLLOWER"));
}

#[test]
fn same_inputs_same_fingerprint() {
    for s in SCENARIOS {
        let a = run(&request(s, &[], 5), Limits::default(), Recording::Full).unwrap();
        let b = run(&request(s, &[], 5), Limits::default(), Recording::Full).unwrap();
        assert_eq!(a.fingerprint(), b.fingerprint(), "{s}");
    }
}

#[test]
fn inspector_shows_roles_logs_and_leader_progress() {
    let t = run(
        &request("raft-log-replication", &[], 2),
        Limits::default(),
        Recording::Full,
    )
    .unwrap();
    let last = t.entries.last().unwrap().snapshot.clone().unwrap();
    let titles: Vec<&str> = last.tables.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(titles[0], "Servers");
    assert_eq!(titles[1], "Logs");
    assert!(titles[2].starts_with("Leader S1's progress"), "{titles:?}");
    assert!(last.tables[1].rows.iter().any(|r| r[4] == "✓ committed"));
    let s1 = &last.nodes[0].summary;
    assert_eq!((s1.word.as_str(), s1.tone), ("leader", Tone::Holds), "{s1:?}");
    assert!(
        s1.badges.iter().any(|b| b.label == "term" && b.value == "1"),
        "{s1:?}"
    );
}

use crate::story::notes as notes_of;

fn violated(t: &Trace, property: &str) -> bool {
    t.properties
        .iter()
        .any(|p| p.name == property && p.verdict == coordlab_sim::properties::Verdict::Violated)
}

/// Issue 10, item 6: each planted bug breaks a safety property in the default run (seed 1,
/// no actions) of the scenario that carries it, and the narration names the rule skipped.
#[test]
fn each_planted_bug_breaks_safety_in_its_scenarios_default_run() {
    /// Scenario, the parameter that plants the bug, the properties it breaks, what the
    /// narration says.
    type Case<'a> = (&'a str, (&'a str, &'a str), &'a [&'a str], &'a [&'a str]);
    let cases: [Case; 3] = [
        (
            "raft-partition",
            ("bug", "skip-up-to-date-check"),
            &["leader-completeness", "state-machine-safety"],
            &[
                "without checking that S2's log is at least as up to date",
                "(§5.4.1)",
            ],
        ),
        (
            "raft-election",
            ("bug", "forget-vote-on-restart"),
            &["election-safety", "one-vote-per-term"],
            &[
                "was not kept on disk",
                "writes the term and the vote to disk before it replies",
            ],
        ),
        (
            "raft-figure-8",
            ("commit_rule", "count-replicas"),
            &["leader-completeness", "state-machine-safety"],
            &["count copies only of its own term's entries (§5.4.2), and the planted bug skips that rule"],
        ),
    ];
    for (scenario, pair, broken, said) in cases {
        let t = lines(scenario, &[pair], 1);
        for p in broken {
            assert!(violated(&t, p), "{scenario} {pair:?}: {p} holds");
        }
        let text = notes_of(&t);
        for s in said {
            assert!(
                text.iter().any(|n| n.contains(s)),
                "{scenario} {pair:?}: no note says {s:?}"
            );
        }
    }
    // The same bugs promise a violation for many seeds, not only the default one.
    for seed in 0..300 {
        for (scenario, pair) in [
            ("raft-partition", ("bug", "skip-up-to-date-check")),
            ("raft-election", ("bug", "forget-vote-on-restart")),
        ] {
            let req = request(scenario, &[pair], seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let e = expectation_for(&req).unwrap();
            assert!(
                e.verdicts
                    .iter()
                    .any(|(_, v)| *v == coordlab_sim::properties::Verdict::Violated),
                "{scenario} {pair:?} promises no violation"
            );
            assert!(e.mismatches(&t).is_empty(), "{scenario} {pair:?} seed {seed}");
        }
    }
}

/// Issue 10, items 6 and 10: the election tells why S1's first timeout is short, and a
/// restarted server says it kept its term and vote on disk.
#[test]
fn election_explains_the_early_boot_and_what_survives_a_restart() {
    let t = lines("raft-election", &[], 1);
    let text = notes_of(&t);
    assert!(text
        .iter()
        .any(|n| n.starts_with("S1 booted before the others") && n.contains("150–300 ms")));
    assert!(text.iter().any(
        |n| n.starts_with("S1 comes back with what it wrote to disk: term 1")
            && n.contains("writes its term and vote to disk before it replies")
    ));
}

/// Issue 10, item 10: what the stale-leader summary says happens, in that order — S1 steps
/// down on reading the newer term, and the followers reject its old-term AppendEntries.
#[test]
fn stale_leader_steps_down_on_the_newer_term_and_its_old_appends_are_rejected() {
    let info = coordlab_sim::scenarios::catalog()
        .into_iter()
        .find(|i| i.id == "raft-stale-leader")
        .unwrap();
    assert!(info
        .summary
        .contains("the first one stamped with the newer term makes S1 step down"));
    for seed in 0..30 {
        let t = lines("raft-stale-leader", &[], seed);
        let text = notes_of(&t);
        let down = text
            .iter()
            .position(|n| n.starts_with("S1 sees term 2") && n.contains("steps down"))
            .unwrap_or_else(|| panic!("seed {seed}: S1 never steps down"));
        let rejected = text
            .iter()
            .position(|n| n.contains("rejects AppendEntries from S1"))
            .unwrap_or_else(|| panic!("seed {seed}: nothing rejected"));
        assert!(down < rejected, "seed {seed}");
    }
}

/// Issue 10, item 10: the quorum arithmetic the summary mentions is in the narration and in
/// the table it names.
#[test]
fn quorum_tells_its_arithmetic_and_shows_the_table_it_names() {
    let t = run(
        &request("raft-quorum", &[], 1),
        Limits::default(),
        Recording::Full,
    )
    .unwrap();
    assert!(notes_of(&t)
        .iter()
        .any(|n| n.starts_with("Quorum arithmetic: 5 servers need 3 up")));
    let info = coordlab_sim::scenarios::catalog()
        .into_iter()
        .find(|i| i.id == "raft-quorum")
        .unwrap();
    let snap = t.entries.last().unwrap().snapshot.clone().unwrap();
    let table = snap
        .tables
        .iter()
        .find(|x| info.summary.contains(&format!("\"{}\"", x.title)))
        .expect("the summary names a table the state panel shows");
    assert_eq!(table.rows.len(), 7);
}

/// Issue 11: from the start of `raft-election`, the beat announcing the new leader after the
/// crash is at most 12 presses of `n` away; heartbeats never make beats.
#[test]
fn election_reaches_the_new_leader_within_twelve_beats() {
    for seed in std::iter::once(1).chain(0..50) {
        let t = run(
            &request("raft-election", &[], seed),
            Limits::default(),
            Recording::Summary,
        )
        .unwrap();
        let at = |key: &str| t.beats.iter().position(|b| b.key == key).unwrap();
        let (crash, new) = (at("leader-crashes"), at("new-leader"));
        assert!(crash < new && new < 12, "seed {seed}: beat {}", new + 1);
        assert!(t.beats[new].seq > t.beats[crash].seq, "seed {seed}");
        assert!(t.beats.iter().all(|b| !b.title.contains("heartbeat")));
    }
}

/// With the forget-vote bug, term 1 ends up with two leaders, and the outcome's `leaders`
/// lists both, in the order they were elected, as the notes tell it.
#[test]
fn the_outcome_lists_both_leaders_of_a_term_with_two() {
    let t = lines("raft-election", &[("bug", "forget-vote-on-restart")], 1);
    assert_eq!(
        t.outcome["leaders"],
        serde_json::json!([{"term": 1, "leader": "S1"}, {"term": 1, "leader": "S5"}])
    );
    let plain = lines("raft-election", &[], 1);
    assert_eq!(
        plain.outcome["leaders"],
        serde_json::json!([{"term": 1, "leader": "S1"}, {"term": 2, "leader": "S2"}])
    );
}
