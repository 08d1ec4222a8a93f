//! Named properties, checked after every event.
//!
//! `Always` properties must hold after every step; the first step where one fails is
//! recorded. `Eventually` properties must have held at some step by the end of the run.
//! A scenario that demonstrates an unsafe design declares the violation as its expected
//! outcome — a violation is a finding, never a panic.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PropertyKind {
    Always,
    Eventually,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Holds,
    Violated,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertySpec {
    pub name: &'static str,
    pub kind: PropertyKind,
    pub description: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyReport {
    pub name: String,
    pub kind: PropertyKind,
    pub description: String,
    pub verdict: Verdict,
    /// The step where an `Always` property first failed, or the last step of a run in which
    /// an `Eventually` property never held.
    pub first_violation_seq: Option<u32>,
    /// For `Eventually`: the first step where it held.
    pub satisfied_seq: Option<u32>,
}

/// Tracks verdicts across a run.
pub struct PropertyTracker {
    specs: Vec<PropertySpec>,
    first_violation: Vec<Option<u32>>,
    satisfied: Vec<Option<u32>>,
}

impl PropertyTracker {
    pub fn new(specs: Vec<PropertySpec>) -> PropertyTracker {
        let n = specs.len();
        PropertyTracker {
            specs,
            first_violation: vec![None; n],
            satisfied: vec![None; n],
        }
    }

    pub fn len(&self) -> usize {
        self.specs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Records the results of one step (`results[i]` for `specs[i]`) and returns the names of
    /// `Always` properties that broke at this step for the first time.
    pub fn observe(&mut self, seq: u32, results: &[bool]) -> Vec<String> {
        assert_eq!(
            results.len(),
            self.specs.len(),
            "a world must evaluate every property it declares"
        );
        let mut newly = Vec::new();
        for (i, spec) in self.specs.iter().enumerate() {
            match spec.kind {
                PropertyKind::Always => {
                    if !results[i] && self.first_violation[i].is_none() {
                        self.first_violation[i] = Some(seq);
                        newly.push(spec.name.to_string());
                    }
                }
                PropertyKind::Eventually => {
                    if results[i] && self.satisfied[i].is_none() {
                        self.satisfied[i] = Some(seq);
                    }
                }
            }
        }
        newly
    }

    /// Final verdicts; `last_seq` is the last step of the run (None for an empty run).
    pub fn finish(&self, last_seq: Option<u32>) -> Vec<PropertyReport> {
        self.specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let first_violation_seq = match spec.kind {
                    PropertyKind::Always => self.first_violation[i],
                    PropertyKind::Eventually if self.satisfied[i].is_none() => last_seq.or(Some(0)),
                    PropertyKind::Eventually => None,
                };
                PropertyReport {
                    name: spec.name.to_string(),
                    kind: spec.kind,
                    description: spec.description.to_string(),
                    verdict: if first_violation_seq.is_some() {
                        Verdict::Violated
                    } else {
                        Verdict::Holds
                    },
                    first_violation_seq,
                    satisfied_seq: self.satisfied[i],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> Vec<PropertySpec> {
        vec![
            PropertySpec {
                name: "safe",
                kind: PropertyKind::Always,
                description: "",
            },
            PropertySpec {
                name: "done",
                kind: PropertyKind::Eventually,
                description: "",
            },
        ]
    }

    #[test]
    fn always_records_only_the_first_violation() {
        let mut t = PropertyTracker::new(specs());
        assert!(t.observe(0, &[true, false]).is_empty());
        assert_eq!(t.observe(1, &[false, false]), vec!["safe".to_string()]);
        assert!(t.observe(2, &[false, true]).is_empty());
        let r = t.finish(Some(2));
        assert_eq!(r[0].verdict, Verdict::Violated);
        assert_eq!(r[0].first_violation_seq, Some(1));
        assert_eq!(r[1].verdict, Verdict::Holds);
        assert_eq!(r[1].satisfied_seq, Some(2));
    }

    #[test]
    fn eventually_never_reached_is_violated_at_the_end() {
        let mut t = PropertyTracker::new(specs());
        t.observe(0, &[true, false]);
        t.observe(1, &[true, false]);
        let r = t.finish(Some(1));
        assert_eq!(r[0].verdict, Verdict::Holds);
        assert_eq!(r[1].verdict, Verdict::Violated);
        assert_eq!(r[1].first_violation_seq, Some(1));
    }
}
