//! Where stepping goes. A run has two levels: the narrated events (something a trainer would
//! say a sentence about: narration, a fault, a broken property, a beat) and everything else
//! (heartbeats, acks). Stepping, playing and the log follow the narrated events unless "all
//! events" is on; the beats are the few moments the story is about.

use coordlab_sim::trace::{Trace, TraceEntry};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Nav {
    /// Steps worth a sentence, in order (always including the first and the last).
    pub narrated: Vec<usize>,
    /// The steps where beats happened, in story order.
    pub beats: Vec<usize>,
    /// The steps where a property breaks.
    pub violations: Vec<usize>,
    pub last: usize,
}

fn narrated(e: &TraceEntry) -> bool {
    !e.notes.is_empty() || !e.violations.is_empty() || e.fault.is_some()
}

impl Nav {
    pub fn of(trace: &Trace) -> Nav {
        let last = trace.entries.len().saturating_sub(1);
        let beats: Vec<usize> = trace.reached_beats().map(|(s, _)| s as usize).collect();
        let mut steps: Vec<usize> = trace
            .entries
            .iter()
            .enumerate()
            .filter(|(i, e)| *i == 0 || *i == last || narrated(e) || beats.contains(i))
            .map(|(i, _)| i)
            .collect();
        steps.dedup();
        let violations = (0..trace.entries.len())
            .filter(|i| !trace.entries[*i].violations.is_empty())
            .collect();
        Nav {
            narrated: steps,
            beats,
            violations,
            last,
        }
    }

    /// Two runs stepped together: at each shared step one side moves (`steps[i]` is the entry
    /// each side shows); that step is narrated, or a beat, when the entry that moved is.
    #[cfg(feature = "compare")]
    pub fn merged(left: &Trace, right: &Trace, steps: &[(usize, usize)]) -> Nav {
        let (l, r) = (Nav::of(left), Nav::of(right));
        let last = steps.len().saturating_sub(1);
        let mut nav = Nav {
            narrated: vec![0],
            beats: Vec::new(),
            violations: Vec::new(),
            last,
        };
        for i in 1..steps.len() {
            let (before, now) = (steps[i - 1], steps[i]);
            let (side, entry) = if now.0 != before.0 {
                (&l, now.0)
            } else {
                (&r, now.1)
            };
            if side.beats.contains(&entry) {
                nav.beats.push(i);
            }
            if side.violations.contains(&entry) {
                nav.violations.push(i);
            }
            if i == last || side.narrated.binary_search(&entry).is_ok() || side.beats.contains(&entry) {
                nav.narrated.push(i);
            }
        }
        nav.narrated.dedup();
        nav
    }

    /// The next step from `cursor`: the next narrated one, or simply the next with `all`.
    pub fn next(&self, cursor: usize, all: bool) -> usize {
        if all {
            return (cursor + 1).min(self.last);
        }
        self.narrated
            .iter()
            .copied()
            .find(|s| *s > cursor)
            .unwrap_or(self.last)
    }

    pub fn prev(&self, cursor: usize, all: bool) -> usize {
        if all {
            return cursor.saturating_sub(1);
        }
        self.narrated
            .iter()
            .rev()
            .copied()
            .find(|s| *s < cursor)
            .unwrap_or(0)
    }

    /// The step of the next beat after `cursor` (the last step if none is left).
    pub fn next_beat(&self, cursor: usize) -> usize {
        self.beats
            .iter()
            .copied()
            .find(|s| *s > cursor)
            .unwrap_or(self.last)
    }

    /// The step of the beat before `cursor` (the first step if there is none).
    pub fn prev_beat(&self, cursor: usize) -> usize {
        self.beats
            .iter()
            .rev()
            .copied()
            .find(|s| *s < cursor)
            .unwrap_or(0)
    }

    /// The step of the next broken property after `cursor`, if any.
    pub fn next_violation(&self, cursor: usize) -> Option<usize> {
        self.violations.iter().copied().find(|s| *s > cursor)
    }

    /// The index (in story order) of the latest beat at or before `cursor`.
    #[cfg(any(feature = "player", feature = "embed", feature = "trace"))]
    pub fn beat_at_or_before(&self, cursor: usize) -> Option<usize> {
        self.beats.iter().rposition(|s| *s <= cursor)
    }

    pub fn is_beat(&self, step: usize) -> bool {
        self.beats.contains(&step)
    }
}

/// How far apart, in tenths of a rem, the centres of two beat ticks on a timeline must be for
/// neither to cover the other (the stylesheet draws a tick 1.7rem wide).
#[cfg(any(feature = "player", feature = "compare"))]
const TICK_PITCH_TENTHS_REM: u64 = 18;

/// The CSS `left` of each tick on a timeline, given the places of their steps in thousandths
/// of it: at its place, or pushed right just clear of the tick before it, so the ticks of beats
/// a few steps apart sit side by side rather than one over another (a tick half covered is a
/// target too small to hit). As CSS, `max(place, place before + pitch, …)`: the page knows the
/// timeline's width, the wasm does not.
#[cfg(any(feature = "player", feature = "compare"))]
pub fn tick_lefts(permille: &[u64]) -> Vec<String> {
    let pct = |p: u64| format!("{}.{}%", p / 10, p % 10);
    (0..permille.len())
        .map(|k| {
            let terms: Vec<String> = (0..k)
                .map(|j| {
                    let rem = (k - j) as u64 * TICK_PITCH_TENTHS_REM;
                    format!("{} + {}.{}rem", pct(permille[j]), rem / 10, rem % 10)
                })
                .chain(std::iter::once(pct(permille[k])))
                .collect();
            if terms.len() == 1 {
                format!("left: {}", terms[0])
            } else {
                format!("left: max({})", terms.join(", "))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(any(feature = "player", feature = "compare"))]
    fn ticks_close_together_are_pushed_apart_in_css() {
        assert_eq!(
            tick_lefts(&[14, 332, 335]),
            vec![
                "left: 1.4%".to_string(),
                "left: max(1.4% + 1.8rem, 33.2%)".to_string(),
                "left: max(1.4% + 3.6rem, 33.2% + 1.8rem, 33.5%)".to_string(),
            ]
        );
    }

    fn nav() -> Nav {
        Nav {
            narrated: vec![0, 3, 7, 9, 12],
            beats: vec![3, 9],
            violations: vec![7],
            last: 12,
        }
    }

    #[test]
    fn stepping_skips_quiet_events_unless_asked_for_all() {
        let n = nav();
        assert_eq!(n.next(0, false), 3);
        assert_eq!(n.next(3, false), 7);
        assert_eq!(
            n.next(4, false),
            7,
            "from a quiet step, on to the next narrated one"
        );
        assert_eq!(n.next(12, false), 12);
        assert_eq!(n.next(3, true), 4);
        assert_eq!(n.prev(7, false), 3);
        assert_eq!(n.prev(0, false), 0);
        assert_eq!(n.prev(7, true), 6);
    }

    #[test]
    fn beats_are_reached_one_key_press_each() {
        let n = nav();
        assert_eq!(n.next_beat(0), 3);
        assert_eq!(n.next_beat(3), 9);
        assert_eq!(n.next_beat(9), 12, "after the last beat, the end of the run");
        assert_eq!(n.next_violation(0), Some(7));
        assert_eq!(n.next_violation(7), None, "no broken property left: stay");
        assert_eq!(n.prev_beat(9), 3);
        assert_eq!(n.prev_beat(3), 0);
        assert_eq!(n.beat_at_or_before(8), Some(0));
        assert_eq!(n.beat_at_or_before(9), Some(1));
        assert_eq!(n.beat_at_or_before(2), None);
    }
}
