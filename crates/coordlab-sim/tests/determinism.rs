//! A run is a pure function of its inputs.

use crate::common::full;
use coordlab_sim::{Action, Fault, NodeId};

#[test]
fn same_inputs_give_the_same_fingerprint() {
    for lock in ["none", "row-lock", "conditional-update"] {
        let actions = vec![Action {
            at_step: 6,
            fault: Fault::Pause {
                node: NodeId(1),
                duration_ms: 30,
            },
        }];
        let a = full(lock, 42, actions.clone());
        let b = full(lock, 42, actions);
        assert_eq!(a.fingerprint(), b.fingerprint(), "{lock}");
        assert_eq!(a, b, "{lock}");
    }
}

#[test]
fn different_seeds_give_different_traces() {
    let fingerprints: std::collections::BTreeSet<u64> = (0..20)
        .map(|s| full("row-lock", s, vec![]).fingerprint())
        .collect();
    assert_eq!(fingerprints.len(), 20);
}

#[test]
fn seeds_change_interleavings_not_just_numbers() {
    // Across seeds, either worker may be the first to reach the database.
    let mut first = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let t = full("row-lock", seed, vec![]);
        let e = t.entries.iter().find(|e| e.text.contains("FOR UPDATE")).unwrap();
        first.insert(e.text.split(' ').next().unwrap().to_string());
    }
    assert_eq!(first.len(), 2, "{first:?}");
}
