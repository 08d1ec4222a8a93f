//! Each `lost-update` variant reaches its declared outcome, whatever the seed.

use crate::common::{full, mismatches, request};
use coordlab_sim::properties::Verdict;
use coordlab_sim::{run, Limits, Recording};
use serde_json::json;

fn sweep(lock: &str, want_balance: i64, want_safe: Verdict) {
    for seed in 0..300 {
        let trace = run(
            &request(lock, seed, vec![]),
            Limits::default(),
            Recording::Summary,
        )
        .unwrap();
        assert_eq!(
            trace.outcome["balance"],
            json!(want_balance),
            "lock={lock} seed={seed}"
        );
        let p = trace
            .properties
            .iter()
            .find(|p| p.name == "no-lost-update")
            .unwrap();
        assert_eq!(p.verdict, want_safe, "lock={lock} seed={seed}");
        assert!(
            mismatches(lock, &trace).is_empty(),
            "lock={lock} seed={seed}: {:?}",
            mismatches(lock, &trace)
        );
    }
}

#[test]
fn without_a_lock_one_debit_is_lost_for_every_seed() {
    sweep("none", 70, Verdict::Violated);
}

#[test]
fn row_lock_keeps_both_debits_for_every_seed() {
    sweep("row-lock", 40, Verdict::Holds);
}

#[test]
fn conditional_update_keeps_both_debits_for_every_seed() {
    sweep("conditional-update", 40, Verdict::Holds);
}

#[test]
fn the_violation_is_recorded_on_the_second_commit() {
    let trace = full("none", 3, vec![]);
    let p = trace
        .properties
        .iter()
        .find(|p| p.name == "no-lost-update")
        .unwrap();
    let seq = p.first_violation_seq.expect("violated") as usize;
    let entry = &trace.entries[seq];
    assert_eq!(entry.violations, vec!["no-lost-update".to_string()]);
    assert!(entry.text.ends_with("COMMIT"), "{}", entry.text);
    // Before that step the balance was consistent: exactly one debit committed, ₹70.
    let commits_before = trace.entries[..seq]
        .iter()
        .filter(|e| e.text.ends_with(": COMMIT"))
        .count();
    assert_eq!(commits_before, 1);
}

#[test]
fn both_workers_read_100_without_a_lock() {
    let trace = full("none", 11, vec![]);
    let reads: Vec<&str> = trace
        .entries
        .iter()
        .filter(|e| e.text.contains("row: balance="))
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(reads.len(), 2);
    assert!(reads.iter().all(|r| r.contains("balance=100")), "{reads:?}");
}

#[test]
fn with_a_row_lock_the_second_worker_waits_and_reads_70() {
    let trace = full("row-lock", 5, vec![]);
    let reads: Vec<&str> = trace
        .entries
        .iter()
        .filter(|e| e.text.contains("row: balance="))
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(reads.len(), 2);
    assert!(
        reads[0].contains("balance=100") && reads[1].contains("balance=70"),
        "{reads:?}"
    );
    assert_eq!(trace.outcome["lock_waits"], json!(1));
}

#[test]
fn conditional_update_refuses_the_stale_write_and_retries() {
    let trace = full("conditional-update", 8, vec![]);
    assert_eq!(trace.outcome["version_conflicts"], json!(1));
    assert!(trace.entries.iter().any(|e| e.text.ends_with("UPDATE 0")));
}

#[test]
fn every_step_is_narrated() {
    for lock in ["none", "row-lock", "conditional-update"] {
        let trace = full(lock, 1, vec![]);
        let silent: Vec<String> = trace
            .entries
            .iter()
            .filter(|e| e.notes.is_empty() && e.kind != coordlab_sim::trace::EventKind::Start)
            .map(|e| e.line())
            .collect();
        assert!(
            silent.len() * 3 <= trace.entries.len(),
            "{lock}: too many silent steps: {silent:#?}"
        );
    }
}

/// With the lock holder crashed after its read (`8@crash:1`), the database rolls it back and
/// the waiter's one commit hands over nothing: the beat that says the first commit hands the
/// lock over must not fire, while in the plain run it fires at that commit.
#[test]
fn a_crashed_holder_s_rollback_is_not_told_as_a_hand_over() {
    let keys = |actions| -> Vec<String> {
        full("row-lock", 1, actions)
            .beats
            .iter()
            .filter(|b| b.seq.is_some())
            .map(|b| b.key.to_string())
            .collect()
    };
    let plain = keys(vec![]);
    assert!(plain.contains(&"first-commit".to_string()), "{plain:?}");
    let crashed = keys(coordlab_sim::kernel::faults::parse_script("8@crash:1").unwrap());
    assert!(
        crashed.contains(&"waits".to_string()),
        "the crash comes after the wait: {crashed:?}"
    );
    assert!(!crashed.contains(&"first-commit".to_string()), "{crashed:?}");
}
