//! `duplicate-job` (curriculum §1 and §3): the service runs as two replicas for redundancy,
//! and the nightly 2am job is scheduled on both. Each copy's timer fires with a little
//! jitter, and the job debits ₹30 from account 42 once.
//!
//! With no lock both copies run it and the account is debited twice (₹100 → ₹40). With a
//! lease, whichever copy reaches the store first inserts the row and runs the job; the other
//! is told the lease is held and backs off for good (no retry), so the debit happens once
//! (₹100 → ₹70). The job takes far longer than the spread of start times, so the second
//! copy always asks while the first still holds the lease — whichever copy wins.
//!
//! A lease only stops the runs from overlapping. A copy that fires late, after the first has
//! finished and let go (`--actions '2@pause:2:5000'` freezes replica-B for 5 s), finds the
//! lease free and runs the job again. `lease-and-run-key` adds the real fix: after the
//! lease, each copy inserts the run's key (the job and its date) into a job table whose
//! unique constraint lets one insert per run win, so the late copy finds the run taken.

use super::lease_setup::{build, choice, chosen, holds_if, worker, LeasePlan, OPENING_BALANCE};
use super::lease_world::LeaseProperty::*;
use super::{Expectation, Params, ScenarioInfo};
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::properties::Verdict;
use crate::protocols::fenced_resource::FencedResource;
use crate::protocols::job_table::JobTable;
use crate::protocols::lease_worker::{Coordination, Fencing, LeaseWorker, Phase, WorkerPlan};
use serde_json::json;

pub const ID: &str = "duplicate-job";
const DEBIT: i64 = 30;
/// The run's key: the job and the date it runs for.
const RUN_KEY: &str = "nightly-debit:2025-03-14";

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 2,
        sections: "§1, §3",
        title: "Duplicate 2am job",
        summary: "Two replicas of a service both run the nightly job that debits ₹30. With nothing in between, the account is debited twice; with a lease, the copy that asks second is turned away — but only while the first holds it. A copy that fires after the first let go runs the job again, unless each run also claims a key of its own.",
        params: vec![choice(
            "lock",
            "Coordination",
            "What the two copies of the job do before starting work.",
            &[
                ("none", "none — each copy just runs the job"),
                ("lease", "lease — insert the lease row first; if it exists, back off"),
                (
                    "lease-and-run-key",
                    "lease and run key — also insert the run's key; a conflict means it already ran",
                ),
            ],
        )],
    }
}

fn uses_lease(params: &Params) -> bool {
    !chosen(params, "lock", "none")
}

pub fn expectation(params: &Params) -> Expectation {
    let lease = uses_lease(params);
    let runs = if lease { 1 } else { 2 };
    Expectation {
        outcome: vec![
            ("balance".to_string(), json!(OPENING_BALANCE - DEBIT * runs)),
            ("max_concurrent_holders".to_string(), json!(runs)),
        ],
        verdicts: vec![
            ("no-double-debit".to_string(), holds_if(lease)),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let plan = WorkerPlan {
        coordination: if uses_lease(params) {
            Coordination::Lease
        } else {
            Coordination::None
        },
        // Each copy's 2am timer fires somewhere in this window (ms).
        start_after_ms: (0, 300),
        // Denied means another copy is running the job: back off for good.
        retry_ms: 0,
        // One step, much longer than the start jitter, so the copies always overlap.
        steps: 1,
        step_ms: 2_000,
        amount_per_step: DEBIT,
        // Fencing is the subject of a later chapter; here the lease alone decides.
        fencing: Fencing::None,
        check_progress: false,
        run_key: chosen(params, "lock", "lease-and-run-key").then(|| RUN_KEY.to_string()),
        ..WorkerPlan::leased("job:nightly-debit")
    };
    let mut setup = build(LeasePlan {
        workers: vec![worker("replica-A", plan.clone()), worker("replica-B", plan)],
        properties: vec![NoDoubleDebit, JobCompletes],
        explain_double_runs: true,
        ..LeasePlan::default()
    });
    beats(&mut setup, params);
    setup
}

const REPLICAS: [NodeId; 2] = [NodeId(1), NodeId(2)];
const LEDGER: NodeId = NodeId(3);
const JOBS: NodeId = NodeId(4);

fn replica<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a LeaseWorker> {
    n.live::<LeaseWorker>(id)
}

fn debits(n: &Nodes<'_>) -> usize {
    n.live::<FencedResource>(LEDGER)
        .map_or(0, |r| r.durable.writes.iter().filter(|w| w.accepted).count())
}

/// A replica that finished the job and has let go of the lease.
fn finished_and_let_go(n: &Nodes<'_>) -> bool {
    REPLICAS
        .iter()
        .any(|&r| replica(n, r).is_some_and(|w| w.finished && w.phase == Phase::Done))
}

fn beats(setup: &mut Setup, params: &Params) {
    setup.beat(
        "fire",
        "2am: the job fires on both replicas",
        "Each replica's timer fires within the same few hundred milliseconds.",
        |n, _| {
            REPLICAS
                .iter()
                .all(|&r| replica(n, r).is_some_and(|w| w.phase != Phase::Idle))
        },
    );
    if !uses_lease(params) {
        setup
            .beat(
                "first-debit",
                "One copy debits ₹30",
                "Nothing stops either copy: the first one to finish debits the account.",
                |n, _| debits(n) == 1,
            )
            .ask(
                "The other copy is still running the same job. What happens when it finishes?",
                &[
                    "It sees the debit and skips",
                    "It debits ₹30 again",
                    "The ledger refuses it",
                ],
                1,
                "Neither copy checks anything before or while it works, so both write.",
            );
        setup.beat(
            "second-debit",
            "The other copy debits again: ₹40",
            "The job ran twice and the account lost ₹60 instead of ₹30.",
            |n, _| debits(n) == 2,
        );
        return;
    }
    setup
        .beat(
            "lease",
            "One replica gets the lease",
            "Its INSERT of the lease row arrives first, so it holds the lease and starts the job.",
            |n, _| REPLICAS.iter().any(|&r| replica(n, r).is_some_and(|w| w.belief.is_some())),
        )
        .ask(
            "The other replica asks for the same lease a moment later. What does it do?",
            &["It gets its own lease and runs too", "It finds the lease held and backs off", "It waits, then runs the job after the first"],
            1,
            "The row exists and has not expired, so its insert changes nothing; with no retry configured it gives up for tonight.",
        );
    setup.beat(
        "backs-off",
        "The other replica backs off",
        "The lease is held: the job is running right now, so this copy does nothing.",
        |n, _| {
            REPLICAS
                .iter()
                .any(|&r| replica(n, r).is_some_and(|w| w.phase == Phase::GaveUp))
        },
    );
    let with_key = chosen(params, "lock", "lease-and-run-key");
    if with_key {
        setup.beat(
            "run-key",
            "The run key is claimed",
            "The lease holder also inserts nightly-debit:2025-03-14 into the job table. That row stays after the lease is gone.",
            |n, _| n.live::<JobTable>(JOBS).is_some_and(|j| !j.durable.runs.is_empty()),
        );
    }
    setup.beat(
        "debit",
        "The job debits ₹30 once",
        "Only the lease holder runs the job: the account goes from ₹100 to ₹70.",
        |n, _| debits(n) == 1,
    );
    let (title, text) = if with_key {
        (
            "The lease is released; the run key stays",
            "A replica that fired late would get the lease, then fail to insert the run key, and do nothing.",
        )
    } else {
        (
            "The lease is released and forgets the run",
            "A lease only keeps runs from overlapping. A replica firing now would find it free and debit again.",
        )
    };
    setup.beat("released", title, text, |n, _| finished_and_let_go(n));
}
