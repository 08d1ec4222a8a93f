//! `zombie-worker` (curriculum §4–5): worker A takes the lease on account 42 with token 33
//! and a 30 s TTL, writes step 1 of its four-step job, and 5 s in freezes in a 36 s
//! stop-the-world pause. At 30 s the lease expires by the store's clock; worker B takes over
//! with token 34, reads that one step is done and carries on from step 2. A wakes at 41 s
//! still believing it holds the lease and writes its step 2 with 33. Whether that write
//! lands depends only on where the token is checked: with the check in the write's predicate
//! it is refused; with the predicate on step 1 only, it lands.
//!
//! The predicate alone still leaves a gap: if A wakes after B has read the progress but
//! before B's first write has brought 34 to the ledger, A's write passes the predicate and
//! B does the same step again (`--set pause_ms=27000`). `fence-on-takeover` closes it: the
//! new holder stamps the row with its token and reads it back before reading the progress.

use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease::lease_worker::{Fencing, OnReject, WorkerPlan};
use crate::scenarios::lease_setup::{
    build, choice, holds_if, int, millis, worker_pair, LeasePlan, StorePlan, OPENING_BALANCE,
};
use crate::scenarios::lease_world::LeaseProperty::*;
use crate::scenarios::{Expectation, Listing, ParamSpec, Params, VariantDefault};

pub const ID: &str = "zombie-worker";
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Watch a paused holder's lease expire while it still believes it holds it",
        "See a higher token from the new holder reject the zombie's write",
        "Notice the fence only helps if the resource checks it",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "A wakes from a 40 s pause with an expired lease and writes with token 33; B wrote with 34. What stops A?",
        answers: &["A notices the time", "The lock service cancels A's write", "The ledger refuses a token lower than one it has seen"],
        correct: 2,
        why: "The check happens where the write lands, so A does not need to know anything.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§4–5",
        title: "Zombie worker",
        summary: "A's lease expires while it is frozen in a GC pause; B takes over with a higher token. When A wakes it writes anyway — only a check at the ledger stops it, and only if B's token reached the ledger before B read how far the job got.",
        params: vec![
            choice(
                "fencing",
                "Fencing",
                "Where (and whether) the token is checked.",
                &[
                    ("none", "none — the token is never checked"),
                    ("write-predicate", "write predicate — WHERE last_token <= :token"),
                    ("app-check", "app check — read last_token, compare in code, then write"),
                    ("first-write-only", "first write only — steps 2–4 unfenced"),
                    ("retry-after-reject", "retry after reject — re-acquire and carry on"),
                    ("fence-on-takeover", "fence on takeover — stamp the row with the new token before reading progress"),
                ],
            ),
            millis("ttl_ms", "Lease TTL", "How long a grant lasts by the store's clock.", "30000", (1_000, 120_000)),
            ParamSpec {
                // Frozen before its first write, A is refused at step 1 and, moving on, lands
                // step 2 unchecked: the variant's whole lesson in its default run.
                variant_defaults: &[VariantDefault {
                    when: ("fencing", "first-write-only"),
                    value: "2000",
                }],
                ..millis(
                    "pause_start_ms",
                    "Pause starts at",
                    "When A freezes (GC). By default 5 s in, after A has written step 1 (with fencing=first-write-only: 2 s in, before it). Below about 4000 A freezes before its first write.",
                    "5000",
                    (0, 120_000),
                )
            },
            millis("pause_ms", "Pause length", "How long A stays frozen; 0 for no pause.", "36000", (0, 300_000)),
            ParamSpec {
                // A renewal refused on waking would stop A before its unchecked step lands;
                // this variant's team trusts the 30 s TTL to cover a 16 s job instead.
                variant_defaults: &[VariantDefault {
                    when: ("fencing", "first-write-only"),
                    value: "0",
                }],
                ..millis(
                    "heartbeat_ms",
                    "Heartbeat interval",
                    "How often each worker renews; 0 for never (the default with fencing=first-write-only, whose team counts on a 30 s TTL covering a 16 s job).",
                    "10000",
                    (0, 60_000),
                )
            },
        ],
    }
}

/// Worker A's plan: four steps of 4 s, ₹10 each, on lease `account-42`.
fn plan(params: &Params) -> WorkerPlan {
    let variant = params.get("fencing").map(String::as_str);
    let (fencing, on_reject) = match variant {
        Some("write-predicate" | "fence-on-takeover") => (Fencing::WritePredicate, OnReject::Abort),
        Some("app-check") => (Fencing::AppCheck, OnReject::Abort),
        Some("first-write-only") => (Fencing::FirstWriteOnly, OnReject::SkipStep),
        Some("retry-after-reject") => (Fencing::WritePredicate, OnReject::ReacquireAndContinue),
        _ => (Fencing::None, OnReject::Abort),
    };
    WorkerPlan {
        ttl_ms: int(params, "ttl_ms"),
        heartbeat_ms: int(params, "heartbeat_ms"),
        fencing,
        on_reject,
        stamp_before_progress: variant == Some("fence-on-takeover"),
        ..WorkerPlan::leased("account-42")
    }
}

/// Closer than this to a moment A's freeze is compared with (its lease's end, its first
/// write), the grant's round trip and A's start jitter decide which side it falls on: the
/// expectation promises nothing.
const CLOSE_CALL_MS: u64 = 300;

/// Messages take 1–4 ms (`lease_setup`'s links): the few round trips between B's poll and
/// its first write, rounded up.
const MESSAGES_MS: u64 = 50;

/// When worker-B's job fires (`setup`'s `worker_pair`).
const B_START_AFTER_MS: (u64, u64) = (500, 600);

/// A busy answer comes back within this (two hops of 1–4 ms); B's next poll is timed from it.
const POLL_ROUND_TRIP_MS: (u64, u64) = (2, 8);

/// The latest B's first write lands: A's lease runs out `ttl` after its grant (its job fires
/// in the plan's first 100 ms, the grant a hop later); B polls from its start, each poll a
/// round trip plus `retry_ms` (plus any jitter) after the last, takes the lease at its first
/// poll after the expiry, reads how far the job got and writes a step later. B's polls fall
/// on a grid its start fixes, so the first one after the expiry is found by walking the grid
/// for every start and period the ranges allow, not bounded by a whole period.
fn b_first_write_by_ms(job: &WorkerPlan, ttl: u64) -> u64 {
    let expiry = job.start_after_ms.1 + ttl + MESSAGES_MS;
    let periods =
        (job.retry_ms + POLL_ROUND_TRIP_MS.0)..=(job.retry_ms + job.retry_jitter_ms + POLL_ROUND_TRIP_MS.1);
    let first_poll_after = |start: u64, period: u64| {
        if expiry <= start {
            start
        } else {
            start + (expiry - start).div_ceil(period) * period
        }
    };
    let takeover = (B_START_AFTER_MS.0..=B_START_AFTER_MS.1)
        .flat_map(|start| periods.clone().map(move |period| first_poll_after(start, period)))
        .max()
        .unwrap_or(expiry + job.retry_ms);
    takeover + job.step_ms + MESSAGES_MS
}

/// Whether the default story (A frozen past its TTL while B takes over) happens with these
/// parameters; outside it the scenario makes no promise about the fence.
fn zombie_story(params: &Params, job: &WorkerPlan) -> bool {
    let [ttl, start, pause, heartbeat] =
        ["ttl_ms", "pause_start_ms", "pause_ms", "heartbeat_ms"].map(|k| int::<u64>(params, k));
    // A must freeze before its first heartbeat (due `heartbeat` after its grant), wake after
    // B has written at least once, and B must still hold the lease then.
    let freezes_before_renewing = heartbeat == 0 || start < heartbeat;
    let wakes_after_b_wrote = start + pause > b_first_write_by_ms(job, ttl);
    let b_still_holds = heartbeat > 0 && heartbeat * 3 < ttl * 2 || start + pause < ttl * 2;
    let freezes_while_holding = start + CLOSE_CALL_MS < ttl;
    // ...and before its job is done: frozen after its last write, A has nothing left to write.
    let freezes_with_work_left = start + CLOSE_CALL_MS < job.steps as u64 * job.step_ms;
    pause > 0
        && freezes_before_renewing
        && wakes_after_b_wrote
        && b_still_holds
        && freezes_while_holding
        && freezes_with_work_left
}

/// Whether A's stale writes stay off the account, where that is the same for every seed.
fn account_safe(params: &Params, job: &WorkerPlan) -> Option<bool> {
    // A's first write lands about this long after the job fires (start jitter + one step).
    let a_first_write_ms = job.start_after_ms.1 + job.step_ms;
    let start: u64 = int(params, "pause_start_ms");
    match (job.fencing, job.on_reject) {
        (_, OnReject::ReacquireAndContinue) => Some(false),
        (Fencing::WritePredicate, _) => Some(true),
        (Fencing::None | Fencing::AppCheck, _) => Some(false),
        // Refused at step 1 or not, A goes on to steps that carry no check, unless it renews:
        // then the renewal it sends on waking is refused, and whether that stops A before its
        // unchecked step lands depends on where the step's work and the renewal fall.
        (Fencing::FirstWriteOnly, OnReject::SkipStep) if job.heartbeat_ms > 0 => None,
        (Fencing::FirstWriteOnly, OnReject::SkipStep) => Some(false),
        (Fencing::FirstWriteOnly, _) if start + CLOSE_CALL_MS < a_first_write_ms => Some(true),
        (Fencing::FirstWriteOnly, _) if start > a_first_write_ms + CLOSE_CALL_MS => Some(false),
        (Fencing::FirstWriteOnly, _) => None,
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let job = plan(params);
    let mut outcome = Vec::new();
    let mut verdicts = vec![("tokens-increase".to_string(), Verdict::Holds)];
    if zombie_story(params, &job) {
        outcome.push(("max_concurrent_holders".to_string(), json!(2)));
        if let Some(safe) = account_safe(params, &job) {
            // Retrying re-acquires legitimately (token 35), so the fence itself is never broken.
            let retry = job.on_reject == OnReject::ReacquireAndContinue;
            verdicts.push(("fence-monotonic".to_string(), holds_if(safe || retry)));
            verdicts.push(("no-double-debit".to_string(), holds_if(safe)));
            if safe {
                outcome.push(("balance".to_string(), json!(OPENING_BALANCE - job.job_total())));
            }
        }
    } else if job.stamp_before_progress {
        // With the gap closed no timing lets a stale write land, in the story or out of it.
        verdicts.push(("fence-monotonic".to_string(), Verdict::Holds));
        verdicts.push(("no-double-debit".to_string(), Verdict::Holds));
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let a = plan(params);
    let (mut setup, cast) = build(LeasePlan {
        store: Some(StorePlan::with_tokens_issued(32)),
        workers: worker_pair(a, B_START_AFTER_MS),
        properties: vec![FenceMonotonic, TokensIncrease, NoDoubleDebit, JobCompletes],
        explain_double_runs: true,
        ..LeasePlan::default()
    });
    let cast = cast.pair();
    let pause_ms = int(params, "pause_ms");
    if pause_ms > 0 {
        let pause = Fault::Pause {
            node: cast.a,
            duration_ms: pause_ms,
        };
        setup.script(int::<u64>(params, "pause_start_ms") * MS_US, pause);
    }
    let variant = params.get("fencing").map_or("none", String::as_str);
    let job = plan(params);
    let timing = super::zombie_worker_beats::Timing {
        ttl_ms: job.ttl_ms,
        pause_start_ms: int(params, "pause_start_ms"),
        pause_ms,
        step_ms: job.step_ms,
        story: zombie_story(params, &job),
    };
    super::zombie_worker_beats::beats(&mut setup, variant, cast, timing);
    setup
}
