//! `skip-locked-queue` (curriculum §1): N workers take jobs from one `jobs` table.
//!
//! Each worker claims the first pending job, works on it, marks it done and commits, then
//! claims again until none is left. How the claim locks the row decides how they share the
//! work: `FOR UPDATE SKIP LOCKED` hands each worker a different job at once; plain
//! `FOR UPDATE` makes everyone queue behind the first worker's row; `NOWAIT` makes them fail
//! and retry; a plain SELECT (the planted bug) lets two workers do the same job.

use super::db_common::{
    add_client, add_database, client_errors, client_table, committed, live, lock_table, postgres,
    wait_for_table,
};
use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::database::db_sql::{ClaimLock, DbRequest};
use crate::protocols::database::row_lock_db::{JobRow, LockDbDurable};
use crate::protocols::database::txn_client::{Step, TxnPlan};
use crate::scenarios::common::{always, eventually};
use crate::scenarios::lease_setup::{choice, count};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

pub const ID: &str = "skip-locked-queue";
/// Jobs in the table at the start.
pub const JOBS: u32 = 6;
pub const MAX_WORKERS: u32 = 5;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Use a table as a job queue that several workers drain",
        "Compare SKIP LOCKED, plain FOR UPDATE and NOWAIT when rows are taken",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Two workers claim jobs with FOR UPDATE SKIP LOCKED. What does the second one do when the first job is locked?",
        answers: &["Takes the next unlocked job", "Waits for the first worker to commit", "Fails with an error"],
        correct: 0,
        why: "SKIP LOCKED passes over rows someone else holds, so workers spread out instead of queueing.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§1",
        title: "A job queue in a table",
        summary: "Workers claim jobs from a table: SKIP LOCKED, FOR UPDATE or NOWAIT.",
        params: vec![
            choice(
                "claim",
                "Claim",
                "How a claim locks its job.",
                &[
                    ("skip-locked", "SKIP LOCKED"),
                    ("for-update", "FOR UPDATE"),
                    ("nowait", "NOWAIT"),
                    ("plain", "no lock (bug)"),
                ],
            ),
            count(
                "workers",
                "Workers",
                "How many workers claim jobs from the table at the same time.",
                "3",
                (2, MAX_WORKERS as i64),
            ),
        ],
    }
}

pub fn claim_lock(params: &Params) -> ClaimLock {
    match params.get("claim").map(String::as_str) {
        Some("for-update") => ClaimLock::ForUpdate,
        Some("nowait") => ClaimLock::NoWait,
        Some("plain") => ClaimLock::None,
        _ => ClaimLock::SkipLocked,
    }
}

fn workers(params: &Params) -> u32 {
    params
        .get("workers")
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(3)
        .clamp(2, MAX_WORKERS)
}

pub fn expectation(params: &Params) -> Expectation {
    let lock = claim_lock(params);
    let mut outcome = vec![("jobs_done".to_string(), json!(JOBS))];
    if lock == ClaimLock::SkipLocked {
        outcome.push(("errors".to_string(), json!(0)));
        outcome.push(("lock_waits".to_string(), json!(0)));
    }
    if lock == ClaimLock::ForUpdate {
        outcome.push(("errors".to_string(), json!(0)));
    }
    if lock == ClaimLock::NoWait {
        outcome.push(("lock_waits".to_string(), json!(0)));
    }
    Expectation {
        outcome,
        verdicts: vec![
            (
                "no-job-done-twice".to_string(),
                if lock == ClaimLock::None {
                    Verdict::Violated
                } else {
                    Verdict::Holds
                },
            ),
            ("every-job-done".to_string(), Verdict::Holds),
        ],
    }
}

/// Properties, tables and outcome of the scenario.
pub struct QueueWorld {
    pub db: NodeId,
    pub workers: Vec<NodeId>,
}

fn jobs_done(nodes: &Nodes<'_>, db: NodeId) -> u32 {
    committed(nodes, db).jobs.values().filter(|j| j.done).count() as u32
}

fn done_twice(nodes: &Nodes<'_>, db: NodeId) -> u32 {
    committed(nodes, db).jobs.values().filter(|j| j.runs > 1).count() as u32
}

impl World for QueueWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            always("no-job-done-twice", "No job's work is committed more than once."),
            eventually("every-job-done", "Every job in the table is eventually done."),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        out.push(done_twice(nodes, self.db) == 0);
        out.push(jobs_done(nodes, self.db) == JOBS);
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let db = committed(nodes, self.db);
        let locks = live(nodes, self.db);
        let jobs = TableView {
            title: "jobs".to_string(),
            columns: columns(&["id", "status", "runs", "locked by"]),
            rows: db
                .jobs
                .iter()
                .map(|(id, j)| {
                    let holder = locks
                        .and_then(|l| {
                            l.locks
                                .rows
                                .get(&crate::protocols::database::db_sql::job_row(*id))
                        })
                        .and_then(|r| r.holders.first())
                        .map_or("—".to_string(), |(t, _)| nodes.name(*t).to_string());
                    vec![
                        id.to_string(),
                        if j.done { "done" } else { "pending" }.to_string(),
                        j.runs.to_string(),
                        holder,
                    ]
                })
                .collect(),
        };
        vec![
            jobs,
            client_table(nodes, &self.workers, "jobs done"),
            wait_for_table(nodes, self.db),
            lock_table(nodes, self.db),
        ]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        out.insert("jobs_done".to_string(), json!(jobs_done(nodes, self.db)));
        out.insert("jobs_done_twice".to_string(), json!(done_twice(nodes, self.db)));
        out.insert("errors".to_string(), json!(client_errors(nodes, &self.workers)));
        if let Some(db) = live(nodes, self.db) {
            out.insert("lock_waits".to_string(), json!(db.stats.lock_waits));
            out.insert("total_wait_ms".to_string(), json!(db.stats.wait_us / MS_US));
            out.insert("rows_skipped".to_string(), json!(db.stats.skipped));
            out.insert(
                "last_job_committed_at_ms".to_string(),
                json!(db.stats.last_write_commit_us / MS_US),
            );
        }
        out
    }
}

/// The database's starting rows: `JOBS` pending jobs.
pub fn initial_db() -> LockDbDurable {
    LockDbDurable {
        jobs: (1..=JOBS)
            .map(|id| (id, JobRow { done: false, runs: 0 }))
            .collect(),
        ..LockDbDurable::default()
    }
}

/// A worker's program: claim, work, mark done, commit.
pub fn worker_program(lock: ClaimLock) -> Vec<Step> {
    vec![
        Step::Run(DbRequest::ClaimJob { lock }),
        Step::Think(40 * MS_US, 60 * MS_US),
        Step::Run(DbRequest::FinishJob { id: 0 }),
        Step::Run(DbRequest::Commit),
    ]
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let lock = claim_lock(params);
    let n = workers(params);
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let db = add_database(&mut setup, postgres(1_000 * MS_US), initial_db());
    let plan = TxnPlan {
        db,
        program: worker_program(lock),
        start_delay_us: (0, 5 * MS_US),
        backoff_us: (10 * MS_US, 20 * MS_US),
        max_retries: 100,
        repeat: true,
        noun: "job",
    };
    let ids: Vec<NodeId> = (1..=n)
        .map(|i| add_client(&mut setup, &format!("worker-{i}"), "worker", plan.clone()))
        .collect();
    setup.set_world(QueueWorld {
        db,
        workers: ids.clone(),
    });
    beats(&mut setup, lock, db, ids);
    setup
}

/// Workers that hold a claimed job right now.
fn working(nodes: &Nodes<'_>, ids: &[NodeId]) -> usize {
    ids.iter()
        .filter_map(|id| super::db_common::client(nodes, *id))
        .filter(|c| c.claimed.is_some() && !c.done)
        .count()
}

fn beats(setup: &mut Setup, lock: ClaimLock, db: NodeId, ids: Vec<NodeId>) {
    let first = ids.clone();
    setup.beat(
        "first-claim",
        "A worker claims job 1",
        if lock == ClaimLock::None {
            "The first claim returns the first pending job. A plain SELECT locks nothing."
        } else {
            "The first claim locks the first pending job and returns it."
        },
        move |n, _| working(n, &first) >= 1,
    );
    match lock {
        ClaimLock::SkipLocked => {
            let all = ids.clone();
            setup
                .beat(
                    "all-working",
                    "Every worker has its own job",
                    "Each claim skipped the rows others hold: all workers work at once, nobody waits.",
                    move |n, _| working(n, &all) == all.len(),
                )
                .ask(
                    "The workers ran the same SELECT at the same moment. Why did each get a different job?",
                    &["Luck of timing", "SKIP LOCKED passes over rows another transaction holds", "The table hands out jobs round-robin"],
                    1,
                    "Each claim locks the first pending row nobody holds; rows already locked are skipped, not waited for.",
                );
        }
        ClaimLock::ForUpdate => {
            setup
                .beat(
                    "queue",
                    "The others wait behind job 1",
                    "They all asked for the same first pending row; FOR UPDATE makes them queue for it.",
                    move |n, _| super::db_common::someone_waits(n, db),
                )
                .ask(
                    "Job 1's worker commits. What does the next waiting worker get?",
                    &["Job 1 again", "An error", "Job 2: job 1 is done when it re-checks"],
                    2,
                    "After the wait the database re-checks status='pending' on the new row version: job 1 no longer matches, so the claim moves on.",
                );
        }
        ClaimLock::NoWait => {
            let all = ids.clone();
            setup.beat(
                "refused",
                "A claim fails with 55P03",
                "NOWAIT does not queue: the worker gets \"could not obtain lock on row\" and must retry.",
                move |n, _| super::db_common::client_errors(n, &all) > 0,
            );
        }
        ClaimLock::None => {
            setup
                .beat(
                    "same-job",
                    "Two workers hold job 1",
                    "A plain SELECT locks nothing: two workers read the same pending job.",
                    {
                        let all = ids.clone();
                        move |n, _| {
                            all.iter()
                                .filter_map(|id| super::db_common::client(n, *id))
                                .filter(|c| c.claimed == Some(1) && !c.done)
                                .count()
                                >= 2
                        }
                    },
                )
                .ask(
                    "Both will mark job 1 done. How many times does the job's work happen?",
                    &["Once", "Twice"],
                    1,
                    "Both workers do the work and both updates commit; nothing stopped the second.",
                );
            setup.beat(
                "twice",
                "Job 1 is done twice",
                "A second UPDATE of job 1 committed. It has no status check, so it ran though job 1 was already done: runs = 2.",
                move |n, _| done_twice(n, db) > 0,
            );
        }
    }
    setup.beat(
        "all-done",
        "Every job is done",
        "The table has no pending job left.",
        move |n, _| jobs_done(n, db) == JOBS,
    );
}
