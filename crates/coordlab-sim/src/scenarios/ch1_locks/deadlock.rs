//! `deadlock` (curriculum §1): two transfers lock two accounts in opposite orders.
//!
//! transfer-1 moves ₹10 from account 1 to account 2 and transfer-2 moves ₹20 from account 2 to
//! account 1, each as two UPDATEs in one transaction with a little work between them. Both
//! take their first row before either asks for its second, so each waits for the other. The
//! database notices when the first waiter's `deadlock_timeout` runs out, aborts it (40P01)
//! and the survivor finishes (the model always aborts that waiter; PostgreSQL's manual says
//! which one it aborts is hard to predict, and the narration says so); the victim rolls back and runs its transfer again. With
//! `order=ordered` both lock the lower account id first: the second simply waits, and no
//! cycle can form.

use super::db_common::{
    add_client, add_database, client, client_table, committed, live, lock_table, postgres, wait_for_table,
};
use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::presentation::amounts::rupees;
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::database::db_sql::DbRequest;
use crate::protocols::database::row_lock_db::{AccountRow, LockDbDurable};
use crate::protocols::database::txn_client::{Step, TxnPlan};
use crate::scenarios::common::{always, eventually};
use crate::scenarios::lease_setup::{choice, millis};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

pub const ID: &str = "deadlock";
pub const OPENING_BALANCE: i64 = 100;
/// (from, to, amount) of each transfer.
pub const TRANSFERS: [(u32, u32, i64); 2] = [(1, 2, 10), (2, 1, 20)];
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Recognise two transactions waiting on each other in a cycle",
        "See the database break the cycle by aborting one",
        "Prevent it by always locking rows in the same order",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "How do you stop two transfers from deadlocking?",
        answers: &[
            "Use a longer lock timeout",
            "Lock the rows in one fixed order, e.g. by account id",
            "Retry every statement twice",
        ],
        correct: 1,
        why: "With one global order no cycle of waits can form, so no deadlock can either.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§1",
        title: "Deadlock",
        summary: "Two transfers lock two rows in opposite orders; the database aborts one.",
        params: vec![
            choice(
                "order",
                "Lock order",
                "Opposite: each transfer locks its source account first, so the two can wait on each other. Lower id first: both lock in one global order, so neither can wait in a cycle.",
                &[
                    ("opposite", "opposite"),
                    ("ordered", "lower id first"),
                ],
            ),
            millis(
                "deadlock_timeout_ms",
                "deadlock_timeout",
                "How long a transaction waits on a lock before the database looks for a cycle (PostgreSQL's deadlock_timeout, 1 s by default).",
                "1000",
                (10, 10_000),
            ),
        ],
    }
}

fn ordered(params: &Params) -> bool {
    params.get("order").is_some_and(|v| v == "ordered")
}

fn deadlock_timeout_us(params: &Params) -> u64 {
    params
        .get("deadlock_timeout_ms")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(1_000)
        .clamp(10, 10_000)
        * MS_US
}

/// The two UPDATEs of transfer `i` in the order it runs them.
pub fn transfer_statements(i: usize, ordered: bool) -> [DbRequest; 2] {
    let (from, to, amount) = TRANSFERS[i];
    let debit = DbRequest::AddToBalance {
        account: from,
        delta: -amount,
    };
    let credit = DbRequest::AddToBalance {
        account: to,
        delta: amount,
    };
    if ordered && to < from {
        [credit, debit]
    } else {
        [debit, credit]
    }
}

/// Account `id`'s balance once both transfers committed.
pub fn final_balance(id: u32) -> i64 {
    TRANSFERS.iter().fold(OPENING_BALANCE, |b, (from, to, amount)| {
        if *from == id {
            b - amount
        } else if *to == id {
            b + amount
        } else {
            b
        }
    })
}

pub fn expectation(params: &Params) -> Expectation {
    let ordered = ordered(params);
    Expectation {
        outcome: vec![
            ("deadlocks".to_string(), json!(if ordered { 0 } else { 1 })),
            ("retries".to_string(), json!(if ordered { 0 } else { 1 })),
            ("balance_1".to_string(), json!(final_balance(1))),
            ("balance_2".to_string(), json!(final_balance(2))),
            ("total".to_string(), json!(2 * OPENING_BALANCE)),
        ],
        verdicts: vec![
            ("money-conserved".to_string(), Verdict::Holds),
            ("both-transfers-commit".to_string(), Verdict::Holds),
        ],
    }
}

/// The database and the two transfers, as the setup added them.
#[derive(Clone, Copy)]
pub struct DeadlockCast {
    pub db: NodeId,
    pub clients: [NodeId; 2],
}

pub struct DeadlockWorld(DeadlockCast);

fn total(db: &LockDbDurable) -> i64 {
    db.accounts.values().map(|a| a.balance).sum()
}

impl World for DeadlockWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            always(
                "money-conserved",
                "The committed balances always add up to ₹200: a transfer commits whole or not at all.",
            ),
            eventually("both-transfers-commit", "Both transfers eventually commit."),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        let db = committed(nodes, self.0.db);
        out.push(total(db) == 2 * OPENING_BALANCE);
        out.push(db.commits == 2);
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let db = committed(nodes, self.0.db);
        let accounts = TableView {
            title: "accounts".to_string(),
            columns: columns(&["id", "balance", "version"]),
            rows: db
                .accounts
                .iter()
                .map(|(id, a)| vec![id.to_string(), rupees(a.balance), a.version.to_string()])
                .collect(),
        };
        vec![
            accounts,
            wait_for_table(nodes, self.0.db),
            lock_table(nodes, self.0.db),
            client_table(nodes, &self.0.clients, "committed"),
        ]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let db = committed(nodes, self.0.db);
        let mut out = BTreeMap::new();
        for (id, a) in &db.accounts {
            out.insert(format!("balance_{id}"), json!(a.balance));
        }
        out.insert("total".to_string(), json!(total(db)));
        out.insert("transfers_committed".to_string(), json!(db.commits));
        let retries: u32 = self
            .0
            .clients
            .iter()
            .filter_map(|c| client(nodes, *c))
            .map(|c| c.retries)
            .sum();
        out.insert("retries".to_string(), json!(retries));
        if let Some(live) = live(nodes, self.0.db) {
            out.insert("deadlocks".to_string(), json!(live.stats.deadlocks));
            out.insert("lock_waits".to_string(), json!(live.stats.lock_waits));
            out.insert("total_wait_ms".to_string(), json!(live.stats.wait_us / MS_US));
        }
        out
    }
}

pub fn initial_db() -> LockDbDurable {
    LockDbDurable {
        accounts: [1, 2]
            .into_iter()
            .map(|id| {
                (
                    id,
                    AccountRow {
                        balance: OPENING_BALANCE,
                        version: 1,
                    },
                )
            })
            .collect(),
        ..LockDbDurable::default()
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let ordered = ordered(params);
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let db = add_database(&mut setup, postgres(deadlock_timeout_us(params)), initial_db());
    let clients = [0, 1].map(|i| {
        let [first, second] = transfer_statements(i, ordered);
        let plan = TxnPlan {
            db,
            program: vec![
                Step::Run(first),
                Step::Think(20 * MS_US, 30 * MS_US),
                Step::Run(second),
                Step::Run(DbRequest::Commit),
            ],
            start_delay_us: (0, 5 * MS_US),
            backoff_us: (10 * MS_US, 20 * MS_US),
            max_retries: 5,
            repeat: false,
            noun: "transfer",
        };
        add_client(&mut setup, &format!("transfer-{}", i + 1), "client", plan)
    });
    let cast = DeadlockCast { db, clients };
    setup.set_world(DeadlockWorld(cast));
    beats(&mut setup, ordered, cast);
    setup
}

fn holds_one_row(nodes: &Nodes<'_>, db: NodeId, id: NodeId) -> bool {
    live(nodes, db).is_some_and(|db| db.locks.holdings(id).len() == 1)
}

fn beats(setup: &mut Setup, ordered: bool, cast: DeadlockCast) {
    let DeadlockCast { db, clients } = cast;
    if ordered {
        setup.beat(
            "first",
            "A transfer locks account 1",
            "Both transfers start with the lower id, account 1; one gets it.",
            move |n, _| clients.iter().any(|c| holds_one_row(n, db, *c)),
        );
        setup
            .beat(
                "waits",
                "The other waits for account 1",
                "It holds nothing yet, so nobody can be waiting for it: a chain, not a circle.",
                move |n, _| super::db_common::someone_waits(n, db),
            )
            .ask(
                "Can these two transfers deadlock?",
                &[
                    "Yes, if the timing is unlucky",
                    "No: whoever waits holds no lock the other needs",
                ],
                1,
                "With one global order, the one that waits has not locked anything the holder will ask for.",
            );
    } else {
        setup.beat(
            "both-hold",
            "Each transfer holds one account",
            "transfer-1 has account 1, transfer-2 has account 2; each now wants the other's.",
            move |n, _| clients.iter().all(|c| holds_one_row(n, db, *c)),
        );
        setup
            .beat(
                "cycle",
                "Each waits for the other",
                "The wait-for graph has a circle: neither can ever move on its own.",
                move |n, _| live(n, db).is_some_and(|live| clients.iter().any(|c| live.locks.cycle_through(*c).is_some())),
            )
            .ask(
                "Both transactions are stuck. What happens next?",
                &["They wait forever", "The database aborts one after deadlock_timeout", "Both are aborted"],
                1,
                "The database sees every waiter. After deadlock_timeout it follows the edges, finds the circle, and aborts one transaction, which one you cannot predict.",
            );
        setup.beat(
            "detected",
            "deadlock detected: one is aborted",
            "One gets SQLSTATE 40P01, its locks go and the other moves on. Which one a real PostgreSQL aborts is not predictable: both must be ready to retry.",
            move |n, _| live(n, db).is_some_and(|live| live.stats.deadlocks > 0),
        );
        setup.beat(
            "retry",
            "The victim runs its transfer again",
            "It rolled back and starts over; the deadlock cost time, not money.",
            move |n, _| {
                clients
                    .iter()
                    .filter_map(|c| client(n, *c))
                    .any(|c| c.retries > 0)
            },
        );
    }
    setup.beat(
        "both-commit",
        "Both transfers are committed",
        "₹110 and ₹90: the total is still ₹200.",
        move |n, _| committed(n, db).commits == 2,
    );
}
