//! What the ShedLock table and a scheduled instance saw, and the sentences they read as.

use crate::presentation::durations::clock_text;
use crate::presentation::durations::seconds;

/// One thing the `shedlock` table saw; `who` is the instance whose statement it ran, and a
/// `:now` is the instance's own clock when `own_clock`, else the database's.
pub enum ShedlockDbSaw<'a> {
    Locked {
        was_us: u64,
        now_us: u64,
        who: &'a str,
        own_clock: bool,
        until_us: u64,
        at_most_ms: u64,
    },
    Skipped {
        until_us: u64,
        now_us: u64,
        who: &'a str,
        own_clock: bool,
    },
    /// The report of run `slot`; the job has run `runs` times for that schedule.
    Report {
        who: &'a str,
        slot: u32,
        runs: u32,
    },
    /// An unlock that leaves the row taken until `until_us` (lockAtLeastFor).
    UnlockHeld {
        who: &'a str,
        until_us: u64,
        at_least_ms: u64,
        now_us: u64,
    },
    Unlocked {
        who: &'a str,
        until_us: u64,
    },
}

/// One thing a scheduled instance saw.
pub enum ScheduledInstanceSaw<'a> {
    Runs {
        me: &'a str,
        slot: u32,
    },
    /// lockAtLeastFor above lockAtMostFor: the job does not run.
    Refused {
        me: &'a str,
        at_least_ms: u64,
        at_most_ms: u64,
    },
}

/// Whose clock a `:now` came from.
fn whose(who: &str, own_clock: bool) -> String {
    if own_clock {
        format!("{who}'s clock")
    } else {
        "the database's clock".to_string()
    }
}

impl From<ShedlockDbSaw<'_>> for String {
    fn from(saw: ShedlockDbSaw<'_>) -> String {
        use ShedlockDbSaw::*;
        match saw {
            Locked {
                was_us,
                now_us,
                who,
                own_clock,
                until_us,
                at_most_ms,
            } => format!(
                "lock_until was {}, not after :now = {} by {}: the UPDATE matches the row. {who} holds it until {} (lockAtMostFor {}).",
                clock_text(was_us),
                clock_text(now_us),
                whose(who, own_clock),
                clock_text(until_us),
                seconds(at_most_ms)
            ),
            Skipped {
                until_us,
                now_us,
                who,
                own_clock,
            } => format!(
                "lock_until {} is after :now = {} by {}: no row matches, so {who} skips this run.",
                clock_text(until_us),
                clock_text(now_us),
                whose(who, own_clock)
            ),
            Report { who, slot, runs } if runs > 1 => format!(
                "{who} writes the report of run {slot}: the job has now run {runs} times for one schedule."
            ),
            Report { who, slot, .. } => format!("{who} writes the report of run {slot}."),
            UnlockHeld {
                who,
                until_us,
                at_least_ms,
                now_us,
            } => format!(
                "{who} unlocks: lock_until becomes {} (locked_at + lockAtLeastFor {}), not {}: the row stays taken a while.",
                clock_text(until_us),
                seconds(at_least_ms),
                clock_text(now_us)
            ),
            Unlocked { who, until_us } => format!(
                "{who} unlocks: lock_until becomes {}, its :now. Anyone whose :now is later may take the row.",
                clock_text(until_us)
            ),
        }
    }
}

impl From<ScheduledInstanceSaw<'_>> for String {
    fn from(saw: ScheduledInstanceSaw<'_>) -> String {
        match saw {
            ScheduledInstanceSaw::Runs { me, slot } => {
                format!("{me} runs the job for schedule {slot}.")
            }
            ScheduledInstanceSaw::Refused { me, at_least_ms, at_most_ms } => format!(
                "{me}'s job fires, but ShedLock will not build its lock: lockAtLeastFor ({}) is longer than lockAtMostFor ({}). LockConfiguration throws IllegalArgumentException, so no row is locked and the job does not run, now or at any later firing.",
                seconds(at_least_ms),
                seconds(at_most_ms)
            ),
        }
    }
}
