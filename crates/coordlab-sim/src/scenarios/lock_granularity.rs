//! `lock-granularity` (curriculum §1): the blast radius of a lock is decided by the access
//! path. `billing` upgrades one user, found by e-mail, and holds its transaction open for a
//! while; `support` then changes an unrelated user by primary key. With no index on `email`
//! the update has to scan the whole table and — as in MySQL/InnoDB, which this database
//! models here — every row it examines stays locked, so `support` waits. With the index the
//! update goes straight to its row and locks only that one.
//!
//! (PostgreSQL itself locks only the rows that match; InnoDB's behaviour is the one the
//! curriculum warns about, and what `EXPLAIN` on a locking query is for.)

use super::db_common::{client_table, committed, live, lock_table, wait_for_table, DB};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertyKind, PropertySpec, Verdict};
use crate::protocols::db_sql::{user_email, user_row, DbRequest, USERS};
use crate::protocols::row_lock_db::{LockDb, LockDbConfig, LockDbDurable};
use crate::protocols::txn_client::{ClientDurable, Step, TxnClient, TxnPlan};
use crate::trace::{columns, TableView};
use serde_json::json;
use std::collections::BTreeMap;

pub const ID: &str = "lock-granularity";
pub const USER_COUNT: u32 = 8;
/// The user billing upgrades, and the unrelated one support edits.
pub const BILLING_TARGET: u32 = 3;
pub const SUPPORT_TARGET: u32 = 7;
const BILLING: NodeId = NodeId(1);
const SUPPORT: NodeId = NodeId(2);

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 1,
        sections: "§1",
        title: "Lock granularity",
        summary: "With no index, an update locks every row it scans.",
        params: vec![ParamSpec {
            variant_defaults: &[],
            key: "index",
            label: "Index on email",
            help: "Without an index the update scans the table and locks every row it reads; with one it finds and locks only the row it changes.",
            default: "no",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "no",
                        label: "no",
                    },
                    ChoiceOption {
                        value: "yes",
                        label: "yes",
                    },
                ],
            },
        }],
    }
}

fn indexed(params: &Params) -> bool {
    params.get("index").is_some_and(|v| v == "yes")
}

pub fn expectation(params: &Params) -> Expectation {
    let indexed = indexed(params);
    Expectation {
        outcome: vec![
            (
                "rows_locked_by_billing".to_string(),
                json!(if indexed { 1 } else { USER_COUNT }),
            ),
            ("support_waited".to_string(), json!(!indexed)),
            ("committed".to_string(), json!(2)),
        ],
        verdicts: vec![
            (
                "unrelated-update-never-waits".to_string(),
                if indexed {
                    Verdict::Holds
                } else {
                    Verdict::Violated
                },
            ),
            ("both-commit".to_string(), Verdict::Holds),
        ],
    }
}

#[derive(Default)]
pub struct GranularityWorld {
    pub most_locked_by_billing: u32,
    pub support_waited: bool,
}

fn both_committed(nodes: &Nodes<'_>) -> bool {
    [BILLING, SUPPORT]
        .iter()
        .all(|t| nodes.durable::<TxnClient>(*t).is_some_and(|d| d.committed == 1))
}

impl World for GranularityWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            PropertySpec {
                name: "unrelated-update-never-waits",
                kind: PropertyKind::Always,
                description: "Support's update of another user never waits for billing's.",
            },
            PropertySpec {
                name: "both-commit",
                kind: PropertyKind::Eventually,
                description: "Both updates eventually commit.",
            },
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        if let Some(db) = live(nodes) {
            let held = db.locks.holdings(BILLING).len() as u32;
            self.most_locked_by_billing = self.most_locked_by_billing.max(held);
            self.support_waited |= db.pending.contains_key(&SUPPORT);
        }
        out.push(!live(nodes).is_some_and(|db| db.pending.contains_key(&SUPPORT)));
        out.push(both_committed(nodes));
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let db = committed(nodes);
        let holder = |id: u32| {
            live(nodes)
                .and_then(|l| l.locks.rows.get(&user_row(id)))
                .and_then(|r| r.holders.first())
                .map_or("—".to_string(), |(t, _)| nodes.name(*t).to_string())
        };
        let users = TableView {
            title: USERS.to_string(),
            columns: columns(&["id", "email", "plan", "locked by"]),
            rows: db
                .users
                .iter()
                .map(|(id, plan)| vec![id.to_string(), user_email(*id), plan.to_string(), holder(*id)])
                .collect(),
        };
        vec![
            users,
            wait_for_table(nodes),
            client_table(nodes, &[BILLING, SUPPORT], "committed"),
            lock_table(nodes),
        ]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        out.insert(
            "rows_locked_by_billing".to_string(),
            json!(self.most_locked_by_billing),
        );
        out.insert("support_waited".to_string(), json!(self.support_waited));
        let done = [BILLING, SUPPORT]
            .iter()
            .filter(|t| nodes.durable::<TxnClient>(**t).is_some_and(|d| d.committed == 1))
            .count();
        out.insert("committed".to_string(), json!(done));
        if let Some(db) = live(nodes) {
            out.insert("total_wait_ms".to_string(), json!(db.stats.wait_us / MS_US));
        }
        out
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let faults = [
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Network,
    ];
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 2 * MS_US));
    setup.add::<LockDb>(
        "database",
        "database",
        &faults,
        LockDbConfig {
            deadlock_timeout_us: 1_000 * MS_US,
            email_index: indexed(params),
        },
        LockDbDurable {
            users: (1..=USER_COUNT).map(|id| (id, "free")).collect(),
            ..LockDbDurable::default()
        },
    );
    let programs = [
        (
            "billing",
            0,
            DbRequest::UpdateUserByEmail {
                target: BILLING_TARGET,
                plan: "pro",
            },
            100 * MS_US,
        ),
        (
            "support",
            15 * MS_US,
            DbRequest::UpdateUserById {
                id: SUPPORT_TARGET,
                plan: "team",
            },
            5 * MS_US,
        ),
    ];
    for (name, start, statement, work) in programs {
        setup.add::<TxnClient>(
            name,
            "client",
            &faults,
            TxnPlan {
                db: DB,
                program: vec![
                    Step::Run(statement),
                    Step::Think(work, work),
                    Step::Run(DbRequest::Commit),
                ],
                start_delay_us: (start, start),
                backoff_us: (10 * MS_US, 20 * MS_US),
                max_retries: 3,
                repeat: false,
                noun: "update",
            },
            ClientDurable::default(),
        );
    }
    setup.set_world(GranularityWorld::default());
    beats(&mut setup, indexed(params));
    setup
}

fn beats(setup: &mut Setup, indexed: bool) {
    setup
        .beat(
            "billing-locks",
            if indexed {
                "Billing locks one row"
            } else {
                "Billing locks the whole table"
            },
            if indexed {
                "The index leads to user 3: one row lock."
            } else {
                "No index on email: it examined all eight users and holds a lock on each."
            },
            |n, _| live(n).is_some_and(|db| !db.locks.holdings(BILLING).is_empty() && db.pending.is_empty()),
        )
        .ask(
            "Support now updates user 7 by its id. Will it wait?",
            &["Yes", "No"],
            if indexed { 1 } else { 0 },
            if indexed {
                "Billing holds only user 3; user 7 is free."
            } else {
                "Billing's scan locked user 7 too, though it changes only user 3."
            },
        );
    if !indexed {
        setup.beat(
            "support-waits",
            "Support waits for an unrelated row",
            "Its one-row update by primary key queues behind billing's scan.",
            |n, _| live(n).is_some_and(|db| db.pending.contains_key(&SUPPORT)),
        );
    } else {
        setup.beat(
            "support-done",
            "Support commits at once",
            "Different rows, no wait: the lock was as narrow as the access path.",
            |n, _| n.durable::<TxnClient>(SUPPORT).is_some_and(|d| d.committed == 1),
        );
    }
    setup.beat(
        "both-commit",
        "Both updates are committed",
        "User 3 is on pro, user 7 on team.",
        |n, _| both_committed(n),
    );
}
