//! `lease-lifecycle` (curriculum §3 and §5, the lease table, its renewal rule and where the
//! token comes from): one lease row from birth to reuse, with two workers and a two-step job
//! on account 42.
//!
//! Worker A's acquisition statement inserts the row with fence_token 1, A reads how far the
//! job got, and renews on a heartbeat every 3 s against a 9 s TTL; each renewal also marks
//! the ledger row with A's current token. A finishes step 1 and is killed during step 2, so
//! its heartbeats stop. Worker B, whose copy of the job fires at about 11 s, gets zero rows
//! and waits 5 s. By then A's lease has expired by the store's clock; the same statement
//! lets B take the row over and its CASE makes the token 2. B finds step 1 recorded, does
//! step 2, renewing once, and releases. At 24 s A is restarted; its job fires again, it
//! acquires, finds the job complete and releases.
//!
//! What A gets at 24 s depends on the release (`release`):
//! - `expire` (default): B's release sets `expires_at = now()` and keeps the row, so A takes
//!   it over and the CASE gives it token 3.
//! - `delete`: B's release deletes the row, and the counter with it. A's insert starts again
//!   at 1, below the 2 the ledger has already seen: `tokens-increase` breaks, and any write
//!   A made under that token would be refused. (Here the job is already complete; in
//!   `wrong-release` a holder's write is refused this way.)
//! - `sequence`: the row is deleted, but tokens come from `nextval` of one sequence per name,
//!   which every run of the statement advances, renewals and refusals included. A gets 7.
//!
//! With `renewal=increments-token` the store's statement has no CASE and gives a new token on
//! every renewal. The worker's heartbeat mark raises the ledger's highest token to the new
//! value while the step in progress still carries the token it started with, so the worker's
//! own write is refused: it fences itself out, aborts and releases. Every holder does the same
//! at its first renewal, and the job never completes.

use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease::lease_store::{ReleaseStyle, TokenSource};
use crate::protocols::lease::lease_worker::WorkerPlan;
use crate::scenarios::lease_setup::{
    balance_after, build, choice, chosen, worker_pair, LeasePlan, StorePlan, OPENING_BALANCE,
};
use crate::scenarios::lease_world::LeaseProperty::*;
use crate::scenarios::lease_world::{accepted, grant, rejected};
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "lease-lifecycle";
const STEPS: u32 = 2;
const TTL_MS: u64 = 9_000;
/// Longer than the heartbeat interval, so a renewal always happens mid-step.
const STEP_MS: u64 = 4_000;
/// A is killed after its second renewal (about 6 s) and before its third (about 9 s).
const CRASH_A_MS: u64 = 7_000;
/// B's copy of the job fires while A's last renewal still holds (it lasts until ~15 s)...
const B_START_MS: (u64, u64) = (10_500, 11_000);
/// ...and asks again after A's lease has expired.
const RETRY_MS: u64 = 5_000;
/// A comes back after B has finished and released.
const RESTART_A_MS: u64 = 24_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Follow one lease row through acquire, renew, expiry, takeover and release",
        "See the fencing token grow with every acquisition",
        "Notice why deleting the row resets the token counter",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Why should releasing a lease keep the row rather than delete it?",
        answers: &["Deleting is slower", "Other workers cannot see deletions", "The row carries the token counter; deleting it restarts the count at 1"],
        correct: 2,
        why: "A fresh row starts the counter again, so a new holder could get a token lower than one already used.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§3, §5",
        title: "Lease lifecycle",
        summary: "Acquire, heartbeat, crash, expiry, takeover, a clean release and a fresh acquisition — one lease row, its acquisition statement and its fencing token through all of it. Release by deleting the row to see the token counter start over at 1; switch the renewal rule to see a worker fence itself out.",
        params: vec![
            choice(
                "renewal",
                "Renewal rule",
                "What the store's statement does to the token when the owner renews.",
                &[
                    ("keeps-token", "keeps token — CASE WHEN owner = me THEN fence_token"),
                    ("increments-token", "increments token — no CASE: every grant adds 1, renewals too (the bug)"),
                ],
            ),
            choice(
                "release",
                "Release",
                "What the release does to the lease row, and so where the next holder's token comes from.",
                &[
                    ("expire", "expire — UPDATE lease SET expires_at = now() … AND owner = me: the row and its counter stay"),
                    ("delete", "delete — DELETE … AND owner = me: the counter goes with the row, the next insert starts at 1"),
                    ("sequence", "sequence — delete the row, take tokens from nextval of a sequence per name"),
                ],
            ),
        ],
    }
}

fn increments(params: &Params) -> bool {
    chosen(params, "renewal", "increments-token")
}

/// The store's release style and token source for the `release` parameter.
fn store_rules(params: &Params) -> (ReleaseStyle, TokenSource) {
    if chosen(params, "release", "delete") {
        (ReleaseStyle::Delete, TokenSource::Row)
    } else if chosen(params, "release", "sequence") {
        (ReleaseStyle::Delete, TokenSource::Sequence)
    } else {
        (ReleaseStyle::Expire, TokenSource::Row)
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let (a, b) = ("worker-A", "worker-B");
    let rules = store_rules(params);
    if increments(params) {
        // A, B and A again each take the lease (token `first`) and renew it once. Each
        // holder's first renewal raises the token, its mark raises the ledger's, and its
        // step-1 write (with the old token) bounces; it aborts and releases. Only an expired
        // row is taken over; a deleted row's counter restarts at 1.
        let (firsts, taken) = match rules {
            (ReleaseStyle::Expire, _) => ([1, 3, 5], "takeover"),
            (_, TokenSource::Row) => ([1, 1, 1], "new"),
            (_, TokenSource::Sequence) => ([1, 3, 5], "new"),
        };
        let holders = [a, b, a].into_iter().zip(firsts);
        let grants: Vec<_> = holders
            .clone()
            .enumerate()
            .flat_map(|(i, (who, first))| {
                let kind = if i == 0 { "new" } else { taken };
                [grant(who, first, kind), grant(who, first + 1, "renewal")]
            })
            .collect();
        let rejects: Vec<_> = holders
            .map(|(who, first)| rejected(who, first, 1, first + 1))
            .collect();
        Expectation {
            outcome: vec![
                ("grants".to_string(), json!(grants)),
                ("accepted_writes".to_string(), json!([])),
                ("rejected_writes".to_string(), json!(rejects)),
                ("balance".to_string(), json!(OPENING_BALANCE)),
                ("finished_by".to_string(), json!([])),
            ],
            verdicts: vec![
                ("tokens-increase".to_string(), Verdict::Violated),
                ("fence-monotonic".to_string(), Verdict::Holds),
                ("job-completes".to_string(), Verdict::Violated),
            ],
        }
    } else {
        // B's token, and what A gets after B's release: a takeover of the kept row, a fresh
        // insert at 1, or a fresh insert with the sequence's next value. With a sequence every
        // run of the statement draws a number: A's insert and two renewals (1-3), B's refused
        // ask (4), B's takeover (5) and renewal (6), A's insert (7).
        let (b_token, a_again) = match rules {
            (ReleaseStyle::Expire, _) => (2, grant(a, 3, "takeover")),
            (_, TokenSource::Row) => (2, grant(a, 1, "new")),
            (_, TokenSource::Sequence) => (5, grant(a, 7, "new")),
        };
        let counter_restarts = rules == (ReleaseStyle::Delete, TokenSource::Row);
        Expectation {
            outcome: vec![
                (
                    "grants".to_string(),
                    json!([
                        grant(a, 1, "new"),
                        grant(a, 1, "renewal"),
                        grant(a, 1, "renewal"),
                        grant(b, b_token, "takeover"),
                        grant(b, b_token, "renewal"),
                        a_again,
                    ]),
                ),
                (
                    "accepted_writes".to_string(),
                    json!([accepted(a, 1, 1), accepted(b, b_token, 2)]),
                ),
                ("rejected_writes".to_string(), json!([])),
                ("balance".to_string(), json!(balance_after(STEPS))),
                ("finished_by".to_string(), json!([a, b])),
                ("max_concurrent_holders".to_string(), json!(1)),
            ],
            verdicts: vec![
                (
                    "tokens-increase".to_string(),
                    if counter_restarts {
                        Verdict::Violated
                    } else {
                        Verdict::Holds
                    },
                ),
                ("fence-monotonic".to_string(), Verdict::Holds),
                ("job-completes".to_string(), Verdict::Holds),
            ],
        }
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let a = WorkerPlan {
        ttl_ms: TTL_MS,
        heartbeat_ms: TTL_MS / 3,
        retry_ms: RETRY_MS,
        steps: STEPS,
        step_ms: STEP_MS,
        release_in_finally: true,
        // The step's write carries the token bound when the step started; the mark carries
        // the token the latest renewal returned.
        touch_on_heartbeat: true,
        ..WorkerPlan::leased("account-42")
    };
    let (mut setup, cast) = build(LeasePlan {
        store: Some(StorePlan {
            renewal_increments_token: increments(params),
            release: store_rules(params).0,
            tokens: store_rules(params).1,
            ..StorePlan::default()
        }),
        workers: worker_pair(a, B_START_MS),
        properties: vec![TokensIncrease, FenceMonotonic, JobCompletes],
        ..LeasePlan::default()
    });
    let cast = cast.pair();
    setup.script(CRASH_A_MS * MS_US, Fault::Crash { node: cast.a });
    setup.script(RESTART_A_MS * MS_US, Fault::Restart { node: cast.a });
    crate::scenarios::lease_table_beats::lifecycle(&mut setup, cast, increments(params), store_rules(params));
    setup
}
