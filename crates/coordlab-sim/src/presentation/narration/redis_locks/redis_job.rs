//! What any lock client saw of its job's course that does not depend on how it took the lock
//! (coming back up, running out of attempts, taking up the job where the ledger says), and the
//! sentences it reads as; with what the two Redis clients say alike.

use std::fmt::Arguments;

/// One thing a lock client saw of its job; `me` is the client's own name.
pub enum JobSaw<'a> {
    UpJobDone {
        me: &'a str,
    },
    GivesUp {
        me: &'a str,
        attempts: u32,
    },
    /// The ledger has every step: only `release` (e.g. "unlocks") is left to do.
    AlreadyDone {
        me: &'a str,
        steps_done: u32,
        release: &'a str,
    },
    ResumesAt {
        me: &'a str,
        steps_done: u32,
        step: u32,
    },
}

impl From<JobSaw<'_>> for String {
    fn from(saw: JobSaw<'_>) -> String {
        use JobSaw::*;
        match saw {
            UpJobDone { me } => format!("{me} is up again; its job is already done."),
            GivesUp { me, attempts } => format!("{me} gives up after {attempts} attempts."),
            AlreadyDone {
                me,
                steps_done,
                release,
            } => format!(
                "The ledger has all {steps_done} steps recorded: the job is already done, so {me} only {release}."
            ),
            ResumesAt {
                me,
                steps_done,
                step,
            } => format!("{steps_done} step(s) are recorded already: {me} takes the job up at step {step}."),
        }
    }
}

/// A Redis client has done a step's work and sends the debit; `rest` says what the write
/// carries.
pub(super) fn sends_debit(me: &str, step: u32, rest: Arguments<'_>) -> String {
    format!("{me} has done step {step}'s work and sends the debit{rest}")
}
