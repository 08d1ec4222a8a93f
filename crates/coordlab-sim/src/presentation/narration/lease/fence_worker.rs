//! What a worker with a lease from a placed lease table saw, and the sentences it reads as.

use crate::kernel::ids::FencingToken;
use crate::presentation::durations::seconds;
use crate::protocols::lease::fence_worker::FenceFrom;

/// One thing a fence worker saw; `me` is the worker's own name.
pub enum FenceWorkerSaw<'a> {
    /// The lease is granted with `token`; it carries `fence`, taken `from` where its plan says.
    Holds {
        me: &'a str,
        ttl_ms: u64,
        token: FencingToken,
        from: FenceFrom,
        fence: FencingToken,
    },
    ReadsReplicaFirst {
        me: &'a str,
    },
    ReplicaLooksFree {
        me: &'a str,
    },
    RereadOwnToken {
        me: &'a str,
        step: u32,
        token: FencingToken,
    },
    RereadNewerToken {
        me: &'a str,
        step: u32,
        token: FencingToken,
        was: FencingToken,
    },
    NoAnswerGivesUp {
        wait_ms: u64,
        attempt: u32,
        me: &'a str,
    },
    NoAnswerRetries {
        wait_ms: u64,
        me: &'a str,
        retry_ms: u64,
    },
    Reconnects {
        me: &'a str,
        lost: &'a str,
        to: &'a str,
    },
    AlreadyDone {
        me: &'a str,
    },
    WroteLastStep {
        me: &'a str,
    },
    WriteMatchedNoRow {
        me: &'a str,
    },
}

impl From<FenceWorkerSaw<'_>> for String {
    fn from(saw: FenceWorkerSaw<'_>) -> String {
        use FenceWorkerSaw::*;
        match saw {
            Holds {
                me,
                ttl_ms,
                token,
                from,
                fence,
            } => {
                let how = match from {
                    FenceFrom::Granted => format!("It will carry token {token} in every write."),
                    FenceFrom::Reread => format!(
                        "It keeps no copy of token {token}: before each write it will read the lease row again and use whatever token is there."
                    ),
                    FenceFrom::WallClock => format!(
                        "As its fence it takes the time of the grant by its own clock: {fence} ms. The table's token {token} goes unused."
                    ),
                    FenceFrom::RandomId(id) => format!(
                        "As its fence it uses the random id it drew for this attempt, {id:#010x} ({id}). The table's token {token} goes unused."
                    ),
                    FenceFrom::ProcessCounter => format!(
                        "As its fence it uses its own counter of leases taken: this is its lease number {fence} since the process started. The table's token {token} goes unused."
                    ),
                };
                format!(
                    "{me} holds the lease for {} with token {token}. {how} First it asks the ledger how far the job got.",
                    seconds(ttl_ms)
                )
            }
            ReadsReplicaFirst { me } => format!(
                "{me}'s job fires. Its connection pool sends every SELECT to the read replica, so it first reads the lease row there, and claims it on the primary only if it looks free."
            ),
            ReplicaLooksFree { me } => format!(
                "The replica's row looks expired, so {me} concludes the lease is free and claims it on the primary."
            ),
            RereadOwnToken { me, step, token } => format!(
                "{me} re-reads the lease row before writing step {step}: token {token}, the one it was granted."
            ),
            RereadNewerToken {
                me,
                step,
                token,
                was,
            } => format!(
                "{me} re-reads the lease row before writing step {step} and finds token {token}, not its own {was}: it takes the new holder's number as its own, and so fences itself back in."
            ),
            NoAnswerGivesUp {
                wait_ms,
                attempt,
                me,
            } => format!(
                "No answer from the lease store in {}, for the {attempt}th time. {me} gives up: without the lease it must not run the job.",
                seconds(wait_ms)
            ),
            NoAnswerRetries {
                wait_ms,
                me,
                retry_ms,
            } => format!(
                "No answer from the lease store in {}. Without a lease {me} does not start: it tries again in {}.",
                seconds(wait_ms),
                seconds(retry_ms)
            ),
            Reconnects { me, lost, to } => {
                format!("{me}'s client loses its connection to {lost} and reconnects to {to}.")
            }
            AlreadyDone { me } => format!("The job is already done: {me} has nothing to do."),
            WroteLastStep { me } => format!("{me} has written the last step: its job is done."),
            WriteMatchedNoRow { me } => format!(
                "{me}'s write matched no row: a newer holder has written. {me} stops at once and does not retry."
            ),
        }
    }
}
