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

use super::lease_common::{
    ledger_node, node_info, store_node, worker_node, LeaseProperty, LeaseWorld, WORKER_FAULTS,
};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::engine::{Engine, Limits, Recording, Setup};
use crate::kernel::faults::{Action, Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease_msg::ReleaseMode;
use crate::protocols::lease_store::StoreConfig;
use crate::protocols::lease_worker::{Coordination, Fencing, OnReject, Sink, WorkerPlan};
use crate::trace::Trace;
use serde_json::json;
use std::collections::BTreeMap;

pub const ID: &str = "lease-lifecycle";
const STORE: NodeId = NodeId(0);
const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const LEDGER: NodeId = NodeId(3);
const LEASE: &str = "account-42";
const OPENING: i64 = 100;
const AMOUNT: i64 = 10;
const STEPS: u32 = 2;
const TTL_MS: u64 = 9_000;
const HEARTBEAT_MS: u64 = TTL_MS / 3;
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
        params: vec![ParamSpec {
            key: "renewal",
            label: "Renewal rule",
            help: "What the store does to the token when the owner renews.",
            default: "keeps-token",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "keeps-token",
                        label: "keeps token — CASE WHEN owner = me THEN fence_token",
                    },
                    ChoiceOption {
                        value: "increments-token",
                        label: "increments token — every grant adds 1, renewals too (the bug)",
                    },
                ],
            },
        }],
    }
}

fn increments(params: &Params) -> bool {
    params.get("renewal").map(String::as_str) == Some("increments-token")
}

fn write(worker: &str, token: u64, step: u32) -> serde_json::Value {
    json!({"worker": worker, "token": token, "step": step})
}

fn rejected(worker: &str, token: u64, step: u32) -> serde_json::Value {
    let mut w = write(worker, token, step);
    w["reason"] = json!(format!("token {token} < {}: a newer holder exists", token + 1));
    w
}

fn grant(worker: &str, token: u64, kind: &str) -> serde_json::Value {
    json!({"worker": worker, "token": token, "kind": kind})
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
                    json!([rejected(a, 1, 1), rejected(b, 3, 1), rejected(a, 5, 1)]),
                ),
                ("balance".to_string(), json!(OPENING)),
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
                    json!([write(a, 1, 1), write(b, 2, 2)]),
                ),
                ("rejected_writes".to_string(), json!([])),
                ("balance".to_string(), json!(OPENING - AMOUNT * i64::from(STEPS))),
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

fn names() -> Vec<String> {
    ["lease-store", "worker-A", "worker-B", "ledger"]
        .map(String::from)
        .to_vec()
}

pub fn setup(params: &Params) -> Setup<LeaseWorld> {
    let names = names();
    let plan = |start_after_ms: (u64, u64)| WorkerPlan {
        coordination: Coordination::Lease,
        store: STORE,
        sink_node: LEDGER,
        sink: Sink::Resource,
        lease: LEASE.to_string(),
        job_key: "recon-42".to_string(),
        ttl_ms: TTL_MS,
        heartbeat_ms: HEARTBEAT_MS,
        start_after_ms,
        retry_ms: RETRY_MS,
        retry_jitter_ms: 0,
        steps: STEPS,
        step_ms: STEP_MS,
        amount_per_step: AMOUNT,
        fencing: Fencing::WritePredicate,
        on_reject: OnReject::Abort,
        release: Some(ReleaseMode::CompareAndDelete),
        release_in_finally: true,
        // The step's write carries the token bound when the step started; the mark carries
        // the token the latest renewal returned.
        touch_on_heartbeat: true,
        check_clock_before_step: false,
        check_progress: true,
    };
    let worker_faults = WORKER_FAULTS.to_vec();
    let info = |id: NodeId, kind: &str, faults: Vec<FaultKind>| node_info(&names, id, kind, faults);
    let worker = |id: NodeId, start: (u64, u64)| {
        let (node, durable) = worker_node(&names[id.index()], plan(start));
        (info(id, "worker", worker_faults.clone()), node, durable)
    };
    let config = StoreConfig {
        renewal_increments_token: increments(params),
    };
    let (store, store_durable) = store_node(&names, config, BTreeMap::new());
    let (ledger, ledger_durable) = ledger_node(&names, OPENING);
    let nodes = vec![
        (
            info(
                STORE,
                "lease-store",
                vec![
                    FaultKind::Pause,
                    FaultKind::Crash,
                    FaultKind::Restart,
                    FaultKind::Network,
                ],
            ),
            store,
            store_durable,
        ),
        worker(A, (0, 100)),
        worker(B, B_START_MS),
        (
            info(LEDGER, "resource", vec![FaultKind::Pause, FaultKind::Network]),
            ledger,
            ledger_durable,
        ),
    ];
    let world = LeaseWorld {
        names,
        store: Some(STORE),
        workers: vec![A, B],
        resource: Some(LEDGER),
        rail: None,
        jobs: None,
        lease: LEASE.to_string(),
        opening_balance: OPENING,
        job_total: AMOUNT * i64::from(STEPS),
        properties: vec![
            LeaseProperty::TokensIncrease,
            LeaseProperty::FenceMonotonic,
            LeaseProperty::JobCompletes,
        ],
        histogram_bucket_ms: None,
        max_concurrent_holders: 0,
        window_opened_us: None,
        window_closed_total_us: 0,
    };
    Setup {
        world,
        nodes,
        link: LinkConfig::reliable(MS_US, 4 * MS_US),
        scripted: vec![
            (CRASH_A_MS * MS_US, Fault::Crash { node: A }),
            (RESTART_A_MS * MS_US, Fault::Restart { node: A }),
        ],
    }
}

pub fn run(
    params: &Params,
    seed: u64,
    actions: &[Action],
    limits: Limits,
    recording: Recording,
) -> Result<Trace, String> {
    let engine = Engine::new(setup(params), seed, actions, limits, recording)?;
    Ok(engine.run(ID, seed, params.clone()))
}
