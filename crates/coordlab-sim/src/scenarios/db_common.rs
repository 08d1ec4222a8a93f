//! What the chapter-1 lock scenarios share: the database node, its tables as the state panel
//! shows them (the row locks and the wait-for edges), and the client nodes.

use crate::kernel::ids::NodeId;
use crate::kernel::world::Nodes;
use crate::protocols::row_lock_db::{LockDb, LockDbDurable};
use crate::protocols::txn_client::TxnClient;
use crate::trace::{columns, TableView};

/// The database is always node 0; clients follow.
pub const DB: NodeId = NodeId(0);

/// The committed rows: the live database's, or what it persisted while it is down.
pub fn committed<'a>(nodes: &Nodes<'a>) -> &'a LockDbDurable {
    nodes
        .live::<LockDb>(DB)
        .map(|db| &db.durable)
        .or_else(|| nodes.durable::<LockDb>(DB))
        .expect("node 0 is the database")
}

/// The live database, if it is up.
pub fn live<'a>(nodes: &Nodes<'a>) -> Option<&'a LockDb> {
    nodes.live::<LockDb>(DB)
}

/// The live client `id`, if it is up.
pub fn client<'a>(nodes: &Nodes<'a>, id: NodeId) -> Option<&'a TxnClient> {
    nodes.live::<TxnClient>(id)
}

/// Whether some transaction waits for a row lock.
pub fn someone_waits(nodes: &Nodes<'_>) -> bool {
    live(nodes).is_some_and(|db| !db.pending.is_empty())
}

/// The lock manager's rows: who holds each row in which mode, and who waits (modes in the
/// database's words: PostgreSQL's, or InnoDB's where the statement ran as InnoDB).
pub fn lock_table(nodes: &Nodes<'_>) -> TableView {
    let mut rows = Vec::new();
    if let Some(db) = live(nodes) {
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
pub fn wait_for_table(nodes: &Nodes<'_>) -> TableView {
    let mut rows: Vec<Vec<String>> = live(nodes)
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
