//! `lock-alternatives` (curriculum §5, "The alternatives, which are usually better than the
//! lock"): the nightly 2am job fires on both replicas of a service within the same tenth of
//! a second, and it debits ₹40 from account 42 in two steps. There is no lease store.
//! Each method below lets exactly one copy run it:
//!
//! - `unique-constraint`: both copies insert the job's key into `job_run`; the primary key
//!   accepts the first and answers the second with a conflict.
//! - `conditional-update`: both copies run `UPDATE job SET state='running' WHERE
//!   state='pending'`; one changes a row, the other changes none.
//! - `partitioning`: work for account 42 is routed to replica-A only. Replica-B never sees
//!   it, so there is nothing to decide and no shared table at all.
//!
//! Which copy wins the insert or the update depends on the seed (start jitter and network
//! latency); that exactly one does, does not.

use super::lease_common::{jobs_node, ledger_node, node_info, worker_node, LeaseProperty, LeaseWorld};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::engine::{Engine, Limits, Recording, Setup};
use crate::kernel::faults::{Action, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease_worker::{Coordination, Fencing, OnReject, Sink, WorkerPlan};
use crate::trace::Trace;
use serde_json::json;

pub const ID: &str = "lock-alternatives";
const A: NodeId = NodeId(0);
const B: NodeId = NodeId(1);
const LEDGER: NodeId = NodeId(2);
/// Only present for the two methods that need an arbiter.
const JOBS: NodeId = NodeId(3);
const JOB: &str = "2am-debit:account-42";
const OPENING: i64 = 100;
const STEPS: u32 = 2;
const STEP_MS: u64 = 2_000;
const AMOUNT: i64 = 20;
/// Both copies' 2am timers fire somewhere in this window (ms).
const START_JITTER_MS: (u64, u64) = (0, 100);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    UniqueConstraint,
    ConditionalUpdate,
    Partitioning,
}

fn method(params: &Params) -> Method {
    match params.get("method").map(String::as_str) {
        Some("conditional-update") => Method::ConditionalUpdate,
        Some("partitioning") => Method::Partitioning,
        _ => Method::UniqueConstraint,
    }
}

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 2,
        sections: "§5",
        title: "Alternatives to the lock",
        summary: "The 2am job fires on both replicas. A unique key, a conditional update or partitioning by account lets exactly one copy run it — no lease store involved.",
        params: vec![ParamSpec {
            key: "method",
            label: "Method",
            help: "How the two copies end up with exactly one of them doing the job.",
            default: "unique-constraint",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "unique-constraint",
                        label: "unique constraint — INSERT the job's key; a duplicate conflicts",
                    },
                    ChoiceOption {
                        value: "conditional-update",
                        label: "conditional update — pending → running changes one row or none",
                    },
                    ChoiceOption {
                        value: "partitioning",
                        label: "partitioning — account 42's work only reaches replica-A",
                    },
                ],
            },
        }],
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let method = method(params);
    let mut outcome = vec![
        ("max_concurrent_holders".to_string(), json!(1)),
        ("balance".to_string(), json!(OPENING - AMOUNT * i64::from(STEPS))),
        (
            "conflicts".to_string(),
            json!(if method == Method::Partitioning { 0 } else { 1 }),
        ),
    ];
    if method == Method::Partitioning {
        outcome.push(("finished_by".to_string(), json!(["replica-A"])));
    }
    Expectation {
        outcome,
        verdicts: vec![
            ("no-double-debit".to_string(), Verdict::Holds),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

fn names(method: Method) -> Vec<String> {
    let mut names = vec!["replica-A", "replica-B", "ledger"];
    if method != Method::Partitioning {
        names.push("job-db");
    }
    names.into_iter().map(String::from).collect()
}

pub fn setup(params: &Params) -> Setup<LeaseWorld> {
    let method = method(params);
    let names = names(method);
    let plan = |coordination: Coordination| WorkerPlan {
        coordination,
        // The arbiter; with partitioning nobody is asked, so it is never contacted.
        store: if method == Method::Partitioning {
            LEDGER
        } else {
            JOBS
        },
        sink_node: LEDGER,
        sink: Sink::Resource,
        lease: JOB.to_string(),
        job_key: JOB.to_string(),
        ttl_ms: 0,
        heartbeat_ms: 0,
        start_after_ms: START_JITTER_MS,
        retry_ms: 0,
        retry_jitter_ms: 0,
        steps: STEPS,
        step_ms: STEP_MS,
        amount_per_step: AMOUNT,
        // Exactly one copy ever writes, so the writes need no token.
        fencing: Fencing::None,
        on_reject: OnReject::Abort,
        release: None,
        release_in_finally: false,
        touch_on_heartbeat: false,
        check_clock_before_step: false,
        check_progress: false,
    };
    let coordination = |id: NodeId| match method {
        Method::UniqueConstraint => Coordination::UniqueInsert,
        Method::ConditionalUpdate => Coordination::ConditionalClaim,
        // Account 42 hashes to the partition replica-A consumes.
        Method::Partitioning => Coordination::Partition { owns: id == A },
    };
    let worker = |id: NodeId| worker_node(&names[id.index()], plan(coordination(id)));
    let info = |id: NodeId, kind: &str, faults: Vec<FaultKind>| node_info(&names, id, kind, faults);
    let worker_faults = vec![
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Network,
    ];
    let (ledger, ledger_durable) = ledger_node(&names, OPENING);
    let (a, a_d) = worker(A);
    let (b, b_d) = worker(B);
    let mut nodes = vec![
        (info(A, "worker", worker_faults.clone()), a, a_d),
        (info(B, "worker", worker_faults), b, b_d),
        (
            info(LEDGER, "resource", vec![FaultKind::Pause, FaultKind::Network]),
            ledger,
            ledger_durable,
        ),
    ];
    if method != Method::Partitioning {
        let (jobs, jobs_durable) = jobs_node(&names);
        nodes.push((
            info(
                JOBS,
                "job-table",
                vec![
                    FaultKind::Pause,
                    FaultKind::Crash,
                    FaultKind::Restart,
                    FaultKind::Network,
                ],
            ),
            jobs,
            jobs_durable,
        ));
    }
    let world = LeaseWorld {
        names,
        store: None,
        workers: vec![A, B],
        resource: Some(LEDGER),
        rail: None,
        jobs: (method != Method::Partitioning).then_some(JOBS),
        lease: JOB.to_string(),
        opening_balance: OPENING,
        job_total: AMOUNT * i64::from(STEPS),
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
    let mut trace = engine.run(ID, seed, params.clone());
    // With partitioning there is no arbiter and so nothing that could conflict; report the
    // zero so the three methods compare field by field.
    trace.outcome.entry("conflicts".to_string()).or_insert(json!(0));
    Ok(trace)
}
