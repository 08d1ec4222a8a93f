//! `duplicate-job` (curriculum §1 and §3): the service runs as two replicas for redundancy,
//! and the nightly 2am job is scheduled on both. Each copy's timer fires with a little
//! jitter, and the job debits ₹30 from account 42 once.
//!
//! With no lock both copies run it and the account is debited twice (₹100 → ₹40). With a
//! lease, whichever copy reaches the store first inserts the row and runs the job; the other
//! is told the lease is held and backs off for good (no retry), so the debit happens once
//! (₹100 → ₹70). The job takes far longer than the spread of start times, so the second
//! copy always asks while the first still holds the lease — whichever copy wins.

use super::lease_common::{
    ledger_node, node_info, store_node, worker_node, LeaseProperty, LeaseWorld, WORKER_FAULTS,
};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::engine::{Engine, Limits, Recording, Setup};
use crate::kernel::faults::{Action, FaultKind};
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

pub const ID: &str = "duplicate-job";
const STORE: NodeId = NodeId(0);
const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const LEDGER: NodeId = NodeId(3);
const LEASE: &str = "job:nightly-debit";
const OPENING: i64 = 100;
const DEBIT: i64 = 30;
/// Each copy's 2am timer fires somewhere in this window (ms).
const START_JITTER_MS: (u64, u64) = (0, 300);
/// The job's work; much longer than the start jitter, so the copies always overlap.
const JOB_MS: u64 = 2_000;
const TTL_MS: u64 = 30_000;

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 2,
        sections: "§1, §3",
        title: "Duplicate 2am job",
        summary: "Two replicas of a service both run the nightly job that debits ₹30. With nothing in between, the account is debited twice; with a lease, the copy that asks second is turned away.",
        params: vec![ParamSpec {
            key: "lock",
            label: "Coordination",
            help: "What the two copies of the job do before starting work.",
            default: "none",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "none",
                        label: "none — each copy just runs the job",
                    },
                    ChoiceOption {
                        value: "lease",
                        label: "lease — insert the lease row first; if it exists, back off",
                    },
                ],
            },
        }],
    }
}

fn uses_lease(params: &Params) -> bool {
    params.get("lock").map(String::as_str) == Some("lease")
}

pub fn expectation(params: &Params) -> Expectation {
    let lease = uses_lease(params);
    let v = |ok: bool| if ok { Verdict::Holds } else { Verdict::Violated };
    let runs = if lease { 1 } else { 2 };
    Expectation {
        outcome: vec![
            ("balance".to_string(), json!(OPENING - DEBIT * runs)),
            ("max_concurrent_holders".to_string(), json!(runs)),
        ],
        verdicts: vec![
            ("no-double-debit".to_string(), v(lease)),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

fn names() -> Vec<String> {
    ["lease-store", "replica-A", "replica-B", "ledger"]
        .map(String::from)
        .to_vec()
}

pub fn setup(params: &Params) -> Setup<LeaseWorld> {
    let lease = uses_lease(params);
    let names = names();
    let plan = WorkerPlan {
        coordination: if lease {
            Coordination::Lease
        } else {
            Coordination::None
        },
        store: STORE,
        sink_node: LEDGER,
        sink: Sink::Resource,
        lease: LEASE.to_string(),
        job_key: "nightly-debit".to_string(),
        ttl_ms: TTL_MS,
        heartbeat_ms: TTL_MS / 3,
        start_after_ms: START_JITTER_MS,
        // Denied means another copy is running the job: back off for good.
        retry_ms: 0,
        retry_jitter_ms: 0,
        steps: 1,
        step_ms: JOB_MS,
        amount_per_step: DEBIT,
        // Fencing is the subject of a later chapter; here the lease alone decides.
        fencing: Fencing::None,
        on_reject: OnReject::Abort,
        release: Some(ReleaseMode::CompareAndDelete),
        release_in_finally: false,
        touch_on_heartbeat: false,
        check_clock_before_step: false,
        check_progress: false,
    };
    let worker_faults = WORKER_FAULTS.to_vec();
    let info = |id: NodeId, kind: &str, faults: Vec<FaultKind>| node_info(&names, id, kind, faults);
    let worker = |id: NodeId| {
        let (node, durable) = worker_node(&names[id.index()], plan.clone());
        (info(id, "worker", worker_faults.clone()), node, durable)
    };
    let config = StoreConfig {
        renewal_increments_token: false,
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
        worker(A),
        worker(B),
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
        job_total: DEBIT,
        properties: vec![LeaseProperty::NoDoubleDebit, LeaseProperty::JobCompletes],
        histogram_bucket_ms: None,
        max_concurrent_holders: 0,
        window_opened_us: None,
        window_closed_total_us: 0,
    };
    Setup {
        world,
        nodes,
        link: LinkConfig::reliable(MS_US, 4 * MS_US),
        scripted: Vec::new(),
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
