//! `raft-figure-8`: the paper's commit-rule scenario. Counting replicas loses an entry that
//! was committed and applied (state-machine safety fails on screen); the paper's rule keeps
//! it — across many seeds, with the story told step by step.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::trace::StopReason;
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

const COUNT: &str = "count-replicas";
const CURRENT: &str = "current-term-only";

fn request(rule: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("commit_rule".into(), rule.into());
    RunRequest {
        scenario: "raft-figure-8".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(rule: &str, seed: u64, recording: Recording) -> Trace {
    run(&request(rule, seed), Limits::default(), recording).unwrap()
}

fn verdict(t: &Trace, property: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == property).unwrap().verdict
}

use crate::story::notes;

/// The step of the first note that starts with `prefix`.
fn step_of(t: &Trace, prefix: &str) -> u32 {
    t.entries
        .iter()
        .find(|e| e.notes.iter().any(|n| n.starts_with(prefix)))
        .unwrap_or_else(|| panic!("no note starting with {prefix:?}"))
        .seq
}

#[test]
fn both_rules_meet_their_declared_expectation_for_many_seeds() {
    for rule in [COUNT, CURRENT] {
        for seed in 0..60 {
            let req = request(rule, seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "{rule} seed={seed}: {miss:?}");
            assert_eq!(t.stop, StopReason::Quiescent, "{rule} seed={seed}");
        }
    }
}

#[test]
fn count_replicas_loses_an_entry_it_had_committed_and_applied() {
    for seed in 0..60 {
        let t = trace(COUNT, seed, Recording::Summary);
        let o = &t.outcome;
        assert_eq!(
            verdict(&t, "state-machine-safety"),
            Verdict::Violated,
            "seed={seed}"
        );
        assert_eq!(
            verdict(&t, "leader-completeness"),
            Verdict::Violated,
            "seed={seed}"
        );
        // The term-2 entry was committed at #2 on its own, and #2 ends up holding S5's term-3 one.
        assert_eq!(o["index2_committed_term"], json!(2), "seed={seed}");
        assert_eq!(o["index2_committed_alone"], json!(true), "seed={seed}");
        assert_eq!(o["index2_final_term"], json!(3), "seed={seed}");
        assert_eq!(o["lost_committed_entries"], json!(1), "seed={seed}");
        assert_eq!(o["s5_elected_after_commit"], json!(true), "seed={seed}");
        assert_eq!(o["leaders"][4], json!({"term": 5, "leader": "S5"}), "seed={seed}");
    }
}

#[test]
fn current_term_only_keeps_the_entry_and_violates_nothing() {
    for seed in 0..60 {
        let t = trace(CURRENT, seed, Recording::Summary);
        let o = &t.outcome;
        for p in &t.properties {
            assert_eq!(p.verdict, Verdict::Holds, "seed={seed}: {}", p.name);
        }
        // #2 committed only together with S1's term-4 entry, and it is still there at the end.
        assert_eq!(o["index2_committed_term"], json!(2), "seed={seed}");
        assert_eq!(o["index2_committed_alone"], json!(false), "seed={seed}");
        assert_eq!(o["index2_final_term"], json!(2), "seed={seed}");
        assert_eq!(o["lost_committed_entries"], json!(0), "seed={seed}");
        assert_eq!(o["s5_elected_after_commit"], json!(false), "seed={seed}");
        assert_eq!(o["logs_converged"], json!(true), "seed={seed}");
    }
}

#[test]
fn the_figure_s_leaders_are_s1_s5_s1_in_terms_2_to_4() {
    for rule in [COUNT, CURRENT] {
        let t = trace(rule, 3, Recording::Summary);
        let leaders = t.outcome["leaders"].as_array().unwrap();
        assert_eq!(leaders[0], json!({"term": 1, "leader": "S1"}), "{rule}");
        assert_eq!(leaders[1], json!({"term": 2, "leader": "S1"}), "{rule}");
        assert_eq!(leaders[2], json!({"term": 3, "leader": "S5"}), "{rule}");
        assert_eq!(leaders[3], json!({"term": 4, "leader": "S1"}), "{rule}");
    }
}

#[test]
fn count_replicas_story_is_told_in_order_and_safety_breaks_after_the_overwrite() {
    let t = trace(COUNT, 1, Recording::Lines);
    let a = step_of(&t, "(a) S1 leads term 2");
    let b = step_of(&t, "(b) S1 is down and S5 wins term 3");
    let b2 = step_of(&t, "(b) S5 takes set z=3 as #2 in term 3");
    let c = step_of(&t, "(c) S5 is down; S1 is back and wins term 4");
    let counted = step_of(&t, "(c) S1 now knows the term-2 entry at #2 is on");
    let crash = step_of(&t, "S1 crashes right after it counted #2 committed");
    let elected = step_of(&t, "(d) S5 wins term 5");
    let lost = step_of(&t, "(d) S5 has overwritten #2");
    assert!(
        a < b && b < b2 && b2 < c && c < counted && counted < crash && crash < elected && elected <= lost
    );
    let text = notes(&t);
    assert!(text
        .iter()
        .any(|n| n.contains("counting copies, marks it committed and applies it")));
    // The checker catches it on screen: leader completeness when S5 is elected, state-machine
    // safety once S5's entry replaces the applied one.
    let violated_at = |name: &str| {
        t.entries
            .iter()
            .find(|e| e.violations.iter().any(|v| v == name))
            .map(|e| e.seq)
            .unwrap()
    };
    assert_eq!(violated_at("leader-completeness"), elected);
    assert!(violated_at("state-machine-safety") > elected);
    assert!(violated_at("state-machine-safety") <= lost);
}

#[test]
fn current_term_only_story_holds_back_then_commits_both_and_s5_cannot_win() {
    let t = trace(CURRENT, 1, Recording::Lines);
    let held = step_of(&t, "(c) S1 now knows the term-2 entry at #2 is on");
    let both = step_of(&t, "(e) S1's own entry of term 4 (set x=4 at #3)");
    let crash = step_of(
        &t,
        "S1 crashes right after it committed #2 together with its own term-4 entry",
    );
    let cannot = step_of(&t, "S5 stands in term");
    assert!(held < both && both < crash && crash < cannot);
    let text = notes(&t);
    assert!(text.iter().any(|n| n.contains("yet it does not commit it")));
    assert!(
        text.iter()
            .any(|n| n.starts_with("S1 commits up to #3")
                && n.contains("every entry before it commits with it"))
    );
    assert!(t.entries.iter().all(|e| e.violations.is_empty()));
}

#[test]
fn narration_is_the_same_with_and_without_snapshots() {
    for rule in [COUNT, CURRENT] {
        let lines = trace(rule, 4, Recording::Lines);
        let full = trace(rule, 4, Recording::Full);
        assert_eq!(notes(&lines), notes(&full), "{rule}");
        let summary = trace(rule, 4, Recording::Summary);
        assert_eq!(summary.outcome, full.outcome, "{rule}");
    }
}

#[test]
fn inspector_shows_index_2_on_each_server_and_flags_the_loss() {
    let t = trace(COUNT, 2, Recording::Full);
    let last = t.entries.last().unwrap().snapshot.clone().unwrap();
    let table = last
        .tables
        .iter()
        .find(|t| t.title == "Index #2 on each server")
        .unwrap();
    assert_eq!(table.rows.len(), 5);
    for row in &table.rows {
        assert_eq!(row[1], "set z=3", "{row:?}");
        assert_eq!(row[2], "3", "{row:?}");
    }
    assert!(last
        .highlight
        .as_deref()
        .is_some_and(|h| h.contains("a committed entry is lost")));
    // Between S1's count and the loss, the unsafe window is marked as such.
    let counted = step_of(&t, "(c) S1 now knows") as usize;
    let warn = t.entries[counted].snapshot.as_ref().unwrap().highlight.clone();
    assert!(warn.is_some_and(|h| h.contains("can still be elected and overwrite it")));

    let t = trace(CURRENT, 2, Recording::Full);
    let last = t.entries.last().unwrap().snapshot.clone().unwrap();
    let table = last
        .tables
        .iter()
        .find(|t| t.title == "Index #2 on each server")
        .unwrap();
    for row in &table.rows {
        assert_eq!(row[1], "set y=2", "{row:?}");
        assert_eq!(row[2], "2", "{row:?}");
    }
}

#[test]
fn runs_are_deterministic_and_short_enough_to_step_through() {
    for rule in [COUNT, CURRENT] {
        let a = trace(rule, 9, Recording::Full);
        let b = trace(rule, 9, Recording::Full);
        assert_eq!(a.fingerprint(), b.fingerprint(), "{rule}");
        assert!(a.event_count < 1_000, "{rule}: {} events", a.event_count);
    }
}

#[test]
fn the_scenario_offers_the_commit_rule_and_not_the_bug_switch() {
    let info = coordlab_sim::scenarios::catalog()
        .into_iter()
        .find(|i| i.id == "raft-figure-8")
        .unwrap();
    let keys: Vec<&str> = info.params.iter().map(|p| p.key).collect();
    assert_eq!(keys, ["commit_rule"]);
    let mut bad = request(COUNT, 1);
    bad.params.insert("bug".into(), "commit-old-term-by-count".into());
    assert!(run(&bad, Limits::default(), Recording::Summary).is_err());
}

#[test]
fn a_fork_leaves_earlier_steps_and_their_narration_unchanged() {
    // The world narrates from the state after each step, so a fork at step k cannot reach
    // back: everything before k, notes included, is the same as in the unforked run.
    let plain = trace(COUNT, 5, Recording::Lines);
    let mut forked = request(COUNT, 5);
    let at = step_of(&plain, "(c) S5 is down; S1 is back and wins term 4");
    forked.actions = vec![coordlab_sim::Action {
        at_step: at,
        fault: coordlab_sim::Fault::Crash {
            node: coordlab_sim::NodeId(2),
        },
    }];
    let forked = run(&forked, Limits::default(), Recording::Lines).unwrap();
    for k in 0..at as usize {
        assert_eq!(plain.entries[k].line(), forked.entries[k].line(), "step {k}");
        assert_eq!(plain.entries[k].notes, forked.entries[k].notes, "step {k}");
    }
    assert_ne!(plain.fingerprint(), forked.fingerprint());
}
