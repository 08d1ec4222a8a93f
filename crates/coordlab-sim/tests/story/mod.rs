//! Reading a run's story in tests: its narration, the step of a beat, and who held the lock
//! at a step.
#![allow(dead_code)]

use coordlab_sim::Trace;

/// Every sentence of the run's narration, in order.
pub fn notes(t: &Trace) -> Vec<&str> {
    t.entries
        .iter()
        .flat_map(|e| e.notes.iter().map(String::as_str))
        .collect()
}

/// The step where the beat `key` happened; panics (failing the test) if it did not.
pub fn beat_at(t: &Trace, key: &str) -> usize {
    t.beats
        .iter()
        .find(|b| b.key == key)
        .and_then(|b| b.seq)
        .unwrap_or_else(|| panic!("beat {key} did not happen")) as usize
}

/// Participant `name`'s hold on the lock after step `seq`: (it believes it holds it, the
/// authority's record names it). One with neither is left out of the entry: (false, false).
pub fn holding(t: &Trace, seq: usize, name: &str) -> (bool, bool) {
    t.entries[seq]
        .holdings
        .iter()
        .find(|h| t.node_name(h.node) == name)
        .map_or((false, false), |h| (h.believes, h.granted))
}
