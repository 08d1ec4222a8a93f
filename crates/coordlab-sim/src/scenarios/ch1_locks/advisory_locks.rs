//! `advisory-locks` (curriculum §2): PostgreSQL advisory locks guard two scheduled jobs.
//!
//! worker-1 runs the report job; worker-2 runs an invoice job 10 ms later and then the next
//! three runs of the report. Each run locks `hashtext(name)`: in transaction scope
//! (`pg_try_advisory_xact_lock`, released at COMMIT or ROLLBACK) or session scope
//! (`pg_try_advisory_lock`, released by `pg_advisory_unlock` or when the connection closes).
//! With `names=colliding` the invoice job's name hashes to the report's key, so an unrelated
//! job is refused (or waits). With `first_run=throws` the report's first run throws before
//! its unlock: in session scope the pooled connection keeps the lock until the pool closes it.

use crate::json;
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::database::advisory_db::{AdvisoryDb, AdvisoryDbDurable};
use crate::protocols::database::advisory_sql::{
    key_of, lock_function, Scope, Wait, COLLIDING_INVOICE_JOB, INVOICE_JOB, REPORT_JOB, REPORT_KEY,
};
use crate::protocols::database::advisory_worker::{JobDurable, JobPlan, JobRun, JobWorker, Phase, RunResult};
use crate::scenarios::common::always;
use crate::scenarios::lease_setup::choice;
use crate::scenarios::{Expectation, Listing, Params, VariantDefault};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

pub const ID: &str = "advisory-locks";
/// The pool closes a connection this long after opening it.
pub const POOL_LIFETIME_MS: u64 = 400;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Lock a name when there is no row to lock",
        "Tell transaction-scoped from session-scoped advisory locks",
        "See why a pooled connection can keep a session lock alive",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "A session-scoped advisory lock is taken on a pooled connection and never unlocked. When is it released?",
        answers: &["At the end of the transaction", "After a fixed timeout", "When the pool closes that connection"],
        correct: 2,
        why: "A session lock lives as long as the connection, and a pool keeps connections open long after your code is done.",
    },
};

pub fn info() -> Listing {
    let mut scope = choice(
        "scope",
        "Lock scope",
        "How long the advisory lock lasts.",
        &[
            ("xact", "transaction — released at COMMIT/ROLLBACK"),
            (
                "session",
                "session — until pg_advisory_unlock or the connection closes",
            ),
        ],
    );
    scope.variant_defaults = &[VariantDefault {
        when: ("first_run", "throws"),
        value: "session",
    }];
    Listing {
        sections: "§2",
        title: "Advisory locks",
        summary: "Jobs lock a name's hashtext with PostgreSQL advisory locks: transaction or session scope, two names that collide, a pooled connection that keeps a lock.",
        params: vec![
            choice(
                "names",
                "Job names",
                "Whether the invoice job's name hashes to the report's key.",
                &[
                    ("distinct", "distinct — job:invoice-21143"),
                    ("colliding", "colliding — job:invoice-21142, same hashtext"),
                ],
            ),
            choice(
                "first_run",
                "Report's first run",
                "What the report job's first run does.",
                &[
                    ("completes", "completes and releases its lock"),
                    ("throws", "throws mid-job; its connection goes back to the pool"),
                ],
            ),
            scope,
            choice(
                "wait",
                "When the key is taken",
                "What the lock call does while another session holds the key.",
                &[("try", "pg_try_…: false at once, skip the run"), ("block", "pg_advisory_…: wait")],
            ),
        ],
    }
}

fn is(params: &Params, key: &str, value: &str) -> bool {
    params.get(key).is_some_and(|v| v == value)
}

fn scope(params: &Params) -> Scope {
    if is(params, "scope", "session") {
        Scope::Session
    } else {
        Scope::Xact
    }
}

fn wait(params: &Params) -> Wait {
    if is(params, "wait", "block") {
        Wait::Block
    } else {
        Wait::Try
    }
}

fn invoice_name(params: &Params) -> &'static str {
    if is(params, "names", "colliding") {
        COLLIDING_INVOICE_JOB
    } else {
        INVOICE_JOB
    }
}

/// The session lock outlives the job: it threw, and nothing unlocks.
fn orphaned(params: &Params) -> bool {
    scope(params) == Scope::Session && is(params, "first_run", "throws")
}

pub fn expectation(params: &Params) -> Expectation {
    let colliding = is(params, "names", "colliding");
    let try_ = wait(params) == Wait::Try;
    let mut outcome = vec![
        (
            "invoice_runs_done".to_string(),
            json!(u32::from(!(colliding && try_))),
        ),
        ("unrelated_exclusions".to_string(), json!(u32::from(colliding))),
    ];
    if try_ {
        outcome.push((
            "report_runs_refused".to_string(),
            json!(if orphaned(params) { 2 } else { 0 }),
        ));
    }
    Expectation {
        outcome,
        verdicts: vec![
            (
                "unrelated-jobs-never-exclude".to_string(),
                if colliding {
                    Verdict::Violated
                } else {
                    Verdict::Holds
                },
            ),
            (
                "lock-ends-with-job".to_string(),
                if orphaned(params) {
                    Verdict::Violated
                } else {
                    Verdict::Holds
                },
            ),
        ],
    }
}

/// The database and the two workers, as the setup added them.
#[derive(Clone, Copy)]
pub struct AdvisoryCast {
    pub db: NodeId,
    pub workers: [NodeId; 2],
}

pub struct AdvisoryWorld {
    pub cast: AdvisoryCast,
    pub names: [&'static str; 2],
}

fn db<'a>(nodes: &Nodes<'a>, cast: AdvisoryCast) -> Option<&'a AdvisoryDb> {
    nodes.live::<AdvisoryDb>(cast.db)
}

fn worker<'a>(nodes: &Nodes<'a>, id: NodeId) -> Option<&'a JobWorker> {
    nodes.live::<JobWorker>(id)
}

/// Runs of `name` that ended as `result`, over both workers (crashed ones from disk).
fn count(nodes: &Nodes<'_>, cast: AdvisoryCast, name: &str, result: RunResult) -> u32 {
    cast.workers
        .iter()
        .map(|id| {
            match (
                worker(nodes, *id),
                nodes.durable::<JobWorker>(*id),
                nodes.config::<JobWorker>(*id),
            ) {
                (Some(w), _, _) => w.count(name, result),
                (None, Some(d), Some(plan)) => JobWorker::recover(plan.clone(), d).count(name, result),
                _ => 0,
            }
        })
        .sum()
}

/// A key held by the open connection of a live worker that runs no job: the lock outlived
/// its job. (A connection of a crashed process is the database's to notice, not the job's.)
fn orphan_key(nodes: &Nodes<'_>, cast: AdvisoryCast) -> Option<i64> {
    let db = db(nodes, cast)?;
    db.locks
        .iter()
        .find(|(_, h)| {
            worker(nodes, h.conn.0).is_some_and(|w| w.conn == Some(h.conn.1) && w.running().is_none())
        })
        .map(|(k, _)| *k)
}

impl World for AdvisoryWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            always(
                "unrelated-jobs-never-exclude",
                "No run is refused, or waits, because another job's name holds its key.",
            ),
            always(
                "lock-ends-with-job",
                "No advisory lock stays held after its job's run has ended.",
            ),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        let cast = self.cast;
        out.push(db(nodes, cast).is_none_or(|d| d.stats.unrelated == 0));
        out.push(orphan_key(nodes, cast).is_none());
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let cast = self.cast;
        let mut locks = Vec::new();
        if let Some(d) = db(nodes, cast) {
            for (key, h) in d.locks.iter() {
                let scope = match (h.xact > 0, h.session) {
                    (true, 0) => "transaction".to_string(),
                    (false, 1) => "session".to_string(),
                    (false, n) => format!("session ×{n}"),
                    (true, n) => format!("transaction + session ×{n}"),
                };
                let waiting: Vec<&str> = d
                    .waiters
                    .iter()
                    .filter(|w| w.key == *key)
                    .map(|w| nodes.name(w.conn.0))
                    .collect();
                locks.push(vec![
                    key.to_string(),
                    format!("{} (pid {})", nodes.name(h.conn.0), d.pid(h.conn).unwrap_or(0)),
                    scope,
                    h.names.join(", "),
                    if waiting.is_empty() {
                        "—".to_string()
                    } else {
                        waiting.join(", ")
                    },
                ]);
            }
        }
        if locks.is_empty() {
            locks.push(vec![
                "—".into(),
                "nobody".into(),
                "—".into(),
                "—".into(),
                "—".into(),
            ]);
        }
        let jobs = TableView {
            title: "jobs".to_string(),
            columns: columns(&["job", "hashtext", "done", "refused", "threw"]),
            rows: self
                .names
                .iter()
                .map(|name| {
                    vec![
                        name.to_string(),
                        key_of(name).to_string(),
                        count(nodes, cast, name, RunResult::Done).to_string(),
                        count(nodes, cast, name, RunResult::Refused).to_string(),
                        count(nodes, cast, name, RunResult::Failed).to_string(),
                    ]
                })
                .collect(),
        };
        let workers = TableView {
            title: "workers".to_string(),
            columns: columns(&["worker", "connection", "running", "last statement"]),
            rows: cast
                .workers
                .iter()
                .map(|id| {
                    let name = nodes.name(*id).to_string();
                    let Some(w) = worker(nodes, *id) else {
                        return vec![name, "—".into(), "down".into(), "—".into()];
                    };
                    let conn = match (w.conn, db(nodes, cast)) {
                        (Some(c), Some(d)) => match d.pid((*id, c)) {
                            Some(pid) if w.running().is_some() => format!("pid {pid}, in use"),
                            Some(pid) => format!("pid {pid}, in the pool"),
                            None => "opening".to_string(),
                        },
                        _ => "none".to_string(),
                    };
                    let last = if w.last_sql.is_empty() {
                        "—".to_string()
                    } else {
                        w.last_sql.clone()
                    };
                    vec![name, conn, w.running().unwrap_or("—").to_string(), last]
                })
                .collect(),
        };
        vec![
            TableView {
                title: "advisory locks (pg_locks)".to_string(),
                columns: columns(&["key", "held by", "scope", "for job", "waiting"]),
                rows: locks,
            },
            jobs,
            workers,
        ]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let cast = self.cast;
        let mut out = BTreeMap::new();
        let [report, invoice] = self.names;
        out.insert(
            "report_runs_done".to_string(),
            json!(count(nodes, cast, report, RunResult::Done)),
        );
        out.insert(
            "report_runs_refused".to_string(),
            json!(count(nodes, cast, report, RunResult::Refused)),
        );
        out.insert(
            "report_runs_missed".to_string(),
            json!(count(nodes, cast, report, RunResult::Missed)),
        );
        out.insert(
            "invoice_runs_done".to_string(),
            json!(count(nodes, cast, invoice, RunResult::Done)),
        );
        if let Some(d) = db(nodes, cast) {
            out.insert("unrelated_exclusions".to_string(), json!(d.stats.unrelated));
            out.insert("lock_waits".to_string(), json!(d.stats.waits));
            out.insert(
                "locks_released_at_close".to_string(),
                json!(d.stats.released_at_close),
            );
        }
        out
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        let cast = self.cast;
        // The report's key: who the database says holds it, and who believes it does.
        let granted = db(nodes, cast)
            .and_then(|d| d.locks.get(&REPORT_KEY))
            .map(|h| h.conn.0);
        Holding::of(cast.workers, granted, |id| {
            worker(nodes, id).is_some_and(|w| {
                w.believes_it_holds() && w.running().is_some_and(|n| key_of(n) == REPORT_KEY)
            })
        })
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let throws = is(params, "first_run", "throws");
    let invoice = invoice_name(params);
    let faults = [FaultKind::Crash, FaultKind::Restart, FaultKind::Pause];
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let db = setup.add::<AdvisoryDb>("database", "database", &faults, (), AdvisoryDbDurable::default());
    let plan = |runs: Vec<JobRun>| JobPlan {
        db,
        scope: scope(params),
        wait: wait(params),
        runs,
        jitter_us: 5 * MS_US,
        work_us: (60 * MS_US, 80 * MS_US),
        pool_lifetime_us: POOL_LIFETIME_MS * MS_US,
    };
    let run = |at_ms: u64, name: &'static str, throws: bool| JobRun {
        at_us: at_ms * MS_US,
        name,
        throws,
    };
    let first = setup.add::<JobWorker>(
        "worker-1",
        "worker",
        &faults,
        plan(vec![run(0, REPORT_JOB, throws)]),
        JobDurable::default(),
    );
    let second = setup.add::<JobWorker>(
        "worker-2",
        "worker",
        &faults,
        plan(vec![
            run(10, invoice, false),
            run(150, REPORT_JOB, false),
            run(300, REPORT_JOB, false),
            run(450, REPORT_JOB, false),
        ]),
        JobDurable::default(),
    );
    let cast = AdvisoryCast {
        db,
        workers: [first, second],
    };
    setup.set_world(AdvisoryWorld {
        cast,
        names: [REPORT_JOB, invoice],
    });
    beats(&mut setup, params, cast);
    setup
}

fn report_held(n: &Nodes<'_>, cast: AdvisoryCast) -> bool {
    db(n, cast).is_some_and(|d| d.locks.contains_key(&REPORT_KEY))
}

fn ended(n: &Nodes<'_>, id: NodeId, run: u32) -> Option<RunResult> {
    worker(n, id).and_then(|w| w.results.iter().find(|(i, _)| *i == run).map(|(_, r)| *r))
}

fn beats(setup: &mut Setup, params: &Params, cast: AdvisoryCast) {
    let (scope, wait) = (scope(params), wait(params));
    let colliding = is(params, "names", "colliding");
    let throws = is(params, "first_run", "throws");
    let function = lock_function(scope, wait);
    setup
        .beat(
            "report-locked",
            "worker-1 locks the report job's name",
            &format!("worker-1 calls {function} on hashtext('{REPORT_JOB}'), and it succeeds: the database holds key {REPORT_KEY} for its connection. The lock is on the number, not on the text."),
            move |n, _| report_held(n, cast),
        )
        .ask(
            "What does the database actually lock?",
            &["The text 'job:report-5661'", "The number hashtext returns", "A row of a jobs table"],
            1,
            "hashtext turns the name into a 32-bit integer, widened to the bigint key. Any other name with the same hash asks for the same lock.",
        );
    if colliding {
        let (title, text) = match wait {
            Wait::Try => (
                "The unrelated invoice job is refused",
                "hashtext('job:invoice-21142') is also 1980164416. worker-2 gets false and skips the invoice run, though no invoice run is in progress.",
            ),
            Wait::Block => (
                "The unrelated invoice job waits",
                "hashtext('job:invoice-21142') is also 1980164416, so worker-2's invoice run waits for worker-1's report to release the key.",
            ),
        };
        setup
            .beat("unrelated-excluded", title, text, move |n, _| db(n, cast).is_some_and(|d| d.stats.unrelated > 0))
            .ask(
                "Why is the invoice job kept out?",
                &["Both names hash to the same 32-bit number", "An invoice run is already in progress", "A database allows one advisory lock at a time"],
                0,
                "hashtext has only 2³² values; among about 77,000 names, some two collide more often than not. Integer ids with the two-key form (class, id), or a lock row keyed by the exact name, avoid this.",
            );
    } else {
        setup.beat(
            "both-run",
            "Two jobs, two keys",
            &format!(
                "job:invoice-21143 hashes to {}: worker-2 gets its own lock and both jobs run at once.",
                key_of(INVOICE_JOB)
            ),
            move |n, _| db(n, cast).is_some_and(|d| d.locks.len() == 2),
        );
    }
    match (throws, scope) {
        (true, Scope::Session) => {
            setup
                .beat(
                    "throws-still-held",
                    "The job threw; its lock is still held",
                    "The unlock line never ran, and the pool keeps the connection open without resetting it (DISCARD ALL would unlock): the session holds the report's key with no report running.",
                    move |n, _| ended(n, cast.workers[0], 0) == Some(RunResult::Failed) && report_held(n, cast),
                )
                .ask(
                    "The report run is over. When does the database release its lock?",
                    &["At pg_advisory_unlock on that connection, or when it closes", "Now: the job ended", "At the connection's next COMMIT or ROLLBACK"],
                    0,
                    "A session-scoped lock belongs to the connection, not to a transaction or a job; COMMIT and ROLLBACK leave it alone.",
                );
            setup.beat(
                "next-run-kept-out",
                match wait {
                    Wait::Try => "The next report run is refused",
                    Wait::Block => "The next report run waits",
                },
                "worker-2's run of the report asks for a key held by an idle pooled connection. No report is running.",
                move |n, _| ended(n, cast.workers[1], 1) == Some(RunResult::Refused) || db(n, cast).is_some_and(|d| d.waiters.iter().any(|w| w.name == REPORT_JOB)),
            );
            setup.beat(
                "pool-closes",
                "The pool closes the connection",
                &format!("At its maximum lifetime ({POOL_LIFETIME_MS} ms here; HikariCP's default is 30 minutes) the pool closes worker-1's connection, and the database drops the session's locks."),
                move |n, _| db(n, cast).is_some_and(|d| d.stats.released_at_close > 0),
            );
        }
        (true, Scope::Xact) => {
            setup
                .beat(
                    "throws-rolled-back",
                    "The job threw; ROLLBACK released the lock",
                    "The error path ends the transaction, and a transaction-scoped lock ends with it. Nothing is left for anyone to forget.",
                    // On worker-1's own ROLLBACK answer: a colliding job waiting on the key may
                    // hold it again by then.
                    move |n, _| {
                        ended(n, cast.workers[0], 0) == Some(RunResult::Failed)
                            && worker(n, cast.workers[0]).is_some_and(|w| w.phase != Phase::RollingBack)
                    },
                )
                .ask(
                    "Had it used pg_try_advisory_lock (session scope) instead, when would the lock end?",
                    &["At pg_advisory_unlock, or when the connection closes", "At the same ROLLBACK"],
                    0,
                    "Session locks ignore transaction ends; a pooled connection can keep one for as long as it lives.",
                );
        }
        (false, _) => {
            let how = match scope {
                Scope::Xact => "COMMIT ends the transaction and its lock with it.",
                Scope::Session => {
                    "pg_advisory_unlock returns true: the connection has let go of the key, though the connection itself stays in the pool."
                }
            };
            setup.beat(
                "report-released",
                "The report run ends and releases the key",
                how,
                // On worker-1's own COMMIT or unlock answer: a colliding job waiting on the
                // key may hold it again by then.
                move |n, _| ended(n, cast.workers[0], 0) == Some(RunResult::Done),
            );
        }
    }
    setup.beat(
        "next-report-runs",
        "The next report run gets the lock",
        "worker-2's report run holds the key: no other session has it.",
        move |n, _| {
            worker(n, cast.workers[1])
                .is_some_and(|w| w.running() == Some(REPORT_JOB) && w.believes_it_holds())
        },
    );
}
