//! Bookkeeping that lets [`RaftWorld`](super::raft_world::RaftWorld) check its log
//! properties after every event without re-reading whole logs each time.
//!
//! A Raft server's log changes in two ways only: entries are appended, or a suffix is cut off
//! (a follower dropping entries that conflict with its leader's). The server counts its cuts
//! (`log_cuts`, persisted with the log). While the count stays the same the log has only grown,
//! so an entry checked once is still there unchanged and needs no second look; after a cut,
//! the check starts over from the first entry. The results are exactly those of checking every
//! entry every time, for a fraction of the work on long runs.

use crate::protocols::raft::Entry;

/// How many leading entries of a log (or of a pair of logs) have been checked, and the cut
/// count(s) they were checked under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked<Cuts = u64> {
    cuts: Cuts,
    len: usize,
}

impl<Cuts: Copy + PartialEq> Checked<Cuts> {
    /// How many leading entries need no check, for log(s) now cut back `cuts` times: what was
    /// checked before, or none if a log was cut since.
    pub fn resume(&mut self, cuts: Cuts) -> usize {
        if self.cuts != cuts {
            self.cuts = cuts;
            self.len = 0;
        }
        self.len
    }

    /// Records that the first `len` entries have now been checked.
    pub fn reach(&mut self, len: usize) {
        self.len = self.len.max(len);
    }
}

/// One leader in one term, as the world last saw it.
#[derive(Clone, Debug)]
pub struct LeaderSeen {
    /// Its log when last seen.
    log: Vec<Entry>,
    log_cuts: u64,
    /// How many of the run's committed entries (indexes 1..=n) it was found to hold or not to
    /// need (committed in its own term or later); reset when its log is cut back.
    pub committed_checked: usize,
}

impl LeaderSeen {
    pub fn new(log: &[Entry], log_cuts: u64) -> LeaderSeen {
        LeaderSeen {
            log: log.to_vec(),
            log_cuts,
            committed_checked: 0,
        }
    }

    /// Updates to the leader's log now; false if it lost or changed an entry it had (the
    /// leader-append-only property).
    pub fn follow(&mut self, log: &[Entry], log_cuts: u64) -> bool {
        if log_cuts == self.log_cuts && log.len() >= self.log.len() {
            // Not cut back since: it only appended.
            self.log.extend_from_slice(&log[self.log.len()..]);
            return true;
        }
        let kept = self.log.len() <= log.len() && self.log[..] == log[..self.log.len()];
        self.log = log.to_vec();
        self.log_cuts = log_cuts;
        self.committed_checked = 0;
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::raft::{Command, Term};

    fn entry(term: u64, value: u32) -> Entry {
        Entry {
            term: Term(term),
            command: Command::Set {
                key: "x".into(),
                value,
            },
        }
    }

    #[test]
    fn a_cut_makes_the_check_start_over() {
        let mut checked = Checked::default();
        assert_eq!(checked.resume(0), 0);
        checked.reach(5);
        assert_eq!(
            checked.resume(0),
            5,
            "nothing cut: the five checked entries stand"
        );
        checked.reach(3);
        assert_eq!(
            checked.resume(0),
            5,
            "checking fewer later does not forget the rest"
        );
        assert_eq!(checked.resume(1), 0, "the log was cut back: check from the start");
    }

    #[test]
    fn a_leader_that_only_appends_keeps_its_entries() {
        let mut seen = LeaderSeen::new(&[entry(1, 1)], 0);
        assert!(seen.follow(&[entry(1, 1), entry(2, 2)], 0));
        assert!(seen.follow(&[entry(1, 1), entry(2, 2)], 0));
    }

    #[test]
    fn a_leader_whose_log_was_cut_and_rewritten_is_caught() {
        let mut seen = LeaderSeen::new(&[entry(1, 1), entry(2, 2)], 0);
        seen.committed_checked = 2;
        assert!(!seen.follow(&[entry(1, 1), entry(3, 9)], 1), "entry 2 changed");
        assert_eq!(seen.committed_checked, 0, "its log changed: check it again");
        assert!(!seen.follow(&[entry(1, 1)], 2), "entry 2 is gone");
    }

    #[test]
    fn a_cut_that_put_back_the_same_entries_breaks_nothing() {
        let mut seen = LeaderSeen::new(&[entry(1, 1), entry(2, 2)], 0);
        assert!(seen.follow(&[entry(1, 1), entry(2, 2), entry(2, 3)], 1));
    }
}
