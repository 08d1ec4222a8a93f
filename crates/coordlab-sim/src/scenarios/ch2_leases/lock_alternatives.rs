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

use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::properties::Verdict;
use crate::protocols::job::Phase;
use crate::protocols::lease::job_table::{JobDurable, JobTable};
use crate::protocols::lease::lease_worker::{Coordination, LeaseWorker, StopReason, WorkerPlan};
use crate::scenarios::common::CLOCKLESS_FAULTS;
use crate::scenarios::lease_setup::{build, choice, worker, LeasePlan, OPENING_BALANCE};
use crate::scenarios::lease_world::LeaseProperty::*;
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "lock-alternatives";
const JOB: &str = "2am-debit:account-42";
const STEPS: u32 = 2;
const AMOUNT: i64 = 20;

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
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Make a job run once with a unique key instead of a lock",
        "Use a conditional update or partitioning so only one copy acts",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "When do you not need a lease at all?",
        answers: &[
            "When the job is slow",
            "Never",
            "When one guarded write (a unique key or a conditional update) is the whole job",
        ],
        correct: 2,
        why: "If the work is a single write, the database's own check already decides who wins.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§5",
        title: "Alternatives to the lock",
        summary: "The 2am job fires on both replicas. A unique key, a conditional update or partitioning by account lets exactly one copy run it — no lease store involved.",
        params: vec![choice(
            "method",
            "Method",
            "How the two copies end up with exactly one of them doing the job.",
            &[
                ("unique-constraint", "unique constraint — INSERT the job's key; a duplicate conflicts"),
                ("conditional-update", "conditional update — pending → running changes one row or none"),
                ("partitioning", "partitioning — account 42's work only reaches replica-A"),
            ],
        )],
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let method = method(params);
    let mut outcome = vec![
        ("max_concurrent_holders".to_string(), json!(1)),
        (
            "balance".to_string(),
            json!(OPENING_BALANCE - AMOUNT * i64::from(STEPS)),
        ),
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

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let method = method(params);
    // Both copies' 2am timers fire within the first 100 ms; each step takes 2 s.
    let plan = |coordination| WorkerPlan {
        steps: STEPS,
        step_ms: 2_000,
        amount_per_step: AMOUNT,
        ..WorkerPlan::without_lease(coordination, JOB)
    };
    let coordination = |is_a: bool| match method {
        Method::UniqueConstraint => Coordination::UniqueInsert,
        Method::ConditionalUpdate => Coordination::ConditionalClaim,
        // Account 42 hashes to the partition replica-A consumes.
        Method::Partitioning => Coordination::Partition { owns: is_a },
    };
    // No lease store; the job table (after the ledger) only for the two methods that need
    // an arbiter. With partitioning there is nothing that could conflict: the world reports
    // zero conflicts so the three methods compare field by field.
    let (mut setup, cast) = build(LeasePlan {
        store: None,
        workers: vec![
            worker("replica-A", plan(coordination(true))),
            worker("replica-B", plan(coordination(false))),
        ],
        // The workers' clocks play no part: nothing here has a lease to time.
        worker_faults: &CLOCKLESS_FAULTS,
        properties: vec![NoDoubleDebit, JobCompletes],
        ..LeasePlan::default()
    });
    let cast = Replicas {
        replicas: [cast.workers[0], cast.workers[1]],
        jobs: cast.jobs,
    };
    beats(&mut setup, method, cast);
    setup
}

/// replica-A and replica-B, and the job table if the method has one.
#[derive(Clone, Copy)]
struct Replicas {
    replicas: [NodeId; 2],
    jobs: Option<NodeId>,
}

fn replica<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a LeaseWorker> {
    n.live::<LeaseWorker>(id)
}

fn jobs<'a>(n: &Nodes<'a>, c: Replicas) -> Option<&'a JobDurable> {
    n.live::<JobTable>(c.jobs?).map(|j| &j.durable)
}

/// The two beats of a guarded write (a unique key, a conditional update): the first copy's
/// write wins (once `won` holds of the job tables), with a question (prompt, answers, the
/// correct one, why), and the second's is turned away.
fn guarded_write(
    setup: &mut Setup,
    c: Replicas,
    (key, title, text): (&'static str, &str, &str),
    won: fn(&JobDurable) -> bool,
    (prompt, answers, correct, why): (&str, &[&str], u8, &str),
    (lost_key, lost_title, lost_text): (&'static str, &str, &str),
) {
    setup
        .beat(key, title, text, move |n, _| jobs(n, c).is_some_and(won))
        .ask(prompt, answers, correct, why);
    setup.beat(lost_key, lost_title, lost_text, move |n, _| {
        jobs(n, c).is_some_and(|j| j.conflicts > 0)
    });
}

fn done_once(n: &Nodes<'_>, c: Replicas) -> bool {
    c.replicas
        .iter()
        .any(|&r| replica(n, r).is_some_and(|w| w.job.finished))
}

fn beats(setup: &mut Setup, method: Method, c: Replicas) {
    setup.beat(
        "fire",
        "2am: the job fires on both replicas",
        "Both copies of the service start the same job within a tenth of a second. There is no lease store.",
        move |n, _| {
            c.replicas
                .iter()
                .all(|&r| replica(n, r).is_some_and(|w| w.phase != Phase::Idle))
        },
    );
    let (moral, moral_text) = (
        "The job runs once: ₹60",
        "Two steps of ₹20, debited by one copy only. No lock was needed.",
    );
    match method {
        Method::UniqueConstraint => guarded_write(
            setup,
            c,
            ("insert", "One INSERT of the job's key wins", "The first insert into job_run creates the row for 2am-debit:account-42. That copy runs the job."),
            |j| !j.runs.is_empty(),
            (
                "The other copy inserts the same key a moment later. What does the database answer?",
                &["A second row for the same job", "A duplicate-key error", "It waits until the first copy finishes"],
                1,
                "The key is the primary key of job_run, so a second row with it cannot exist.",
            ),
            ("conflict", "The second INSERT conflicts", "The primary key turns the late insert away; that copy does nothing."),
        ),
        Method::ConditionalUpdate => guarded_write(
            setup,
            c,
            ("claim", "One UPDATE moves the job to running", "UPDATE job SET state = 'running' WHERE state = 'pending' changes one row for the first copy."),
            |j| !j.claimed_by.is_empty(),
            (
                "The other copy runs the same UPDATE a moment later. How many rows does it change?",
                &["One: it overwrites the first claim", "None: the state is no longer pending", "It blocks until the job is done"],
                1,
                "The WHERE clause is checked against the current row, which now says running.",
            ),
            ("zero-rows", "The second UPDATE changes no row", "Zero rows means another copy has the job, so this one does nothing."),
        ),
        Method::Partitioning => {
            setup
                .beat("routed", "Only replica-A owns account 42", "Account 42 hashes to replica-A's partition. replica-B sees that the work is not its own and stops.", move |n, _| {
                    c.replicas.iter().any(|&r| {
                        replica(n, r).is_some_and(|w| w.phase == Phase::Stopped && w.stop_reason == Some(StopReason::NotMine))
                    })
                })
                .ask(
                    "With no table to arbitrate, what keeps the two copies from both debiting?",
                    &["Luck in the timing", "Only one of them is ever given this account's work", "The ledger rejects the second debit"],
                    1,
                    "Each account belongs to exactly one partition, so there is never a second candidate.",
                );
            setup.beat(
                "works",
                "replica-A runs the job alone",
                "Nothing is claimed and nothing conflicts: replica-A simply starts.",
                move |n, _| {
                    replica(n, c.replicas[0])
                        .is_some_and(|w| matches!(w.phase, Phase::Working { .. } | Phase::Writing { .. }))
                },
            );
        }
    }
    setup.beat("once", moral, moral_text, move |n, _| done_once(n, c));
}
