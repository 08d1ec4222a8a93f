//! `lock-granularity` (curriculum §1): the blast radius of a lock is decided by the access
//! path. `billing` upgrades one user, found by e-mail, and holds its transaction open for a
//! while; `support` then changes an unrelated user by primary key (`other=update`) or inserts
//! a new one (`other=insert`).
//!
//! The database here is MySQL's InnoDB, because InnoDB's scan locking is what the curriculum
//! warns about; PostgreSQL locks only the rows that match and would make support wait in none
//! of the variants, and the run says so. With no index on `email` the update scans the whole
//! table. At REPEATABLE READ (`isolation`, InnoDB's default) every row it reads keeps a
//! next-key lock and the gap after the last row is locked too, so support's update of user 7
//! and its insert of user 9 both wait. At READ COMMITTED InnoDB lets go of the rows that fail
//! the WHERE and takes no gap locks: nobody waits. With a unique index on `email` the update
//! locks one record and nothing else.

use super::db_common::{add_client, add_database, client_table, committed, live, lock_table, wait_for_table};
use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::database::db_sql::{user_email, user_row, DbRequest, USERS};
use crate::protocols::database::row_lock_db::innodb::Isolation;
use crate::protocols::database::row_lock_db::{LockDbConfig, LockDbDurable};
use crate::protocols::database::row_locks::SUPREMUM;
use crate::protocols::database::txn_client::{Step, TxnClient, TxnPlan};
use crate::scenarios::common::{always, eventually};
use crate::scenarios::lease_setup::choice;
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

pub const ID: &str = "lock-granularity";
pub const USER_COUNT: u32 = 8;
/// The user billing upgrades, the unrelated one support edits, and the one it inserts.
pub const BILLING_TARGET: u32 = 3;
pub const SUPPORT_TARGET: u32 = 7;
pub const NEW_USER: u32 = USER_COUNT + 1;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See that an update with no usable index locks every row it scans",
        "Recognise gap locks that block inserts between rows",
        "Fix it by giving the query an index",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "An UPDATE filters on a column with no index. What does InnoDB lock?",
        answers: &["Only the rows that match", "Nothing until commit", "Every row it scans, and the gaps between them"],
        correct: 2,
        why: "Without an index it must scan the table, and it locks what it scans, so the lock is far wider than asked.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§1",
        title: "Lock granularity",
        summary: "InnoDB: with no index, an update locks every row it scans, and the gaps.",
        params: vec![
            choice(
                "index",
                "Index on email",
                "Without an index the update scans the whole table; with a unique one it goes straight to its row.",
                &[("no", "no"), ("yes", "yes (unique)")],
            ),
            choice(
                "isolation",
                "InnoDB isolation",
                "REPEATABLE READ (InnoDB's default) keeps a lock on every row a scan reads, and on the gaps; READ COMMITTED keeps only the rows that match.",
                &[
                    ("repeatable-read", "REPEATABLE READ"),
                    ("read-committed", "READ COMMITTED"),
                ],
            ),
            choice(
                "other",
                "Support's statement",
                "Support updates user 7 by id, or inserts a new user 9.",
                &[("update", "UPDATE user 7"), ("insert", "INSERT user 9")],
            ),
        ],
    }
}

fn indexed(params: &Params) -> bool {
    params.get("index").is_some_and(|v| v == "yes")
}

fn isolation(params: &Params) -> Isolation {
    match params.get("isolation").map(String::as_str) {
        Some("read-committed") => Isolation::ReadCommitted,
        _ => Isolation::RepeatableRead,
    }
}

fn inserts(params: &Params) -> bool {
    params.get("other").is_some_and(|v| v == "insert")
}

/// Whether billing's scan keeps next-key locks on the whole table (and so support waits).
pub fn whole_table_locked(params: &Params) -> bool {
    !indexed(params) && isolation(params) == Isolation::RepeatableRead
}

pub fn expectation(params: &Params) -> Expectation {
    let whole = whole_table_locked(params);
    Expectation {
        outcome: vec![
            (
                "rows_locked_by_billing".to_string(),
                json!(if whole { USER_COUNT } else { 1 }),
            ),
            ("gap_locked_by_billing".to_string(), json!(whole)),
            ("support_waited".to_string(), json!(whole)),
            ("committed".to_string(), json!(2)),
        ],
        verdicts: vec![
            (
                "unrelated-update-never-waits".to_string(),
                if whole { Verdict::Violated } else { Verdict::Holds },
            ),
            ("both-commit".to_string(), Verdict::Holds),
        ],
    }
}

/// The database and the two transactions, as the setup added them.
#[derive(Clone, Copy)]
pub struct GranularityCast {
    pub db: NodeId,
    pub billing: NodeId,
    pub support: NodeId,
}

pub struct GranularityWorld {
    pub cast: GranularityCast,
    /// The most user rows billing held at once (the gap not counted).
    pub most_locked_by_billing: u32,
    pub gap_locked_by_billing: bool,
    pub support_waited: bool,
}

fn both_committed(nodes: &Nodes<'_>, cast: GranularityCast) -> bool {
    [cast.billing, cast.support]
        .iter()
        .all(|t| nodes.durable::<TxnClient>(*t).is_some_and(|d| d.committed == 1))
}

impl World for GranularityWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            always(
                "unrelated-update-never-waits",
                "Support's statement on another user (an update, or an insert) never waits for billing's.",
            ),
            eventually("both-commit", "Both updates eventually commit."),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        let GranularityCast { db, billing, support } = self.cast;
        if let Some(db) = live(nodes, db) {
            let held = db.locks.holdings(billing);
            let rows = held.iter().filter(|(r, _)| r.id != SUPREMUM).count() as u32;
            self.most_locked_by_billing = self.most_locked_by_billing.max(rows);
            self.gap_locked_by_billing |= rows as usize != held.len();
            self.support_waited |= db.pending.contains_key(&support);
        }
        out.push(!live(nodes, db).is_some_and(|db| db.pending.contains_key(&support)));
        out.push(both_committed(nodes, self.cast));
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let GranularityCast { db, billing, support } = self.cast;
        let rows = committed(nodes, db);
        let holder = |id: u32| {
            live(nodes, db)
                .and_then(|l| l.locks.rows.get(&user_row(id)))
                .and_then(|r| r.holders.first())
                .map_or("—".to_string(), |(t, _)| nodes.name(*t).to_string())
        };
        let users = TableView {
            title: USERS.to_string(),
            columns: columns(&["id", "email", "plan", "locked by"]),
            rows: rows
                .users
                .iter()
                .map(|(id, plan)| vec![id.to_string(), user_email(*id), plan.to_string(), holder(*id)])
                .collect(),
        };
        vec![
            users,
            wait_for_table(nodes, db),
            client_table(nodes, &[billing, support], "committed"),
            lock_table(nodes, db),
        ]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        out.insert(
            "rows_locked_by_billing".to_string(),
            json!(self.most_locked_by_billing),
        );
        out.insert(
            "gap_locked_by_billing".to_string(),
            json!(self.gap_locked_by_billing),
        );
        out.insert("support_waited".to_string(), json!(self.support_waited));
        let done = [self.cast.billing, self.cast.support]
            .iter()
            .filter(|t| nodes.durable::<TxnClient>(**t).is_some_and(|d| d.committed == 1))
            .count();
        out.insert("committed".to_string(), json!(done));
        if let Some(db) = live(nodes, self.cast.db) {
            out.insert("total_wait_ms".to_string(), json!(db.stats.wait_us / MS_US));
        }
        out
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 2 * MS_US));
    let db = add_database(
        &mut setup,
        LockDbConfig {
            deadlock_timeout_us: 1_000 * MS_US,
            email_index: indexed(params),
            innodb: Some(isolation(params)),
        },
        LockDbDurable {
            users: (1..=USER_COUNT).map(|id| (id, "free")).collect(),
            ..LockDbDurable::default()
        },
    );
    let support = if inserts(params) {
        DbRequest::InsertUser {
            id: NEW_USER,
            plan: "team",
        }
    } else {
        DbRequest::UpdateUserById {
            id: SUPPORT_TARGET,
            plan: "team",
        }
    };
    let support_noun = if inserts(params) { "insert" } else { "update" };
    let programs = [
        (
            "billing",
            0,
            DbRequest::UpdateUserByEmail {
                target: BILLING_TARGET,
                plan: "pro",
            },
            100 * MS_US,
            "update",
        ),
        ("support", 15 * MS_US, support, 5 * MS_US, support_noun),
    ];
    let [billing, support] = programs.map(|(name, start, statement, work, noun)| {
        add_client(
            &mut setup,
            name,
            "client",
            TxnPlan {
                db,
                program: vec![
                    Step::Run(statement),
                    Step::Think(work, work),
                    Step::Run(DbRequest::Commit),
                ],
                start_delay_us: (start, start),
                backoff_us: (10 * MS_US, 20 * MS_US),
                max_retries: 3,
                repeat: false,
                noun,
            },
        )
    });
    let cast = GranularityCast { db, billing, support };
    setup.set_world(GranularityWorld {
        cast,
        most_locked_by_billing: 0,
        gap_locked_by_billing: false,
        support_waited: false,
    });
    beats(&mut setup, params, cast);
    setup
}

fn beats(setup: &mut Setup, params: &Params, cast: GranularityCast) {
    let GranularityCast { db, billing, support } = cast;
    let whole = whole_table_locked(params);
    let insert = inserts(params);
    let (title, text) = match (indexed(params), isolation(params)) {
        (true, _) => (
            "Billing locks one row",
            "InnoDB: the unique index on email leads to user 3. One record lock, no gap lock.",
        ),
        (false, Isolation::RepeatableRead) => (
            "Billing locks every row and gap",
            "InnoDB, REPEATABLE READ, no index: the scan keeps a next-key lock (row + the gap before it) on all 8 users, and locks the gap after the last.",
        ),
        (false, Isolation::ReadCommitted) => (
            "Billing keeps one row",
            "InnoDB, READ COMMITTED, no index: the scan read all 8 users but let go of those that failed the WHERE. No gap locks.",
        ),
    };
    let (prompt, why) = match (insert, whole) {
        (false, true) => (
            "Support now updates user 7 by its id. Will it wait?",
            "Billing's scan locked user 7 too, though it changes only user 3.",
        ),
        (false, false) => (
            "Support now updates user 7 by its id. Will it wait?",
            "Billing holds only user 3; user 7 is free.",
        ),
        (true, true) => (
            "Support now inserts a new user 9. Will it wait?",
            "User 9 would go in the gap after user 8, and billing holds that gap.",
        ),
        (true, false) => (
            "Support now inserts a new user 9. Will it wait?",
            "No gap is locked, so the new row can go in.",
        ),
    };
    setup
        .beat("billing-locks", title, text, move |n, _| {
            live(n, db).is_some_and(|db| !db.locks.holdings(billing).is_empty() && db.pending.is_empty())
        })
        .ask(prompt, &["Yes", "No"], if whole { 0 } else { 1 }, why);
    if whole {
        setup.beat(
            "support-waits",
            if insert {
                "Support's insert waits for a gap"
            } else {
                "Support waits for an unrelated row"
            },
            if insert {
                "No user 9 exists, but the gap it goes into is billing's: the insert-intention lock waits. PostgreSQL takes no gap locks and would not wait here."
            } else {
                "Its record lock on user 7 waits for billing's next-key lock. PostgreSQL would not wait here: it locks only the rows that match."
            },
            move |n, _| live(n, db).is_some_and(|db| db.pending.contains_key(&support)),
        );
    } else {
        setup.beat(
            "support-done",
            "Support commits at once",
            if indexed(params) {
                "Nothing of billing's is in the way: the lock was as narrow as the access path."
            } else {
                "Nothing of billing's is in the way: READ COMMITTED kept only the row that matched."
            },
            move |n, _| n.durable::<TxnClient>(support).is_some_and(|d| d.committed == 1),
        );
    }
    setup.beat(
        "both-commit",
        "Both are committed",
        if insert {
            "User 3 is on pro; user 9 is new, on team."
        } else {
            "User 3 is on pro, user 7 on team."
        },
        move |n, _| both_committed(n, cast),
    );
}
