//! `zombie-worker` (curriculum §4–5): worker A takes the lease on account 42 with token 33
//! and a 30 s TTL, then freezes in a 40 s stop-the-world pause. At 30 s the lease expires by
//! the store's clock; worker B takes over with token 34 and starts writing. A wakes at 41 s
//! still believing it holds the lease and writes with 33. Whether that write lands depends
//! only on where the token is checked.

use super::lease_common::{
    ledger_node, node_info, store_node, worker_node, LeaseProperty, LeaseWorld, WORKER_FAULTS,
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

pub const ID: &str = "zombie-worker";
const STORE: NodeId = NodeId(0);
const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const LEDGER: NodeId = NodeId(3);
const LEASE: &str = "account-42";
const OPENING: i64 = 100;
const STEPS: u32 = 4;
const STEP_MS: u64 = 4_000;
const AMOUNT: i64 = 10;
/// A's first write lands about this long after the job fires (start jitter + one step).
const A_FIRST_WRITE_MS: u64 = STEP_MS + 100;

fn int(
    key: &'static str,
    label: &'static str,
    help: &'static str,
    default: &'static str,
    min: i64,
    max: i64,
) -> ParamSpec {
    ParamSpec {
        key,
        label,
        help,
        default,
        kind: ParamKind::Int { min, max, unit: "ms" },
    }
}

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 3,
        sections: "§4–5",
        title: "Zombie worker",
        summary: "A's lease expires while it is frozen in a GC pause; B takes over with a higher token. When A wakes it writes anyway — only a check at the ledger stops it.",
        params: vec![
            ParamSpec {
                key: "fencing",
                label: "Fencing",
                help: "Where (and whether) the token is checked.",
                default: "none",
                kind: ParamKind::Choice {
                    options: vec![
                        ChoiceOption { value: "none", label: "none — the token is never checked" },
                        ChoiceOption { value: "write-predicate", label: "write predicate — WHERE last_token <= :token" },
                        ChoiceOption { value: "app-check", label: "app check — read last_token, compare in code, then write" },
                        ChoiceOption { value: "first-write-only", label: "first write only — steps 2–4 unfenced" },
                        ChoiceOption { value: "retry-after-reject", label: "retry after reject — re-acquire and carry on" },
                    ],
                },
            },
            int("ttl_ms", "Lease TTL", "How long a grant lasts by the store's clock.", "30000", 1_000, 120_000),
            int("pause_start_ms", "Pause starts at", "When A freezes (GC).", "1000", 0, 120_000),
            int("pause_ms", "Pause length", "How long A stays frozen; 0 for no pause.", "40000", 0, 300_000),
            int("heartbeat_ms", "Heartbeat interval", "How often each worker renews; 0 for never.", "10000", 0, 60_000),
        ],
    }
}

fn num(params: &Params, key: &str) -> u64 {
    params.get(key).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn fencing(params: &Params) -> (Fencing, OnReject) {
    match params.get("fencing").map(String::as_str) {
        Some("write-predicate") => (Fencing::WritePredicate, OnReject::Abort),
        Some("app-check") => (Fencing::AppCheck, OnReject::Abort),
        Some("first-write-only") => (Fencing::FirstWriteOnly, OnReject::Abort),
        Some("retry-after-reject") => (Fencing::WritePredicate, OnReject::ReacquireAndContinue),
        _ => (Fencing::None, OnReject::Abort),
    }
}

/// Whether the default story (A frozen past its TTL while B takes over) happens with these
/// parameters; outside it the scenario makes no promise about the fence.
fn zombie_story(params: &Params) -> bool {
    let (ttl, start, pause, heartbeat) = (
        num(params, "ttl_ms"),
        num(params, "pause_start_ms"),
        num(params, "pause_ms"),
        num(params, "heartbeat_ms"),
    );
    // A must freeze before its first heartbeat, wake after B has written at least once, and
    // B must still hold the lease then.
    let freezes_before_renewing = heartbeat == 0 || start + 200 < heartbeat;
    let wakes_after_b_wrote = start + pause > ttl + 2_600 + STEP_MS + 500;
    let b_still_holds = heartbeat > 0 && heartbeat * 3 < ttl * 2 || start + pause < ttl * 2;
    pause > 0 && freezes_before_renewing && wakes_after_b_wrote && b_still_holds && start + 300 < ttl
}

pub fn expectation(params: &Params) -> Expectation {
    let mut verdicts = vec![("tokens-increase".to_string(), Verdict::Holds)];
    let mut outcome = vec![("max_concurrent_holders".to_string(), json!(2))];
    if zombie_story(params) {
        let start = num(params, "pause_start_ms");
        let (fence, on_reject) = fencing(params);
        let safe = match (fence, on_reject) {
            (_, OnReject::ReacquireAndContinue) => Some(false),
            (Fencing::WritePredicate, _) => Some(true),
            (Fencing::None | Fencing::AppCheck, _) => Some(false),
            (Fencing::FirstWriteOnly, _) if start + 300 < A_FIRST_WRITE_MS => Some(true),
            (Fencing::FirstWriteOnly, _) if start > A_FIRST_WRITE_MS + 300 => Some(false),
            (Fencing::FirstWriteOnly, _) => None,
        };
        let retry = on_reject == OnReject::ReacquireAndContinue;
        if let Some(safe) = safe {
            let v = |ok: bool| {
                if ok {
                    Verdict::Holds
                } else {
                    Verdict::Violated
                }
            };
            // Retrying re-acquires legitimately (token 35), so the fence itself is never broken.
            verdicts.push(("fence-monotonic".to_string(), v(safe || retry)));
            verdicts.push(("no-double-debit".to_string(), v(safe)));
            if safe {
                outcome.push(("balance".to_string(), json!(OPENING - AMOUNT * i64::from(STEPS))));
            }
        }
    } else {
        outcome.clear();
    }
    Expectation { outcome, verdicts }
}

fn names() -> Vec<String> {
    ["lease-store", "worker-A", "worker-B", "ledger"]
        .map(String::from)
        .to_vec()
}

pub fn setup(params: &Params) -> Setup<LeaseWorld> {
    let (fence, on_reject) = fencing(params);
    let names = names();
    let plan = |start_after_ms: (u64, u64)| WorkerPlan {
        coordination: Coordination::Lease,
        store: STORE,
        sink_node: LEDGER,
        sink: Sink::Resource,
        lease: LEASE.to_string(),
        job_key: "recon-42".to_string(),
        ttl_ms: num(params, "ttl_ms"),
        heartbeat_ms: num(params, "heartbeat_ms"),
        start_after_ms,
        retry_ms: 5_000,
        retry_jitter_ms: 0,
        steps: STEPS,
        step_ms: STEP_MS,
        amount_per_step: AMOUNT,
        fencing: fence,
        on_reject,
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
    let (ledger, ledger_durable) = ledger_node(&names, OPENING);
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
            info(LEDGER, "resource", vec![FaultKind::Pause, FaultKind::Network]),
            ledger,
            ledger_durable,
        ),
    ];
    let pause_ms = num(params, "pause_ms");
    let scripted = if pause_ms > 0 {
        vec![(
            num(params, "pause_start_ms") * MS_US,
            Fault::Pause {
                node: A,
                duration_ms: pause_ms,
            },
        )]
    } else {
        Vec::new()
    };
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
            LeaseProperty::FenceMonotonic,
            LeaseProperty::TokensIncrease,
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
        scripted,
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
