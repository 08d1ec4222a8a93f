//! `lease-lifecycle` (curriculum §3, the lease table and its renewal rule): one lease row
//! from birth to reuse, with two workers and a two-step job on account 42.
//!
//! Worker A inserts the row (token 1), reads how far the job got, and renews on a heartbeat
//! every 3 s against a 9 s TTL; each renewal also marks the ledger row with A's current
//! token. A finishes step 1 and is killed during step 2, so its heartbeats stop. Worker B,
//! whose copy of the job fires at about 11 s, is told the lease is held and waits 5 s. By
//! then A's lease has expired by the store's clock; B takes it over (token 2), finds step 1
//! recorded and does step 2, renewing once, then releases with a compare-and-delete. At
//! 24 s A is restarted; its job fires again, it inserts a fresh row (token 3 — the sequence
//! survives deletes), finds the job complete and releases.
//!
//! With `renewal=increments-token` the store gives a new token on every renewal. The worker's
//! heartbeat mark raises the ledger's highest token to the new value while the step in
//! progress still carries the token it started with, so the worker's own write is refused:
//! it fences itself out. Every holder does the same at its first renewal, and the job never
//! completes.

use super::lease_setup::{build, choice, chosen, worker, LeasePlan, StorePlan, OPENING_BALANCE};
use super::lease_world::LeaseProperty::*;
use super::lease_world::{accepted, grant, rejected};
use super::{Expectation, Params, ScenarioInfo};
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease_worker::WorkerPlan;
use serde_json::json;

pub const ID: &str = "lease-lifecycle";
/// Worker A: the first node after the lease store.
const A: NodeId = NodeId(1);
const AMOUNT: i64 = 10;
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

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 2,
        sections: "§3",
        title: "Lease lifecycle",
        summary: "Acquire, heartbeat, crash, expiry, takeover, a clean compare-and-delete release and a fresh acquisition — one lease row and its fencing token through all of it. Switch the renewal rule to see a worker fence itself out.",
        params: vec![choice(
            "renewal",
            "Renewal rule",
            "What the store does to the token when the owner renews.",
            &[
                ("keeps-token", "keeps token — CASE WHEN owner = me THEN fence_token"),
                ("increments-token", "increments token — every grant adds 1, renewals too (the bug)"),
            ],
        )],
    }
}

fn increments(params: &Params) -> bool {
    chosen(params, "renewal", "increments-token")
}

pub fn expectation(params: &Params) -> Expectation {
    let (a, b) = ("worker-A", "worker-B");
    if increments(params) {
        Expectation {
            outcome: vec![
                (
                    "grants".to_string(),
                    json!([
                        grant(a, 1, "new"),
                        grant(a, 2, "renewal"),
                        grant(b, 3, "new"),
                        grant(b, 4, "renewal"),
                        grant(a, 5, "new"),
                        grant(a, 6, "renewal"),
                    ]),
                ),
                ("accepted_writes".to_string(), json!([])),
                (
                    "rejected_writes".to_string(),
                    json!([rejected(a, 1, 1, 2), rejected(b, 3, 1, 4), rejected(a, 5, 1, 6)]),
                ),
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
        Expectation {
            outcome: vec![
                (
                    "grants".to_string(),
                    json!([
                        grant(a, 1, "new"),
                        grant(a, 1, "renewal"),
                        grant(a, 1, "renewal"),
                        grant(b, 2, "takeover"),
                        grant(b, 2, "renewal"),
                        grant(a, 3, "new"),
                    ]),
                ),
                (
                    "accepted_writes".to_string(),
                    json!([accepted(a, 1, 1), accepted(b, 2, 2)]),
                ),
                ("rejected_writes".to_string(), json!([])),
                (
                    "balance".to_string(),
                    json!(OPENING_BALANCE - AMOUNT * i64::from(STEPS)),
                ),
                ("finished_by".to_string(), json!([a, b])),
                ("max_concurrent_holders".to_string(), json!(1)),
            ],
            verdicts: vec![
                ("tokens-increase".to_string(), Verdict::Holds),
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
        amount_per_step: AMOUNT,
        release_in_finally: true,
        // The step's write carries the token bound when the step started; the mark carries
        // the token the latest renewal returned.
        touch_on_heartbeat: true,
        ..WorkerPlan::leased("account-42")
    };
    let b = WorkerPlan {
        start_after_ms: B_START_MS,
        ..a.clone()
    };
    let mut setup = build(LeasePlan {
        store: Some(StorePlan {
            renewal_increments_token: increments(params),
            ..StorePlan::default()
        }),
        workers: vec![worker("worker-A", a), worker("worker-B", b)],
        properties: vec![TokensIncrease, FenceMonotonic, JobCompletes],
        ..LeasePlan::default()
    });
    setup.script(CRASH_A_MS * MS_US, Fault::Crash { node: A });
    setup.script(RESTART_A_MS * MS_US, Fault::Restart { node: A });
    setup
}
