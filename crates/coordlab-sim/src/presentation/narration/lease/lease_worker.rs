//! What a lease worker saw as it got, kept and gave up its lease and did the job's steps, and
//! the sentences it reads as.

use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::presentation::durations::seconds;
use crate::protocols::lease::lease_msg::RejectReason;

/// How a worker claims the job in the job table.
pub enum ClaimBy {
    UniqueInsert,
    ConditionalClaim,
}

/// What a step's write carried, as the worker sent it.
pub enum StepWrite<'a> {
    PayWithKey {
        amount: i64,
        key: &'a str,
    },
    WithRunKey {
        key: &'a str,
    },
    PayWithoutKey {
        amount: i64,
    },
    Fenced {
        token: FencingToken,
    },
    NoToken,
    /// Carries a token that only step 1's write asked the ledger to check.
    FencedFirstOnly {
        token: FencingToken,
    },
    Unchecked {
        token: FencingToken,
    },
}

/// What a step would leave of the lease, by the worker's own clock, against its margin.
#[derive(Clone, Copy)]
pub enum StepSpare {
    /// It would end this long before the lease, more than the margin: the step starts.
    Enough(u64),
    /// It would not end before the lease does.
    NotInTime,
    /// It would end only this long before the lease, inside the margin.
    InsideMargin(u64),
}

/// One thing a lease worker saw; `me` is the worker's own name.
pub enum LeaseWorkerSaw<'a> {
    UpJobDone {
        me: &'a str,
    },
    UpJobScheduled {
        me: &'a str,
    },
    FiresUnguarded {
        me: &'a str,
    },
    ClaimsJob {
        me: &'a str,
        by: ClaimBy,
    },
    RoutedOnlyHere {
        job_key: &'a str,
        me: &'a str,
    },
    NotTheConsumer {
        me: &'a str,
        job_key: &'a str,
    },
    JobAlreadyComplete {
        steps_done: u32,
        me: &'a str,
    },
    TakesOverAt {
        steps_done: u32,
        me: &'a str,
        step: u32,
    },
    AsksForLease {
        me: &'a str,
        lease: &'a str,
        attempt: u32,
    },
    BacksOff {
        me: &'a str,
        wait_ms: u64,
        retry_ms: u64,
        jittered: bool,
    },
    RunKeyTaken {
        key: &'a str,
        me: &'a str,
    },
    /// A refused write whose newer token is the worker's own renewal's.
    RefusedByOwnRenewal {
        me: &'a str,
        why: Option<&'a RejectReason>,
        own: FencingToken,
        sent: FencingToken,
    },
    RefusedAborts {
        me: &'a str,
        why: Option<&'a RejectReason>,
    },
    RefusedReacquires {
        me: &'a str,
        why: Option<&'a RejectReason>,
        step: u32,
    },
    RefusedSkipsStep {
        me: &'a str,
        why: Option<&'a RejectReason>,
        step: u32,
    },
    FinishedAllSteps {
        me: &'a str,
        steps: u32,
    },
    AsksToExtend {
        me: &'a str,
        lease: &'a str,
    },
    RenewalChangedTokenStamps {
        me: &'a str,
        token: FencingToken,
        was: FencingToken,
    },
    RenewalChangedToken {
        me: &'a str,
        token: FencingToken,
        was: FencingToken,
    },
    Renewed {
        me: &'a str,
        token: FencingToken,
        ttl_ms: u64,
    },
    HoldsLease {
        me: &'a str,
        token: FencingToken,
        ttl_ms: u64,
        heartbeat_ms: u64,
    },
    ResumesOwnJob {
        me: &'a str,
        token: FencingToken,
        step: u32,
    },
    StampsBeforeProgress {
        me: &'a str,
        token: FencingToken,
    },
    StampHolds {
        mine: FencingToken,
        me: &'a str,
    },
    StampMissed {
        last_token: FencingToken,
        mine: FencingToken,
        me: &'a str,
    },
    StampOvertaken {
        last_token: FencingToken,
        me: &'a str,
        mine: FencingToken,
    },
    RenewalEmptyHiccup {
        me: &'a str,
        step: u32,
    },
    RenewalEmpty {
        me: &'a str,
        holder: NodeId,
    },
    AnotherCopyRuns {
        me: &'a str,
    },
    ClaimWon {
        me: &'a str,
    },
    ClaimLost {
        me: &'a str,
    },
    LetGo {
        me: &'a str,
        lease: &'a str,
    },
    ReleaseRemovedNothing {
        me: &'a str,
        lease: &'a str,
    },
    FinallyReleases {
        me: &'a str,
    },
    OwnClockRanOut {
        me: &'a str,
        step: u32,
    },
    OwnClockLeaves {
        me: &'a str,
        left_us: u64,
        step: u32,
    },
    StartsStep {
        me: &'a str,
        step: u32,
    },
    /// The margin rule, with the numbers: `left_us` of the lease by its own clock, a step of
    /// `step_ms`, a safety margin of `margin_ms`, and what would be left over.
    MarginRule {
        me: &'a str,
        left_us: u64,
        step: u32,
        step_ms: u64,
        margin_ms: u64,
        spare: StepSpare,
    },
    AppCheckSaysStop {
        me: &'a str,
        last_token: FencingToken,
        mine: FencingToken,
    },
    AppCheckPasses {
        me: &'a str,
        last_token: FencingToken,
        mine: FencingToken,
    },
    StepWritten {
        me: &'a str,
        step: u32,
        write: StepWrite<'a>,
    },
    RailSaysReplay {
        step: u32,
        me: &'a str,
    },
}

/// A refusal's reason, as its parenthesis shows it.
fn why_text(why: Option<&RejectReason>) -> String {
    why.map(|r| r.text()).unwrap_or_default()
}

impl From<StepWrite<'_>> for String {
    fn from(write: StepWrite<'_>) -> String {
        match write {
            StepWrite::PayWithKey { amount, key } => {
                format!("tells the rail to pay ₹{amount}, with idempotency key {key}")
            }
            StepWrite::WithRunKey { key } => format!(
                "sends one transaction: the insert of the run key {key} into job_run and the debit, to commit together or not at all"
            ),
            StepWrite::PayWithoutKey { amount } => {
                format!("tells the rail to pay ₹{amount}; the instruction carries no key and no token")
            }
            StepWrite::Fenced { token } => {
                format!("sends the debit; token {token} is part of the write's WHERE clause")
            }
            StepWrite::NoToken => "sends the debit, which carries no token".to_string(),
            StepWrite::FencedFirstOnly { token } => format!(
                "sends the debit carrying token {token}. Only step 1's write asked the ledger to check the token; this one does not"
            ),
            StepWrite::Unchecked { token } => format!(
                "sends the debit carrying token {token}, but the write does not ask the ledger to check it"
            ),
        }
    }
}

impl From<LeaseWorkerSaw<'_>> for String {
    fn from(saw: LeaseWorkerSaw<'_>) -> String {
        use LeaseWorkerSaw::*;
        match saw {
            UpJobDone { me } => format!("{me} is up again; its job is already done."),
            UpJobScheduled { me } => {
                format!("{me} is up; its copy of the job is scheduled to fire shortly.")
            }
            FiresUnguarded { me } => format!(
                "{me}'s job fires. Nothing checks whether another copy is already doing it."
            ),
            ClaimsJob { me, by } => {
                let how = match by {
                    ClaimBy::UniqueInsert => {
                        "by inserting its key; the primary key lets only one insert win"
                    }
                    ClaimBy::ConditionalClaim => "with a conditional update: pending → running",
                };
                format!("{me} claims the job {how}.")
            }
            RoutedOnlyHere { job_key, me } => format!(
                "Account work for {job_key} is routed only to {me}: no one else will ever see it."
            ),
            NotTheConsumer { me, job_key } => {
                format!("{me}'s job fires, but {me} does not consume the partition {job_key} belongs to: it has no work for it and stops.")
            }
            JobAlreadyComplete { steps_done, me } => format!(
                "The job is already complete ({steps_done} steps recorded): {me} has nothing to do."
            ),
            TakesOverAt {
                steps_done,
                me,
                step,
            } => format!(
                "{steps_done} step(s) are already recorded: {me} takes over the job at step {step}."
            ),
            AsksForLease {
                me,
                lease,
                attempt: 1,
            } => format!(
                "{me}'s job fires. It asks the lease store for {lease} before doing anything."
            ),
            AsksForLease { me, lease, attempt } => {
                format!("{me} asks for {lease} again (attempt {attempt}).")
            }
            BacksOff {
                me,
                wait_ms,
                jittered: false,
                ..
            } => format!("{me} backs off and will ask again in {}.", seconds(wait_ms)),
            BacksOff {
                me,
                wait_ms,
                retry_ms,
                jittered: true,
            } => format!(
                "{me} backs off and will ask again in {}: {} plus {} of random jitter.",
                seconds(wait_ms),
                seconds(retry_ms),
                seconds(wait_ms - retry_ms)
            ),
            RunKeyTaken { key, me } => format!(
                "The run key {key} is already in job_run: this run happened. Nothing of {me}'s transaction was kept, and it lets go without trying again."
            ),
            RefusedByOwnRenewal { me, why, own, sent } => format!(
                "{me}'s write was refused ({}). The newer token is {me}'s own: its renewal came back with {own} while this step still carried {sent}. It has fenced itself out, and since a refusal looks the same as a real takeover, it aborts.",
                why_text(why)
            ),
            RefusedAborts { me, why } => format!(
                "{me}'s write was refused ({}). {me} reads that as proof another worker owns the lease now, and aborts — no retry, no compensation.",
                why_text(why)
            ),
            RefusedReacquires { me, why, step } => format!(
                "{me}'s write was refused ({}) — and it treats that as a transient error: it will get the lease back and carry on from step {step}.",
                why_text(why)
            ),
            RefusedSkipsStep { me, why, step } => format!(
                "{me}'s write was refused ({}). Its job loop logs step {step} as failed and goes on to the next step, as if the refusal were about that one write rather than about who owns the job.",
                why_text(why)
            ),
            FinishedAllSteps { me, steps } => {
                format!("{me} has finished all {steps} step(s) of the job.")
            }
            AsksToExtend { me, lease } => {
                format!("{me} asks the store to extend {lease}: same statement, same owner.")
            }
            RenewalChangedTokenStamps { me, token, was } => format!(
                "{me}'s renewal came back with token {token} instead of {was}: the lease lapsed and was granted again, so another worker may have held it meanwhile. {me} treats this as a takeover: it drops the step under way, stamps the row with {token} and reads the progress again."
            ),
            RenewalChangedToken { me, token, was } => {
                format!("{me}'s renewal came back with token {token} instead of {was}.")
            }
            Renewed { me, token, ttl_ms } => format!(
                "{me}'s renewal went through: token {token} again, and by its own clock another {}.",
                seconds(ttl_ms)
            ),
            HoldsLease {
                me,
                token,
                ttl_ms,
                heartbeat_ms,
            } => format!(
                "{me} holds the lease with token {token}. By its own clock it has {} — {}.",
                seconds(ttl_ms),
                if heartbeat_ms == 0 {
                    "it will not renew".to_string()
                } else {
                    format!("it will renew every {}", seconds(heartbeat_ms))
                }
            ),
            ResumesOwnJob { me, token, step } => format!(
                "{me} has the lease again (token {token}) and resumes its own job at step {step} — without asking what happened meanwhile."
            ),
            StampsBeforeProgress { me, token } => format!(
                "Before asking how far the job got, {me} stamps the ledger row with token {token}. Once the row carries {token}, no older holder's write can land after the progress read."
            ),
            StampHolds { mine, me } => format!(
                "The row carries token {mine}: every older holder is fenced out, so the progress {me} reads now cannot change behind its back."
            ),
            StampMissed {
                last_token,
                mine,
                me,
            } => format!(
                "The row shows token {last_token}, not {mine}: the stamp did not take. {me} stamps again."
            ),
            StampOvertaken {
                last_token,
                me,
                mine,
            } => format!(
                "The row already carries token {last_token}, newer than {me}'s {mine}: a newer holder owns the job. {me} stops."
            ),
            RenewalEmptyHiccup { me, step } => format!(
                "{me}'s renewal came back empty — and it treats that as a hiccup: it will get the lease back and carry on from step {step}."
            ),
            RenewalEmpty { me, holder } => format!(
                "{me}'s renewal came back empty: the lease belongs to someone else (node {}). It stops immediately.",
                holder.0
            ),
            AnotherCopyRuns { me } => format!(
                "{me} backs off: another copy holds the lease, so it is running the job right now."
            ),
            ClaimWon { me } => format!("{me} got one row: the job is {me}'s."),
            ClaimLost { me } => format!(
                "{me} got zero rows: someone else already owns this job, so it does nothing."
            ),
            LetGo { me, lease } => format!("{me} has let go of {lease}."),
            ReleaseRemovedNothing { me, lease } => {
                format!("{me}'s release removed nothing: {lease} is no longer its lease.")
            }
            FinallyReleases { me } => {
                format!("{me}'s finally block releases the lease on the way out.")
            }
            OwnClockRanOut { me, step } => {
                format!("By {me}'s own clock its lease has run out, so it stops before step {step}.")
            }
            OwnClockLeaves { me, left_us, step } => format!(
                "By {me}'s own clock {} of its lease remain, so it starts step {step}.",
                seconds(left_us / MS_US)
            ),
            StartsStep { me, step } => format!("{me} starts step {step}."),
            MarginRule {
                me,
                left_us,
                step,
                step_ms,
                margin_ms,
                spare,
            } => {
                let (left, took, margin) = (seconds(left_us / MS_US), seconds(step_ms), seconds(margin_ms));
                let stops = format!("so {me} stops and leaves the rest to the next holder");
                let would = match spare {
                    StepSpare::Enough(spare_us) => format!(
                        "end {} before the lease does, more than its {margin} safety margin, so it starts",
                        seconds(spare_us / MS_US)
                    ),
                    StepSpare::NotInTime => format!("not end in time, {stops}"),
                    StepSpare::InsideMargin(spare_us) => format!(
                        "end only {} before the lease does, inside its {margin} safety margin, {stops}",
                        seconds(spare_us / MS_US)
                    ),
                };
                format!("By {me}'s own clock {left} of its lease remain: step {step} ({took}) would {would}.")
            }
            AppCheckSaysStop {
                me,
                last_token,
                mine,
            } => format!(
                "{me} reads last_token {last_token}, newer than its {mine}: its application check says stop."
            ),
            AppCheckPasses {
                me,
                last_token,
                mine,
            } => format!(
                "{me} reads last_token {last_token}; its own token is {mine}, so the check in application code passes. The write comes later, as a separate statement."
            ),
            StepWritten { me, step, write } => format!(
                "{me} has done step {step}'s work and {}.",
                String::from(write)
            ),
            RailSaysReplay { step, me } => format!(
                "The rail answers that step {step} was a replay; for {me} the step is done either way."
            ),
        }
    }
}
