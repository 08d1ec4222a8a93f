//! `wrong-release` (curriculum §4, "releasing the wrong lock", and §3's release step): a
//! two-step job on account 42 under a 10 s lease that nobody renews, because the job usually
//! takes a few seconds.
//!
//! Worker A takes the lease (token 1) and gets stuck: its first step takes 16 s. At 10 s the
//! lease expires by the store's clock; worker B, polling every 10 s, takes it over at about
//! 11 s (token 2) and writes step 1 at about 15 s. A's step 1 arrives at about 16 s with
//! token 1 and the ledger refuses it (every write carries the token in its predicate). A
//! aborts, and its `finally` block releases the lease — the row that is B's now.
//!
//! The token counter lives on the lease row, and a release deletes the row. With
//! `release=naive-delete` A's delete removes B's row, and B's counter with it. Worker C's job
//! fires at 16.5 s, finds no row, and its insert starts again at token 1 while B's grant
//! still has 5 s to run: two holders, and the newer one has the lower number. C does step 2
//! quickly (1 s), but the ledger has seen B's 2 and refuses C's 1; C aborts, and its own
//! finally block deletes its row. B's step 2 arrives later with token 2 and lands. The account
//! ends right, but only because the fence happened to side with B: numbers no longer follow
//! the order of the grants. With `release=compare-and-delete` A's delete matches nothing, C
//! is told B holds the lease and waits, B finishes and deletes its own row, and C later
//! inserts afresh (token 1 again) and finds the job complete.
//!
//! The speeds differ on purpose: A is stuck, B's steps take 4 s, C's 1 s. That makes C's
//! first write land before B's next one for every seed.

use super::lease_setup::{build, choice, holds_if, worker, LeasePlan, StorePlan, OPENING_BALANCE};
use super::lease_world::LeaseProperty::*;
use super::lease_world::{accepted, rejected};
use super::{Expectation, Params, ScenarioInfo};
use crate::kernel::setup::Setup;
use crate::properties::Verdict;
use crate::protocols::lease_msg::ReleaseMode;
use crate::protocols::lease_store::ReleaseStyle;
use crate::protocols::lease_worker::WorkerPlan;
use serde_json::json;

pub const ID: &str = "wrong-release";
const AMOUNT: i64 = 10;
const STEPS: u32 = 2;

/// Who does what and how fast, per worker.
struct Role {
    name: &'static str,
    start_after_ms: (u64, u64),
    step_ms: u64,
}

const ROLES: [Role; 3] = [
    // A: stuck in its first step for longer than its lease.
    Role {
        name: "worker-A",
        start_after_ms: (0, 100),
        step_ms: 16_000,
    },
    // B: asks at ~1 s (held), again at ~11 s (expired: takeover), writes step 1 at ~15 s.
    Role {
        name: "worker-B",
        start_after_ms: (1_000, 1_100),
        step_ms: 4_000,
    },
    // C: fires just after A's release at ~16 s; quick steps.
    Role {
        name: "worker-C",
        start_after_ms: (16_500, 16_600),
        step_ms: 1_000,
    },
];

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 2,
        sections: "§3–4",
        title: "Releasing the wrong lease",
        summary: "A's lease expires while it is stuck; B takes over. When A gives up, its finally block deletes the lease row — B's row, unless the delete checks the owner. Then C walks in, and its insert starts the token counter again at 1.",
        params: vec![choice(
            "release",
            "Release",
            "The statement a worker uses to let go of the lease.",
            &[
                ("naive-delete", "naive delete — DELETE FROM lease WHERE name = :name"),
                ("compare-and-delete", "compare and delete — … AND owner = :me, in one statement"),
            ],
        )],
    }
}

fn mode(params: &Params) -> ReleaseMode {
    match params.get("release").map(String::as_str) {
        Some("compare-and-delete") => ReleaseMode::CompareAndDelete,
        _ => ReleaseMode::NaiveDelete,
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let (a, b, c) = ("worker-A", "worker-B", "worker-C");
    let naive = mode(params) == ReleaseMode::NaiveDelete;
    let mut outcome = vec![
        (
            "balance".to_string(),
            json!(OPENING_BALANCE - AMOUNT * i64::from(STEPS)),
        ),
        ("overlapping_grants".to_string(), json!(u32::from(naive))),
        ("max_concurrent_holders".to_string(), json!(2)),
    ];
    if naive {
        outcome.extend([
            (
                "accepted_writes".to_string(),
                json!([accepted(b, 2, 1), accepted(b, 2, 2)]),
            ),
            (
                "rejected_writes".to_string(),
                json!([rejected(a, 1, 1, 2), rejected(c, 1, 2, 2)]),
            ),
            ("finished_by".to_string(), json!([b])),
        ]);
    } else {
        outcome.extend([
            (
                "accepted_writes".to_string(),
                json!([accepted(b, 2, 1), accepted(b, 2, 2)]),
            ),
            ("rejected_writes".to_string(), json!([rejected(a, 1, 1, 2)])),
            ("finished_by".to_string(), json!([b, c])),
        ]);
    }
    Expectation {
        outcome,
        verdicts: vec![
            ("no-overlapping-grants".to_string(), holds_if(!naive)),
            ("fence-monotonic".to_string(), Verdict::Holds),
            ("no-double-debit".to_string(), Verdict::Holds),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let plan = |role: &Role| WorkerPlan {
        ttl_ms: 10_000,
        // The job normally takes a few seconds against a 10 s lease: nobody renews.
        heartbeat_ms: 0,
        start_after_ms: role.start_after_ms,
        retry_ms: 10_000,
        steps: STEPS,
        step_ms: role.step_ms,
        amount_per_step: AMOUNT,
        release: Some(mode(params)),
        release_in_finally: true,
        ..WorkerPlan::leased("account-42")
    };
    build(LeasePlan {
        // The curriculum's release: delete the row (and, with it, its token counter).
        store: Some(StorePlan {
            release: ReleaseStyle::Delete,
            ..StorePlan::default()
        }),
        workers: ROLES.iter().map(|role| worker(role.name, plan(role))).collect(),
        properties: vec![NoOverlappingGrants, FenceMonotonic, NoDoubleDebit, JobCompletes],
        ..LeasePlan::default()
    })
}
