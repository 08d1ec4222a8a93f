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
//! With `release=naive-delete` the delete removes B's row. Worker C's job fires at 16.5 s,
//! finds no row, and is granted token 3 while B's grant still has 5 s to run: two holders.
//! C does step 2 quickly (1 s); B's own step 2 arrives later with token 2 and is refused, so
//! the fence keeps the account right even though the lease did not. With
//! `release=compare-and-delete` A's delete matches nothing, C is told B holds the lease and
//! waits, B finishes and releases, and C later finds the job complete.
//!
//! The speeds differ on purpose: A is stuck, B's steps take 4 s, C's 1 s. That makes C's
//! first write land before B's next one for every seed, so the only thing that changes
//! between the variants is who held the lease, not whether the account was right.

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

pub const ID: &str = "wrong-release";
const STORE: NodeId = NodeId(0);
const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const C: NodeId = NodeId(3);
const LEDGER: NodeId = NodeId(4);
const LEASE: &str = "account-42";
const OPENING: i64 = 100;
const AMOUNT: i64 = 10;
const STEPS: u32 = 2;
const TTL_MS: u64 = 10_000;
const RETRY_MS: u64 = 10_000;

/// Who does what and how fast, per worker.
struct Role {
    id: NodeId,
    start_after_ms: (u64, u64),
    step_ms: u64,
}

const ROLES: [Role; 3] = [
    // A: stuck in its first step for longer than its lease.
    Role {
        id: A,
        start_after_ms: (0, 100),
        step_ms: 16_000,
    },
    // B: asks at ~1 s (held), again at ~11 s (expired: takeover), writes step 1 at ~15 s.
    Role {
        id: B,
        start_after_ms: (1_000, 1_100),
        step_ms: 4_000,
    },
    // C: fires just after A's release at ~16 s; quick steps.
    Role {
        id: C,
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
        summary: "A's lease expires while it is stuck; B takes over. When A gives up, its finally block deletes the lease — B's lease, unless the delete checks the owner. Then C walks in.",
        params: vec![ParamSpec {
            key: "release",
            label: "Release",
            help: "The statement a worker uses to let go of the lease.",
            default: "naive-delete",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "naive-delete",
                        label: "naive delete — DELETE FROM lease WHERE name = :name",
                    },
                    ChoiceOption {
                        value: "compare-and-delete",
                        label: "compare and delete — … AND owner = :me, in one statement",
                    },
                ],
            },
        }],
    }
}

fn mode(params: &Params) -> ReleaseMode {
    match params.get("release").map(String::as_str) {
        Some("compare-and-delete") => ReleaseMode::CompareAndDelete,
        _ => ReleaseMode::NaiveDelete,
    }
}

fn write(worker: &str, token: u64, step: u32) -> serde_json::Value {
    json!({"worker": worker, "token": token, "step": step})
}

fn rejected(worker: &str, token: u64, step: u32, highest: u64) -> serde_json::Value {
    let mut w = write(worker, token, step);
    w["reason"] = json!(format!("token {token} < {highest}: a newer holder exists"));
    w
}

pub fn expectation(params: &Params) -> Expectation {
    let (a, b, c) = ("worker-A", "worker-B", "worker-C");
    let naive = mode(params) == ReleaseMode::NaiveDelete;
    let mut outcome = vec![
        ("balance".to_string(), json!(OPENING - AMOUNT * i64::from(STEPS))),
        ("overlapping_grants".to_string(), json!(u32::from(naive))),
        ("max_concurrent_holders".to_string(), json!(2)),
    ];
    if naive {
        outcome.extend([
            (
                "accepted_writes".to_string(),
                json!([write(b, 2, 1), write(c, 3, 2)]),
            ),
            (
                "rejected_writes".to_string(),
                json!([rejected(a, 1, 1, 2), rejected(b, 2, 2, 3)]),
            ),
            ("finished_by".to_string(), json!([c])),
        ]);
    } else {
        outcome.extend([
            (
                "accepted_writes".to_string(),
                json!([write(b, 2, 1), write(b, 2, 2)]),
            ),
            ("rejected_writes".to_string(), json!([rejected(a, 1, 1, 2)])),
            ("finished_by".to_string(), json!([b, c])),
        ]);
    }
    Expectation {
        outcome,
        verdicts: vec![
            (
                "no-overlapping-grants".to_string(),
                if naive { Verdict::Violated } else { Verdict::Holds },
            ),
            ("fence-monotonic".to_string(), Verdict::Holds),
            ("no-double-debit".to_string(), Verdict::Holds),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

fn names() -> Vec<String> {
    ["lease-store", "worker-A", "worker-B", "worker-C", "ledger"]
        .map(String::from)
        .to_vec()
}

pub fn setup(params: &Params) -> Setup<LeaseWorld> {
    let names = names();
    let release = mode(params);
    let plan = |role: &Role| WorkerPlan {
        coordination: Coordination::Lease,
        store: STORE,
        sink_node: LEDGER,
        sink: Sink::Resource,
        lease: LEASE.to_string(),
        job_key: "recon-42".to_string(),
        ttl_ms: TTL_MS,
        // The job normally takes a few seconds against a 10 s lease: nobody renews.
        heartbeat_ms: 0,
        start_after_ms: role.start_after_ms,
        retry_ms: RETRY_MS,
        retry_jitter_ms: 0,
        steps: STEPS,
        step_ms: role.step_ms,
        amount_per_step: AMOUNT,
        fencing: Fencing::WritePredicate,
        on_reject: OnReject::Abort,
        release: Some(release),
        release_in_finally: true,
        touch_on_heartbeat: false,
        check_clock_before_step: false,
        check_progress: true,
    };
    let worker_faults = WORKER_FAULTS.to_vec();
    let info = |id: NodeId, kind: &str, faults: Vec<FaultKind>| node_info(&names, id, kind, faults);
    let config = StoreConfig {
        renewal_increments_token: false,
    };
    let (store, store_durable) = store_node(&names, config, BTreeMap::new());
    let (ledger, ledger_durable) = ledger_node(&names, OPENING);
    let mut nodes = vec![(
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
    )];
    for role in &ROLES {
        let (node, durable) = worker_node(&names[role.id.index()], plan(role));
        nodes.push((info(role.id, "worker", worker_faults.clone()), node, durable));
    }
    nodes.push((
        info(LEDGER, "resource", vec![FaultKind::Pause, FaultKind::Network]),
        ledger,
        ledger_durable,
    ));
    let world = LeaseWorld {
        names,
        store: Some(STORE),
        workers: vec![A, B, C],
        resource: Some(LEDGER),
        rail: None,
        jobs: None,
        lease: LEASE.to_string(),
        opening_balance: OPENING,
        job_total: AMOUNT * i64::from(STEPS),
        properties: vec![
            LeaseProperty::NoOverlappingGrants,
            LeaseProperty::FenceMonotonic,
            LeaseProperty::NoDoubleDebit,
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
