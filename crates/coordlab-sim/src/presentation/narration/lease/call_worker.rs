//! What a worker whose job is one slow call saw, and the sentences it reads as.

use crate::kernel::ids::FencingToken;
use crate::kernel::time::MS_US;
use crate::presentation::durations::seconds;

/// One thing a call worker saw; `me` is the worker's own name.
pub enum CallWorkerSaw<'a> {
    Holds {
        me: &'a str,
        key: &'a str,
        token: FencingToken,
        ttl_ms: u64,
    },
    JobRowMine {
        me: &'a str,
    },
    JobRowTaken {
        me: &'a str,
    },
    BacksOff {
        me: &'a str,
        wait_ms: u64,
    },
    AlreadyRecorded {
        me: &'a str,
    },
    /// It calls the payment API, with the idempotency key it sends if any.
    Calls {
        me: &'a str,
        amount: i64,
        key: Option<&'a str>,
        holding: bool,
    },
    /// The API's answer, `applied` now or earlier; `lapsed_us` is how long ago its lease ran
    /// out by its own clock, while it still believes it holds it.
    Answered {
        applied: bool,
        me: &'a str,
        token: FencingToken,
        lapsed_us: Option<u64>,
    },
    RecordRefused {
        me: &'a str,
    },
}

impl From<CallWorkerSaw<'_>> for String {
    fn from(saw: CallWorkerSaw<'_>) -> String {
        use CallWorkerSaw::*;
        match saw {
            Holds {
                me,
                key,
                token,
                ttl_ms,
            } => format!(
                "{me} holds {key} with token {token} for {}. It does not renew.",
                seconds(ttl_ms)
            ),
            JobRowMine { me } => {
                format!("The job row is {me}'s. {me} lets go of the lease before the slow call.")
            }
            JobRowTaken { me } => format!(
                "The job row is not pending: someone has the job. {me} lets go of the lease and does nothing."
            ),
            BacksOff { me, wait_ms } => {
                format!("{me} backs off; it asks again in {}.", seconds(wait_ms))
            }
            AlreadyRecorded { me } => {
                format!("The payout is already recorded: {me} has nothing to do.")
            }
            Calls {
                me,
                amount,
                key,
                holding,
            } => {
                let with = key.map_or(String::new(), |k| format!(" with key {k}"));
                let holding = if holding {
                    "still holding the lease"
                } else {
                    "holding no lease"
                };
                format!("{me} asks the payment API to pay out ₹{amount}{with}, and waits, {holding}.")
            }
            Answered {
                applied,
                me,
                token,
                lapsed_us,
            } => {
                let answer = if applied { "paid" } else { "paid earlier" };
                match lapsed_us {
                    Some(lapsed_us) => format!(
                        "The API answers \"{answer}\". {me} records the payout with token {token}, sure it holds the lease; by its own clock that ran out {} ago, but it does not look.",
                        seconds(lapsed_us / MS_US)
                    ),
                    None => format!("The API answers \"{answer}\". {me} records the payout."),
                }
            }
            RecordRefused { me } => {
                format!("{me} stops: a refused record means a newer holder has the job.")
            }
        }
    }
}
