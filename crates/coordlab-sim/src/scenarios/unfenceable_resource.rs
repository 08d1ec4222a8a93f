//! `unfenceable-resource` (curriculum §5, "When the resource cannot be fenced"): the zombie
//! story again, but each step of the job is a payment instruction to a rail that has no
//! idea what a fencing token is. Worker A takes the lease (token 33, 30 s TTL) and freezes
//! in a 40 s pause before its first instruction goes out. The lease expires, B takes over
//! with token 34 and pays steps 1–4. At 41 s A wakes, still sure it holds the lease, and
//! sends its step-1 instruction.
//!
//! A token cannot help here: the rail would not know what to compare it with. What can help
//! is an idempotency key derived deterministically from the job and the step (`payout-42#1`),
//! so the rail recognises A's instruction as a replay of B's. Without it, the rail sends the
//! money a second time.

use super::lease_common::{
    node_info, rail_node, store_node, worker_node, LeaseProperty, LeaseWorld, WORKER_FAULTS,
};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::engine::{Engine, Limits, Recording, Setup};
use crate::kernel::faults::{Action, Fault, FaultKind};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::network::LinkConfig;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease_msg::ReleaseMode;
use crate::protocols::lease_store::StoreConfig;
use crate::protocols::lease_worker::{Coordination, Fencing, OnReject, Sink, WorkerPlan};
use crate::trace::Trace;
use serde_json::json;
use std::collections::BTreeMap;

pub const ID: &str = "unfenceable-resource";
const STORE: NodeId = NodeId(0);
const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const RAIL: NodeId = NodeId(3);
const LEASE: &str = "payout-42";
const JOB: &str = "payout-42";
const STEPS: u32 = 4;
const STEP_MS: u64 = 4_000;
const AMOUNT: i64 = 10;
const TTL_MS: u64 = 30_000;
const HEARTBEAT_MS: u64 = 10_000;
/// B polls every 10 s: its fourth request, at about 30.5 s, is the first after the expiry.
const RETRY_MS: u64 = 10_000;
/// A freezes before its first instruction (due at about 4 s) and before its first renewal
/// (about 10 s), and wakes after B has paid steps 1 and 2 (about 34.6 s and 38.6 s).
const PAUSE_AT_MS: u64 = 1_000;
const PAUSE_MS: u64 = 40_000;

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 4,
        sections: "§5",
        title: "A resource that cannot be fenced",
        summary: "A zombie worker's payment instruction reaches a rail that knows no tokens. Only a deterministic idempotency key lets the rail tell a replay from a second payment.",
        params: vec![ParamSpec {
            key: "idempotency_key",
            label: "Idempotency key",
            help: "Whether each payment instruction carries a key derived from the job and the step.",
            default: "off",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "off",
                        label: "off — each instruction is just an amount",
                    },
                    ChoiceOption {
                        value: "on",
                        label: "on — key job#step, e.g. payout-42#1",
                    },
                ],
            },
        }],
    }
}

fn keyed(params: &Params) -> bool {
    params.get("idempotency_key").map(String::as_str) == Some("on")
}

pub fn expectation(params: &Params) -> Expectation {
    let keyed = keyed(params);
    // B pays all four steps; A's one instruction (step 1) is either a replay or a fifth
    // payment. Both workers believe they hold the lease from B's takeover until A's renewal
    // comes back empty.
    let (sent, replays) = if keyed { (4, 1) } else { (5, 0) };
    Expectation {
        outcome: vec![
            ("max_concurrent_holders".to_string(), json!(2)),
            ("payments_sent".to_string(), json!(sent)),
            ("replays_recognised".to_string(), json!(replays)),
            ("paid_total".to_string(), json!(AMOUNT * sent)),
            ("finished_by".to_string(), json!(["worker-B"])),
        ],
        verdicts: vec![
            (
                "no-double-payment".to_string(),
                if keyed { Verdict::Holds } else { Verdict::Violated },
            ),
            ("tokens-increase".to_string(), Verdict::Holds),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

fn names() -> Vec<String> {
    ["lease-store", "worker-A", "worker-B", "payment-rail"]
        .map(String::from)
        .to_vec()
}

pub fn setup(params: &Params) -> Setup<LeaseWorld> {
    let names = names();
    let idempotency_key = keyed(params);
    let plan = |start_after_ms: (u64, u64)| WorkerPlan {
        coordination: Coordination::Lease,
        store: STORE,
        sink_node: RAIL,
        sink: Sink::Rail { idempotency_key },
        lease: LEASE.to_string(),
        job_key: JOB.to_string(),
        ttl_ms: TTL_MS,
        heartbeat_ms: HEARTBEAT_MS,
        start_after_ms,
        retry_ms: RETRY_MS,
        retry_jitter_ms: 0,
        steps: STEPS,
        step_ms: STEP_MS,
        amount_per_step: AMOUNT,
        // The rail has nothing to check a token against.
        fencing: Fencing::None,
        on_reject: OnReject::Abort,
        release: Some(ReleaseMode::CompareAndDelete),
        release_in_finally: false,
        touch_on_heartbeat: false,
        check_clock_before_step: false,
        check_progress: true,
    };
    let worker = |id: NodeId, start: (u64, u64)| worker_node(&names[id.index()], plan(start));
    let info = |id: NodeId, kind: &str, faults: Vec<FaultKind>| node_info(&names, id, kind, faults);
    let worker_faults = WORKER_FAULTS.to_vec();
    let config = StoreConfig {
        renewal_increments_token: false,
    };
    let (store, store_durable) = store_node(
        &names,
        config,
        BTreeMap::from([(LEASE.to_string(), FencingToken(32))]),
    );
    let (rail, rail_durable) = rail_node(&names);
    let (a, a_d) = worker(A, (0, 100));
    let (b, b_d) = worker(B, (500, 600));
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
        (info(A, "worker", worker_faults.clone()), a, a_d),
        (info(B, "worker", worker_faults), b, b_d),
        (
            info(RAIL, "rail", vec![FaultKind::Pause, FaultKind::Network]),
            rail,
            rail_durable,
        ),
    ];
    let world = LeaseWorld {
        names,
        store: Some(STORE),
        workers: vec![A, B],
        resource: None,
        rail: Some(RAIL),
        jobs: None,
        lease: LEASE.to_string(),
        opening_balance: 0,
        job_total: AMOUNT * i64::from(STEPS),
        properties: vec![
            LeaseProperty::NoDoublePayment,
            LeaseProperty::TokensIncrease,
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
        scripted: vec![(
            PAUSE_AT_MS * MS_US,
            Fault::Pause {
                node: A,
                duration_ms: PAUSE_MS,
            },
        )],
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
