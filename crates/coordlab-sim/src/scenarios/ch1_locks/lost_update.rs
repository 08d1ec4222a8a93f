//! `lost-update` (curriculum §1–2): two workers each debit ₹30 from a ₹100 balance.
//!
//! With no lock both read ₹100 and both write ₹70; with `SELECT … FOR UPDATE` the second
//! waits for the first to commit and reads ₹70; with a version-checked write the second's
//! stale write is refused and retried. Seeded jitter changes who goes first and every timing,
//! never the outcome: the computing time after a read is always longer than the spread of
//! start times, so both reads land before either write.

use super::db_common::DB_FAULTS;
use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::presentation::amounts::rupees;
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::database::account_db::{AccountDb, DbDurable};
use crate::protocols::database::debit_worker::{DebitPlan, DebitStrategy, DebitWorker, Phase, WorkerDurable};
use crate::protocols::database::sql::ACCOUNT_ID;
use crate::scenarios::common::{always, eventually};
use crate::scenarios::lease_setup::choice;
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

pub const ID: &str = "lost-update";
const OPENING_BALANCE: i64 = 100;
const DEBIT: i64 = 30;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Spot a lost update: two read-modify-write cycles that overlap",
        "See how a row lock makes the second worker wait its turn",
        "Compare the lock with a write that checks a version",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Both workers read ₹100 and write back ₹70. What went wrong?",
        answers: &["The database lost a write", "The second debit was rolled back", "Each write was based on a read the other had already made stale"],
        correct: 2,
        why: "Each worker computed from a value that changed under it, so the second write silently replaced the first.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§1–2",
        title: "Lost update",
        summary: "Two workers each take ₹30 from a ₹100 balance. Without a lock one debit vanishes; a row lock or a version-checked write keeps both.",
        params: vec![choice(
            "lock",
            "Protection",
            "How each worker guards its read-modify-write of the balance.",
            &[
                ("none", "none — plain read, then write"),
                ("row-lock", "row lock — SELECT … FOR UPDATE"),
                ("conditional-update", "conditional update — write only if the version is unchanged"),
            ],
        )],
    }
}

fn strategy(params: &Params) -> DebitStrategy {
    match params.get("lock").map(String::as_str) {
        Some("row-lock") => DebitStrategy::RowLock,
        Some("conditional-update") => DebitStrategy::VersionCheck,
        _ => DebitStrategy::ReadThenWrite,
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let safe = strategy(params) != DebitStrategy::ReadThenWrite;
    let balance = if safe {
        OPENING_BALANCE - 2 * DEBIT
    } else {
        OPENING_BALANCE - DEBIT
    };
    Expectation {
        outcome: vec![("balance".to_string(), json!(balance))],
        verdicts: vec![
            (
                "no-lost-update".to_string(),
                if safe { Verdict::Holds } else { Verdict::Violated },
            ),
            ("every-debit-finishes".to_string(), Verdict::Holds),
        ],
    }
}

/// Properties, tables and outcome of the scenario.
pub struct LostUpdateWorld(DebitCast);

/// The database and the two workers, as the setup added them.
#[derive(Clone, Copy)]
pub struct DebitCast {
    pub db: NodeId,
    pub workers: [NodeId; 2],
}

impl LostUpdateWorld {
    /// The committed row: the live database's, or what it persisted while it is down.
    fn db<'a>(nodes: &Nodes<'a>, db: NodeId) -> &'a DbDurable {
        nodes
            .live::<AccountDb>(db)
            .map(|live| &live.durable)
            .or_else(|| nodes.durable::<AccountDb>(db))
            .expect("the database node hosts an AccountDb")
    }

    fn worker_done(nodes: &Nodes<'_>, id: NodeId) -> bool {
        nodes.durable::<DebitWorker>(id).is_some_and(|d| d.done)
    }
}

impl World for LostUpdateWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            always(
                "no-lost-update",
                "The committed balance equals ₹100 minus ₹30 for every committed debit.",
            ),
            eventually(
                "every-debit-finishes",
                "Both workers eventually finish their debit.",
            ),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        let db = Self::db(nodes, self.0.db);
        out.push(db.row.balance == OPENING_BALANCE - DEBIT * i64::from(db.committed_debits));
        out.push(self.0.workers.iter().all(|w| Self::worker_done(nodes, *w)));
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let db = Self::db(nodes, self.0.db);
        let accounts = TableView {
            title: "accounts".to_string(),
            columns: columns(&["id", "balance", "version", "debits committed"]),
            rows: vec![vec![
                ACCOUNT_ID.to_string(),
                rupees(db.row.balance),
                db.row.version.to_string(),
                db.committed_debits.to_string(),
            ]],
        };
        let (holder, waiters) = match nodes.live::<AccountDb>(self.0.db) {
            Some(live) => (
                live.lock_holder
                    .map_or("—".to_string(), |h| nodes.name(h).to_string()),
                if live.lock_waiters.is_empty() {
                    "—".to_string()
                } else {
                    live.lock_waiters
                        .iter()
                        .map(|w| nodes.name(*w).to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            ),
            None => ("(database down)".to_string(), "—".to_string()),
        };
        let locks = TableView {
            title: "lock manager".to_string(),
            columns: columns(&["row", "held by", "mode", "waiting"]),
            rows: vec![vec![
                format!("accounts#{ACCOUNT_ID}"),
                holder.clone(),
                if holder == "—" {
                    "—".to_string()
                } else {
                    "exclusive".to_string()
                },
                waiters,
            ]],
        };
        let mut txns = TableView {
            title: "workers".to_string(),
            columns: columns(&["worker", "believes balance", "will write", "state"]),
            rows: Vec::new(),
        };
        for w in self.0.workers {
            let name = nodes.name(w).to_string();
            let row = match nodes.live::<DebitWorker>(w) {
                Some(worker) => {
                    let (read, write) = match &worker.phase {
                        Phase::Computing { read_balance, .. } => (rupees(*read_balance), "…".to_string()),
                        Phase::Writing { new_balance } | Phase::Committing { new_balance } => {
                            (rupees(new_balance + worker.plan.amount), rupees(*new_balance))
                        }
                        _ => ("—".to_string(), "—".to_string()),
                    };
                    vec![name, read, write, worker.phase_text()]
                }
                None => vec![name, "—".into(), "—".into(), "down".into()],
            };
            txns.rows.push(row);
        }
        vec![accounts, locks, txns]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let db = Self::db(nodes, self.0.db);
        let mut out = BTreeMap::new();
        out.insert("balance".to_string(), json!(db.row.balance));
        out.insert("committed_debits".to_string(), json!(db.committed_debits));
        out.insert(
            "expected_balance".to_string(),
            json!(OPENING_BALANCE - DEBIT * i64::from(db.committed_debits)),
        );
        if let Some(live) = nodes.live::<AccountDb>(self.0.db) {
            out.insert("lock_waits".to_string(), json!(live.lock_waits));
            out.insert("version_conflicts".to_string(), json!(live.version_conflicts));
        }
        out
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let db = setup.add::<AccountDb>(
        "database",
        "database",
        &DB_FAULTS,
        (),
        AccountDb::initial(OPENING_BALANCE),
    );
    let plan = DebitPlan {
        strategy: strategy(params),
        amount: DEBIT,
        db,
        start_delay_us: (0, 10 * MS_US),
        think_us: (40 * MS_US, 60 * MS_US),
        max_attempts: 5,
    };
    let workers = ["worker-1", "worker-2"].map(|name| {
        setup.add::<DebitWorker>(name, "worker", &DB_FAULTS, plan, WorkerDurable { done: false })
    });
    let cast = DebitCast { db, workers };
    setup.set_world(LostUpdateWorld(cast));
    beats(&mut setup, strategy(params), cast);
    setup
}

/// How many debits the database has committed.
fn committed(nodes: &Nodes<'_>, db: NodeId) -> u32 {
    LostUpdateWorld::db(nodes, db).committed_debits
}

/// A beat at the database's `count`th committed debit: its key, title and text.
fn commit_beat(setup: &mut Setup, db: NodeId, count: u32, [key, title, text]: [&'static str; 3]) {
    setup.beat(key, title, text, move |n, _| committed(n, db) == count);
}

/// Whether worker `id` has read the balance and not yet committed.
fn holds_a_read(nodes: &Nodes<'_>, id: NodeId) -> bool {
    nodes.live::<DebitWorker>(id).is_some_and(|w| {
        matches!(
            w.phase,
            Phase::Computing { .. } | Phase::Writing { .. } | Phase::Committing { .. }
        )
    })
}

/// The story of each variant, told by the database's and the workers' state.
fn beats(setup: &mut Setup, strategy: DebitStrategy, cast: DebitCast) {
    let DebitCast { db, workers } = cast;
    match strategy {
        DebitStrategy::ReadThenWrite => {
            setup.beat(
                "first-read",
                "A worker reads ₹100",
                "One worker reads the balance with a plain SELECT. Nothing is locked.",
                move |n, _| workers.iter().any(|w| holds_a_read(n, *w)),
            );
            setup
                .beat("both-read", "Both have read ₹100", "The second worker reads the same ₹100 before the first has written anything.", move |n, _| {
                    workers.iter().all(|w| holds_a_read(n, *w)) && committed(n, db) == 0
                })
                .ask(
                    "Both workers now hold ₹100 and will each write back 100 − 30. What is the balance after both commit?",
                    &["₹40", "₹70", "₹100"],
                    1,
                    "Each writes the number it computed from its own read, ₹70, so the second commit overwrites the first: one debit vanishes.",
                );
            commit_beat(
                setup,
                db,
                1,
                [
                    "first-commit",
                    "The first debit commits: ₹70",
                    "The first worker's ₹70 is now the committed balance.",
                ],
            );
            commit_beat(
                setup,
                db,
                2,
                [
                    "lost",
                    "The second commit writes ₹70 again",
                    "Two debits are recorded, the balance moved once: a lost update.",
                ],
            );
        }
        DebitStrategy::RowLock => {
            setup.beat(
                "locked",
                "A worker locks the row",
                "SELECT … FOR UPDATE returns the balance together with an exclusive lock on row 42.",
                move |n, _| {
                    n.live::<AccountDb>(db)
                        .is_some_and(|live| live.lock_holder.is_some())
                },
            );
            setup
                .beat("waits", "The other worker waits", "Its SELECT … FOR UPDATE does not return: it queues behind the lock.", move |n, _| {
                    n.live::<AccountDb>(db).is_some_and(|live| !live.lock_waiters.is_empty())
                })
                .ask(
                    "The second worker is blocked. When it finally reads, what balance will it see?",
                    &["₹100", "₹40", "₹70"],
                    2,
                    "The lock is released at the first worker's COMMIT, so the second reads the committed ₹70.",
                );
            // Only where the commit hands the lock to the waiter: a holder that died instead
            // (an injected crash) is rolled back, and the one commit that follows hands over
            // nothing.
            setup.beat(
                "first-commit",
                "The first commits and hands over the lock",
                "₹70 is committed; the waiting SELECT returns ₹70.",
                move |n, _| {
                    committed(n, db) == 1
                        && n.live::<AccountDb>(db)
                            .is_some_and(|live| live.lock_holder.is_some())
                },
            );
            commit_beat(
                setup,
                db,
                2,
                [
                    "second-commit",
                    "The second commits ₹40",
                    "Both debits count: ₹100 − ₹30 − ₹30.",
                ],
            );
        }
        DebitStrategy::VersionCheck => {
            setup.beat(
                "both-read",
                "Both read version 1",
                "Both workers read ₹100 at version 1; nothing is locked.",
                move |n, _| workers.iter().all(|w| holds_a_read(n, *w)) && committed(n, db) == 0,
            );
            commit_beat(
                setup,
                db,
                1,
                [
                    "first-commit",
                    "The first conditional write wins",
                    "Its UPDATE … WHERE version = 1 changes one row: ₹70, version 2.",
                ],
            );
            setup
                .beat("refused", "The stale write changes zero rows", "The second worker's version 1 is out of date, so its write is refused.", move |n, _| {
                    n.live::<AccountDb>(db).is_some_and(|live| live.version_conflicts > 0)
                })
                .ask(
                    "Its write was refused. What should the worker do now?",
                    &["Give up: the debit is lost", "Write ₹70 without the check", "Read again and recompute"],
                    2,
                    "A refused conditional write means the value moved on: read the new balance and try again.",
                );
            commit_beat(
                setup,
                db,
                2,
                [
                    "second-commit",
                    "The retry commits ₹40",
                    "It read ₹70 at version 2 and wrote ₹40: both debits count.",
                ],
            );
        }
    }
}
