//! What a Redlock client saw as it asked every master, counted the answers against its
//! validity and worked under the lock, and the sentences it reads as.

use super::redis_job::sends_debit;
use crate::presentation::durations::tenths;
use std::fmt::Write;

/// The validity sum of one attempt: the TTL less the time spent asking and the drift allowance.
#[derive(Clone, Copy)]
pub struct Validity {
    pub ttl_ms: u64,
    pub elapsed_ms: u64,
    pub drift_ms: u64,
    pub validity_ms: i64,
}

/// What the client made of every master's answer.
#[derive(Clone, Copy)]
pub enum Verdict {
    /// A majority with validity left: the lock is its own.
    Won(Validity),
    /// A majority, but no validity left.
    TooLate(Validity),
    /// Fewer OKs than the `quorum`.
    Short { quorum: usize },
}

/// One thing a Redlock client saw; `me` is the client's own name.
pub enum RedlockSaw<'a> {
    Asks {
        me: &'a str,
        masters: usize,
        key: &'a str,
        value: &'a str,
        attempt: u32,
        quorum: usize,
        timeout_ms: u64,
    },
    /// Every master answered or timed out; `granted` names those that said OK.
    Counted {
        me: &'a str,
        granted: &'a [&'a str],
        masters: usize,
        verdict: Verdict,
    },
    ValidityOver {
        me: &'a str,
        step: u32,
    },
    ValidityLeft {
        me: &'a str,
        step: u32,
        left_ms: u64,
    },
    SendsDebit {
        me: &'a str,
        step: u32,
    },
    Unlocks {
        me: &'a str,
    },
}

impl From<RedlockSaw<'_>> for String {
    fn from(saw: RedlockSaw<'_>) -> String {
        use RedlockSaw::*;
        match saw {
            Asks {
                me,
                masters,
                key,
                value,
                attempt,
                quorum,
                timeout_ms,
            } => format!(
                "{me} notes its clock and asks all {masters} masters for {key} with value {value} (attempt {attempt}). It needs {quorum} OKs, and each master gets {timeout_ms} ms to answer."
            ),
            Counted {
                me,
                granted,
                masters,
                verdict,
            } => {
                let mut s = format!("{me}: ");
                if granted.is_empty() {
                    let _ = write!(s, "none of the {masters} masters said OK");
                } else {
                    let _ = write!(s, "{} of {masters} OK ({})", granted.len(), granted.join(", "));
                }
                let sum = |s: &mut String, v: Validity| {
                    let _ = write!(
                        s,
                        "validity = {} ms TTL − {} ms spent asking − {} ms drift allowance = {} ms",
                        v.ttl_ms, v.elapsed_ms, v.drift_ms, v.validity_ms
                    );
                };
                match verdict {
                    Verdict::Won(v) => {
                        s.push_str(", a majority, and ");
                        sum(&mut s, v);
                        let _ = write!(
                            s,
                            ". By its own reckoning the lock is its own for the next {}.",
                            tenths(v.validity_ms as u64)
                        );
                    }
                    Verdict::TooLate(v) => {
                        s.push_str(" — a majority, but ");
                        sum(&mut s, v);
                        let _ = write!(
                            s,
                            ". Its keys may already have expired, so it rejects its own lock and unlocks all {masters} masters."
                        );
                    }
                    Verdict::Short { quorum } => {
                        let _ = write!(
                            s,
                            ", short of a majority of {quorum}. It unlocks all {masters} masters, including any that said yes, and will try again."
                        );
                    }
                }
                s
            }
            ValidityOver { me, step } => format!(
                "Before step {step}, {me} checks its clock: the lock's validity is over, so it stops and unlocks."
            ),
            ValidityLeft { me, step, left_ms } => format!(
                "{me} checks its clock before step {step}: {} of validity left, so it goes ahead.",
                tenths(left_ms)
            ),
            SendsDebit { me, step } => sends_debit(
                me,
                step,
                format_args!(". Redlock gave it no token, so the write carries nothing the ledger could check."),
            ),
            Unlocks { me } => format!("{me} is done with the job and unlocks every master."),
        }
    }
}
