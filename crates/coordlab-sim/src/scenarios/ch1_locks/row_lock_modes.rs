//! `row-lock-modes` (curriculum §1): two or three transactions touch customer 1, one after
//! another, each in the mode the learner picks — a plain read, `SELECT … FOR KEY SHARE /
//! FOR SHARE / FOR NO KEY UPDATE / FOR UPDATE`, an `UPDATE` of the name (FOR NO KEY UPDATE) or
//! an `INSERT` of an order that references the customer (its foreign-key check takes
//! FOR KEY SHARE). Each holds its lock for a while and commits; the state panel shows who
//! holds the row in which mode, who waits for whom, and PostgreSQL's conflict table.
//!
//! The curriculum says a child insert takes a shared lock on the parent and contends with
//! updates of it. That is InnoDB (its foreign-key check takes an S lock, which any X lock
//! blocks); in PostgreSQL the check takes FOR KEY SHARE, which waits only for FOR UPDATE (a
//! DELETE or a key change), not for an UPDATE of the name. The beats say both.

use super::db_common::{
    add_client, add_database, client_table, committed, live, lock_table, postgres, wait_for_table,
};
use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::database::db_sql::{customer_row, DbRequest, RowAccess};
use crate::protocols::database::row_lock_db::LockDbDurable;
use crate::protocols::database::row_locks::{LockMode, CONFLICTS};
use crate::protocols::database::txn_client::{Step, TxnClient, TxnPlan};
use crate::scenarios::common::{always, eventually};
use crate::scenarios::{ChoiceOption, Expectation, Listing, ParamKind, ParamSpec, Params};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

pub const ID: &str = "row-lock-modes";
/// When each transaction starts, ms after the run begins.
const START_MS: [u64; 3] = [0, 10, 20];

const OPTIONS: &[(&str, &str)] = &[
    ("read", "SELECT"),
    ("key-share", "FOR KEY SHARE"),
    ("share", "FOR SHARE"),
    ("no-key-update", "FOR NO KEY UPDATE"),
    ("update", "FOR UPDATE"),
    ("update-name", "UPDATE"),
    ("insert-child", "INSERT child"),
];

fn options(with_none: bool) -> Vec<ChoiceOption> {
    let mut out: Vec<ChoiceOption> = OPTIONS
        .iter()
        .map(|(value, label)| ChoiceOption { value, label })
        .collect();
    if with_none {
        out.push(ChoiceOption {
            value: "none",
            label: "none",
        });
    }
    out
}
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Read which row lock modes conflict and which share",
        "Notice that a foreign-key insert takes a lock on the parent row",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Inserting a child row that references a parent takes which lock on the parent?",
        answers: &[
            "None",
            "A shared key lock that blocks deleting the parent",
            "An exclusive lock on the whole table",
        ],
        correct: 1,
        why: "The database must keep the parent from vanishing until the insert commits, so it locks it in a shared mode.",
    },
};

pub fn info() -> Listing {
    let param = |key, label, default, with_none| {
        ParamSpec::new(key, label, "What this transaction does to customer 1: a plain read, one of the four row-lock modes, an update, or an insert of an order that references the customer.", default, ParamKind::Choice { options: options(with_none) })
    };
    Listing {
        sections: "§1",
        title: "Row lock modes",
        summary: "Which row lock modes wait for which, foreign-key inserts included.",
        params: vec![
            param("t1", "Transaction 1", "update-name", false),
            param("t2", "Transaction 2", "insert-child", false),
            param("t3", "Transaction 3", "update", true),
        ],
    }
}

pub fn access(value: &str) -> Option<RowAccess> {
    Some(match value {
        "read" => RowAccess::Read,
        "key-share" => RowAccess::SelectFor(LockMode::KeyShare),
        "share" => RowAccess::SelectFor(LockMode::Share),
        "no-key-update" => RowAccess::SelectFor(LockMode::NoKeyUpdate),
        "update" => RowAccess::SelectFor(LockMode::Update),
        "update-name" => RowAccess::UpdateName,
        "insert-child" => RowAccess::InsertChild,
        _ => return None,
    })
}

/// The transactions' accesses, in order (two or three).
fn accesses(params: &Params) -> Vec<RowAccess> {
    ["t1", "t2", "t3"]
        .iter()
        .filter_map(|k| params.get(*k).and_then(|v| access(v)))
        .collect()
}

fn conflicts(a: RowAccess, b: RowAccess) -> bool {
    matches!((a.lock(), b.lock()), (Some(x), Some(y)) if x.conflicts_with(y))
}

/// Which transactions must wait: each asks while the earlier ones that got the row still
/// hold it.
pub fn expected_waits(accesses: &[RowAccess]) -> Vec<bool> {
    let mut waited: Vec<bool> = Vec::new();
    for (i, a) in accesses.iter().enumerate() {
        let w = (0..i).any(|j| !waited[j] && conflicts(accesses[j], *a));
        waited.push(w);
    }
    waited
}

pub fn expectation(params: &Params) -> Expectation {
    let waits = expected_waits(&accesses(params));
    let mut outcome: Vec<(String, serde_json::Value)> = waits
        .iter()
        .enumerate()
        .map(|(i, w)| (format!("txn_{}_waited", i + 1), json!(*w)))
        .collect();
    outcome.push(("committed".to_string(), json!(waits.len())));
    Expectation {
        outcome,
        verdicts: vec![
            ("holders-compatible".to_string(), Verdict::Holds),
            ("all-commit".to_string(), Verdict::Holds),
        ],
    }
}

pub struct ModesWorld {
    pub db: NodeId,
    pub txns: Vec<NodeId>,
    /// Whether each transaction has waited at some point.
    pub waited: Vec<bool>,
}

impl World for ModesWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            always(
                "holders-compatible",
                "No two transactions hold the row in conflicting modes.",
            ),
            eventually("all-commit", "Every transaction eventually commits."),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        let mut ok = true;
        if let Some(db) = live(nodes, self.db) {
            if let Some(r) = db.locks.rows.get(&customer_row()) {
                for (i, (a, ma)) in r.holders.iter().enumerate() {
                    for (b, mb) in &r.holders[i + 1..] {
                        ok &= a == b || !ma.conflicts_with(*mb);
                    }
                }
            }
            for (i, t) in self.txns.iter().enumerate() {
                if db.pending.contains_key(t) {
                    self.waited[i] = true;
                }
            }
        }
        out.push(ok);
        out.push(
            self.txns
                .iter()
                .all(|t| nodes.durable::<TxnClient>(*t).is_some_and(|d| d.committed == 1)),
        );
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let db = committed(nodes, self.db);
        let customer = TableView {
            title: "customers / orders".to_string(),
            columns: columns(&["customer", "name", "orders"]),
            rows: vec![vec![
                "1".into(),
                db.customer_name.to_string(),
                db.orders.to_string(),
            ]],
        };
        vec![
            wait_for_table(nodes, self.db),
            lock_table(nodes, self.db),
            customer,
            client_table(nodes, &self.txns, "committed"),
            conflict_table(),
        ]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        for (i, w) in self.waited.iter().enumerate() {
            out.insert(format!("txn_{}_waited", i + 1), json!(*w));
        }
        let done = self
            .txns
            .iter()
            .filter(|t| nodes.durable::<TxnClient>(**t).is_some_and(|d| d.committed == 1))
            .count();
        out.insert("committed".to_string(), json!(done));
        out.insert("orders".to_string(), json!(committed(nodes, self.db).orders));
        out
    }
}

/// PostgreSQL's conflict table as the state panel shows it: held mode down, requested across.
pub fn conflict_table() -> TableView {
    let short = |m: LockMode| m.sql().trim_start_matches("FOR ");
    let mut cols = vec!["held \\ asked".to_string()];
    cols.extend(LockMode::ALL.iter().map(|m| short(*m).to_string()));
    TableView {
        title: "row-lock conflicts (PostgreSQL)".to_string(),
        columns: cols,
        rows: LockMode::ALL
            .iter()
            .map(|held| {
                let mut row = vec![short(*held).to_string()];
                row.extend(
                    CONFLICTS[*held as usize]
                        .iter()
                        .map(|c| if *c { "waits" } else { "ok" }.to_string()),
                );
                row
            })
            .collect(),
    }
}

/// What a transaction's statement takes on customer 1, and why.
fn took(access: RowAccess) -> String {
    match access.lock() {
        None => "A plain SELECT takes no row lock: it reads a snapshot.".to_string(),
        Some(m) => format!("It takes {m}: {}.", access.why()),
    }
}

/// Said where a child insert meets a write: PostgreSQL is not InnoDB here.
const FK_VS_INNODB: &str = " InnoDB differs: its check takes a shared lock that any update of the parent blocks, the contention the curriculum describes. Here only FOR UPDATE (a delete, a key change) blocks it.";

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let accesses = accesses(params);
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 2 * MS_US));
    let db = add_database(
        &mut setup,
        postgres(1_000 * MS_US),
        LockDbDurable {
            customer_name: "Asha",
            ..LockDbDurable::default()
        },
    );
    let mut txns = Vec::new();
    for (i, access) in accesses.iter().enumerate() {
        let start = START_MS[i] * MS_US;
        let plan = TxnPlan {
            db,
            program: vec![
                Step::Run(DbRequest::Customer { access: *access }),
                Step::Think(80 * MS_US, 80 * MS_US),
                Step::Run(DbRequest::Commit),
            ],
            start_delay_us: (start, start),
            backoff_us: (10 * MS_US, 20 * MS_US),
            max_retries: 3,
            repeat: false,
            noun: "transaction",
        };
        txns.push(add_client(&mut setup, &format!("txn-{}", i + 1), "client", plan));
    }
    let n = txns.len();
    setup.set_world(ModesWorld {
        db,
        txns: txns.clone(),
        waited: vec![false; n],
    });
    beats(&mut setup, db, txns, &accesses);
    setup
}

fn beats(setup: &mut Setup, db: NodeId, txns: Vec<NodeId>, accesses: &[RowAccess]) {
    let second_waits = expected_waits(accesses)[1];
    let t1 = txns[0];
    setup.beat(
        "first",
        "Transaction 1 has the row",
        &match accesses[0].lock() {
            Some(_) => format!("{} Held until it commits.", took(accesses[0])),
            None => took(accesses[0]),
        },
        move |n, _| super::db_common::client(n, t1).is_some_and(|c| c.pc >= 1),
    );
    let t2 = txns[1];
    let fk = accesses[..2].contains(&RowAccess::InsertChild);
    let second = format!(
        "{} {}{}",
        took(accesses[1]),
        if second_waits {
            "It conflicts with transaction 1's lock, so it waits."
        } else {
            "No conflict with transaction 1: both go ahead."
        },
        if fk { FK_VS_INNODB } else { "" }
    );
    setup
        .beat("second", "Transaction 2 asks", &second, move |n, _| {
            live(n, db).is_some_and(|live| live.pending.contains_key(&t2))
                || super::db_common::client(n, t2).is_some_and(|c| c.pc >= 1)
        })
        .ask(
            "Does transaction 2 have to wait?",
            &["Yes", "No"],
            if second_waits { 0 } else { 1 },
            if second_waits {
                "Their modes conflict: the wait-for panel shows transaction 2 waiting for transaction 1."
            } else {
                "Their modes do not conflict (or one takes no row lock at all), so both go ahead."
            },
        );
    let all = txns.clone();
    setup.beat(
        "all-done",
        "Everyone has committed",
        "Each lock ended with its transaction.",
        move |n, _| {
            all.iter()
                .all(|t| n.durable::<TxnClient>(*t).is_some_and(|d| d.committed == 1))
        },
    );
}
