//! `lost-update` (curriculum §1–2): two workers each debit ₹30 from a ₹100 balance.
//!
//! With no lock both read ₹100 and both write ₹70; with `SELECT … FOR UPDATE` the second
//! waits for the first to commit and reads ₹70; with a version-checked write the second's
//! stale write is refused and retried. Seeded jitter changes who goes first and every timing,
//! never the outcome: the computing time after a read is always longer than the spread of
//! start times, so both reads land before either write.

use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::engine::{Engine, Limits, Nodes, Recording, Setup, World};
use crate::kernel::faults::{Action, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::properties::{PropertyKind, PropertySpec, Verdict};
use crate::protocols::account_db::{AccountDb, DbDurable};
use crate::protocols::debit_worker::{
    DebitPlan, DebitStrategy, DebitWorker, Phase, WorkerDurable, WorkerTimer,
};
use crate::protocols::sql::{rupees, SqlMsg, ACCOUNT_ID};
use crate::trace::{NodeInfo, TableView, Trace};
use serde_json::json;
use std::collections::BTreeMap;

pub const ID: &str = "lost-update";
const OPENING_BALANCE: i64 = 100;
const DEBIT: i64 = 30;
const DB: NodeId = NodeId(0);
const WORKERS: [NodeId; 2] = [NodeId(1), NodeId(2)];

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 1,
        sections: "§1–2",
        title: "Lost update",
        summary: "Two workers each take ₹30 from a ₹100 balance. Without a lock one debit vanishes; a row lock or a version-checked write keeps both.",
        params: vec![ParamSpec {
            key: "lock",
            label: "Protection",
            help: "How each worker guards its read-modify-write of the balance.",
            default: "none",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption { value: "none", label: "none — plain read, then write" },
                    ChoiceOption { value: "row-lock", label: "row lock — SELECT … FOR UPDATE" },
                    ChoiceOption { value: "conditional-update", label: "conditional update — write only if the version is unchanged" },
                ],
            },
        }],
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

/// The participants of this scenario.
#[derive(Clone, Debug)]
pub enum LostUpdateNode {
    Db(AccountDb),
    Worker(DebitWorker),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LostUpdateDurable {
    Db(DbDurable),
    Worker(WorkerDurable),
}

impl From<WorkerDurable> for LostUpdateDurable {
    fn from(d: WorkerDurable) -> Self {
        LostUpdateDurable::Worker(d)
    }
}

impl From<DbDurable> for LostUpdateDurable {
    fn from(d: DbDurable) -> Self {
        LostUpdateDurable::Db(d)
    }
}

fn names() -> Vec<String> {
    vec![
        "database".to_string(),
        "worker-1".to_string(),
        "worker-2".to_string(),
    ]
}

impl Participant for LostUpdateNode {
    type Msg = SqlMsg;
    type Timer = WorkerTimer;
    type Durable = LostUpdateDurable;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        match self {
            LostUpdateNode::Db(db) => ctx.note(format!(
                "The database holds account {ACCOUNT_ID} with a committed balance of {}.",
                rupees(db.durable.row.balance)
            )),
            LostUpdateNode::Worker(w) => {
                if !w.done {
                    ctx.note(format!(
                        "{} is scheduled to take {} from account {ACCOUNT_ID}.",
                        w.name,
                        rupees(w.plan.amount)
                    ));
                }
                w.start(ctx);
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: SqlMsg) {
        match self {
            LostUpdateNode::Db(db) => {
                if let SqlMsg::Request(request) = msg {
                    db.handle(ctx, from, request);
                }
            }
            LostUpdateNode::Worker(w) => w.reply(ctx, from, msg),
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: WorkerTimer) {
        if let LostUpdateNode::Worker(w) = self {
            w.timer(ctx, timer);
        }
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        if let LostUpdateNode::Db(db) = self {
            db.connection_lost(ctx, peer);
        }
    }

    fn watches(&self, peer: NodeId) -> bool {
        matches!(self, LostUpdateNode::Db(db) if db.watches(peer))
    }

    fn recover(_id: NodeId, durable: &LostUpdateDurable) -> Self {
        match durable {
            LostUpdateDurable::Db(d) => LostUpdateNode::Db(AccountDb::recover(d, names())),
            LostUpdateDurable::Worker(d) => LostUpdateNode::Worker(DebitWorker::recover(d)),
        }
    }

    fn summary(&self, _local_now_us: u64) -> Vec<String> {
        match self {
            LostUpdateNode::Db(db) => db.summary(),
            LostUpdateNode::Worker(w) => w.summary(),
        }
    }

    fn durable_summary(durable: &LostUpdateDurable) -> Vec<String> {
        match durable {
            LostUpdateDurable::Db(d) => vec![
                "down".to_string(),
                format!("on disk: balance {}", rupees(d.row.balance)),
            ],
            LostUpdateDurable::Worker(d) => {
                vec![
                    "down".to_string(),
                    if d.done {
                        "debit done".to_string()
                    } else {
                        "debit not done".to_string()
                    },
                ]
            }
        }
    }
}

/// Properties, tables and outcome of the scenario.
pub struct LostUpdateWorld;

impl LostUpdateWorld {
    fn db(nodes: &Nodes<'_, LostUpdateNode>) -> DbDurable {
        match (&nodes.live[DB.index()], &nodes.durable[DB.index()]) {
            (Some(LostUpdateNode::Db(db)), _) => db.durable.clone(),
            (_, LostUpdateDurable::Db(d)) => d.clone(),
            _ => unreachable!("node 0 is the database"),
        }
    }

    fn worker_done(nodes: &Nodes<'_, LostUpdateNode>, id: NodeId) -> bool {
        matches!(&nodes.durable[id.index()], LostUpdateDurable::Worker(d) if d.done)
    }
}

impl World for LostUpdateWorld {
    type Node = LostUpdateNode;

    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            PropertySpec {
                name: "no-lost-update",
                kind: PropertyKind::Always,
                description: "The committed balance equals ₹100 minus ₹30 for every committed debit.",
            },
            PropertySpec {
                name: "every-debit-finishes",
                kind: PropertyKind::Eventually,
                description: "Both workers eventually finish their debit.",
            },
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_, LostUpdateNode>, out: &mut Vec<bool>) {
        let db = Self::db(nodes);
        out.push(db.row.balance == OPENING_BALANCE - DEBIT * i64::from(db.committed_debits));
        out.push(WORKERS.iter().all(|w| Self::worker_done(nodes, *w)));
    }

    fn tables(&self, nodes: &Nodes<'_, LostUpdateNode>) -> Vec<TableView> {
        let db = Self::db(nodes);
        let accounts = TableView {
            title: "accounts".to_string(),
            columns: vec![
                "id".into(),
                "balance".into(),
                "version".into(),
                "debits committed".into(),
            ],
            rows: vec![vec![
                ACCOUNT_ID.to_string(),
                rupees(db.row.balance),
                db.row.version.to_string(),
                db.committed_debits.to_string(),
            ]],
        };
        let names = names();
        let (holder, waiters) = match &nodes.live[DB.index()] {
            Some(LostUpdateNode::Db(live)) => (
                live.lock_holder
                    .map_or("—".to_string(), |h| names[h.index()].clone()),
                if live.lock_waiters.is_empty() {
                    "—".to_string()
                } else {
                    live.lock_waiters
                        .iter()
                        .map(|w| names[w.index()].clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            ),
            _ => ("(database down)".to_string(), "—".to_string()),
        };
        let locks = TableView {
            title: "lock manager".to_string(),
            columns: vec!["row".into(), "held by".into(), "mode".into(), "waiting".into()],
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
            columns: vec![
                "worker".into(),
                "believes balance".into(),
                "will write".into(),
                "state".into(),
            ],
            rows: Vec::new(),
        };
        for w in WORKERS {
            let row = match &nodes.live[w.index()] {
                Some(LostUpdateNode::Worker(worker)) => {
                    let (read, write) = match &worker.phase {
                        Phase::Computing { read_balance, .. } => (rupees(*read_balance), "…".to_string()),
                        Phase::Writing { new_balance } | Phase::Committing { new_balance } => {
                            (rupees(new_balance + worker.plan.amount), rupees(*new_balance))
                        }
                        _ => ("—".to_string(), "—".to_string()),
                    };
                    vec![names[w.index()].clone(), read, write, worker.summary()[0].clone()]
                }
                _ => vec![names[w.index()].clone(), "—".into(), "—".into(), "down".into()],
            };
            txns.rows.push(row);
        }
        vec![accounts, locks, txns]
    }

    fn outcome(&self, nodes: &Nodes<'_, LostUpdateNode>) -> BTreeMap<String, serde_json::Value> {
        let db = Self::db(nodes);
        let mut out = BTreeMap::new();
        out.insert("balance".to_string(), json!(db.row.balance));
        out.insert("committed_debits".to_string(), json!(db.committed_debits));
        out.insert(
            "expected_balance".to_string(),
            json!(OPENING_BALANCE - DEBIT * i64::from(db.committed_debits)),
        );
        if let Some(LostUpdateNode::Db(live)) = &nodes.live[DB.index()] {
            out.insert("lock_waits".to_string(), json!(live.lock_waits));
            out.insert("version_conflicts".to_string(), json!(live.version_conflicts));
        }
        out
    }
}

pub fn setup(params: &Params) -> Setup<LostUpdateWorld> {
    let plan = DebitPlan {
        strategy: strategy(params),
        amount: DEBIT,
        db: DB,
        start_delay_us: (0, 10 * MS_US),
        think_us: (40 * MS_US, 60 * MS_US),
        max_attempts: 5,
    };
    let names = names();
    let faults = vec![
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Network,
    ];
    let info = |id: NodeId, kind: &str| NodeInfo {
        id,
        name: names[id.index()].clone(),
        kind: kind.to_string(),
        faults: faults.clone(),
    };
    let db = AccountDb::new(OPENING_BALANCE, names.clone());
    let db_durable = LostUpdateDurable::Db(db.durable.clone());
    let mut nodes = vec![(info(DB, "database"), LostUpdateNode::Db(db), db_durable)];
    for w in WORKERS {
        let durable = WorkerDurable {
            name: names[w.index()].clone(),
            plan,
            done: false,
        };
        let worker = DebitWorker::recover(&durable);
        nodes.push((
            info(w, "worker"),
            LostUpdateNode::Worker(worker),
            LostUpdateDurable::Worker(durable),
        ));
    }
    Setup {
        world: LostUpdateWorld,
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
    Ok(engine.run(ID, seed, params.clone()))
}
