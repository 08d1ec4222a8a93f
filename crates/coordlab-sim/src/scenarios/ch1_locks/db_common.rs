//! What the chapter-1 lock scenarios share: the database node, its tables as the state panel
//! shows them (the row locks and the wait-for edges), and the client nodes.

use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::protocols::database::row_lock_db::{LockDb, LockDbConfig, LockDbDurable};
use crate::protocols::database::txn_client::{ClientDurable, TxnClient, TxnPlan};
use crate::trace::{columns, TableView};

/// What every node of these scenarios may suffer: all but a clock fault.
pub use crate::scenarios::common::CLOCKLESS_FAULTS as DB_FAULTS;

/// PostgreSQL's row locking (not InnoDB's), with the email index, detecting deadlocks after
/// `deadlock_timeout_us`.
pub fn postgres(deadlock_timeout_us: u64) -> LockDbConfig {
    LockDbConfig {
        deadlock_timeout_us,
        email_index: true,
        innodb: None,
    }
}

/// Adds the database, and returns its id for the clients to connect to.
pub fn add_database(setup: &mut Setup, config: LockDbConfig, rows: LockDbDurable) -> NodeId {
    setup.add::<LockDb>("database", "database", &DB_FAULTS, config, rows)
}

/// Adds one client running `plan`, and returns its id.
pub fn add_client(setup: &mut Setup, name: &str, kind: &str, plan: TxnPlan) -> NodeId {
    setup.add::<TxnClient>(name, kind, &DB_FAULTS, plan, ClientDurable::default())
}

/// The committed rows: the live database's, or what it persisted while it is down.
pub fn committed<'a>(nodes: &Nodes<'a>, db: NodeId) -> &'a LockDbDurable {
    nodes
        .live::<LockDb>(db)
        .map(|live| &live.durable)
        .or_else(|| nodes.durable::<LockDb>(db))
        .expect("the database node hosts a LockDb")
}

/// The live database, if it is up.
pub fn live<'a>(nodes: &Nodes<'a>, db: NodeId) -> Option<&'a LockDb> {
    nodes.live::<LockDb>(db)
}

/// The live client `id`, if it is up.
pub fn client<'a>(nodes: &Nodes<'a>, id: NodeId) -> Option<&'a TxnClient> {
    nodes.live::<TxnClient>(id)
}

/// Whether some transaction waits for a row lock.
pub fn someone_waits(nodes: &Nodes<'_>, db: NodeId) -> bool {
    live(nodes, db).is_some_and(|db| !db.pending.is_empty())
}

/// The lock manager's rows: who holds each row in which mode, and who waits (modes in the
/// database's words: PostgreSQL's, or InnoDB's where the statement ran as InnoDB).
pub fn lock_table(nodes: &Nodes<'_>, db: NodeId) -> TableView {
    let mut rows = Vec::new();
    if let Some(db) = live(nodes, db) {
        for (row, locks) in &db.locks.rows {
            let named = |list: &[(NodeId, _)]| {
                list.iter()
                    .map(|(t, m)| format!("{} {}", nodes.name(*t), db.lock_name(*t, *row, *m)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let held = named(&locks.holders);
            let queue = named(&locks.queue);
            rows.push(vec![
                row.to_string(),
                if held.is_empty() { "—".into() } else { held },
                if queue.is_empty() { "—".into() } else { queue },
            ]);
        }
    }
    if rows.is_empty() {
        rows.push(vec!["—".into(), "no row locks".into(), "—".into()]);
    }
    TableView {
        title: "row locks".to_string(),
        columns: columns(&["row", "held by", "waiting"]),
        rows,
    }
}

/// The wait-for graph, one edge a line.
pub fn wait_for_table(nodes: &Nodes<'_>, db: NodeId) -> TableView {
    let mut rows: Vec<Vec<String>> = live(nodes, db)
        .map(|db| {
            db.locks
                .wait_edges()
                .iter()
                .map(|e| {
                    vec![
                        nodes.name(e.waiter).to_string(),
                        nodes.name(e.holder).to_string(),
                        format!("{} {}", e.row, db.lock_name(e.waiter, e.row, e.mode)),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    if rows.is_empty() {
        rows.push(vec!["nobody".into(), "—".into(), "—".into()]);
    }
    TableView {
        title: "waits for".to_string(),
        columns: columns(&["transaction", "waits for", "to get"]),
        rows,
    }
}

/// One line per client: its state, what it committed, its errors.
pub fn client_table(nodes: &Nodes<'_>, ids: &[NodeId], committed_label: &str) -> TableView {
    let rows = ids
        .iter()
        .map(|id| {
            let name = nodes.name(*id).to_string();
            match client(nodes, *id) {
                Some(c) => vec![
                    name,
                    c.phase_text(),
                    c.committed.to_string(),
                    c.errors.to_string(),
                ],
                None => vec![name, "down".into(), "—".into(), "—".into()],
            }
        })
        .collect();
    TableView {
        title: "clients".to_string(),
        columns: columns(&["client", "state", committed_label, "errors"]),
        rows,
    }
}

/// Errors every client has seen (NOWAIT refusals, deadlock aborts).
pub fn client_errors(nodes: &Nodes<'_>, ids: &[NodeId]) -> u32 {
    ids.iter()
        .filter_map(|id| client(nodes, *id))
        .map(|c| c.errors)
        .sum()
}
