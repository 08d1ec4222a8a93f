//! What `zookeeper-lock` checks and shows: the lock properties judged by ZooKeeper's own tree
//! (the holder is the owner of the lowest child of the lock node), the queue, sessions and
//! wake-ups per release as tables, the zombie-holder warning, and the outcome.

use super::lock_service_common::{name, GrantLog, LockHolders, LockProperty};
use crate::json;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::time::MS_US;
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::presentation::durations::seconds;
use crate::properties::PropertySpec;
use crate::protocols::zookeeper_locks::zk_lock_worker::{ZkLock, ZkLockWorker};
use crate::protocols::zookeeper_locks::zookeeper::{base_name, ReleaseCause, ZkService};
use crate::scenarios::common::{runner_believers, runner_holdings};
use crate::scenarios::property_library::{fence_monotonic, ledger_outcome, ledger_row, ledger_tables};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

const PROPERTIES: [LockProperty; 4] = [
    LockProperty::OneHolderPerStore,
    LockProperty::TokensIncrease,
    LockProperty::FenceMonotonic,
    LockProperty::OneWakeupPerRelease,
];

pub struct ZkWorld {
    pub service: NodeId,
    pub ledger: NodeId,
    /// In queue order: the first is the worker that freezes.
    pub workers: Vec<NodeId>,
    pub grants: GrantLog,
    pub holders: LockHolders,
}

impl ZkWorld {
    pub fn new(service: NodeId, ledger: NodeId, workers: Vec<NodeId>) -> ZkWorld {
        ZkWorld {
            service,
            ledger,
            workers,
            grants: GrantLog::new(),
            holders: LockHolders::default(),
        }
    }

    /// The ensemble (a scenario never crashes it).
    fn service<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a ZkService> {
        nodes.live::<ZkService>(self.service)
    }

    /// Live workers that believe they hold the lock, with their ids.
    fn believers<'a>(&self, nodes: &Nodes<'a>) -> Vec<(NodeId, &'a ZkLockWorker)> {
        runner_believers(nodes, &self.workers)
    }

    /// Believers whose node is, by ZooKeeper's own tree, the lowest child of the lock.
    fn holders(&self, nodes: &Nodes<'_>) -> u32 {
        let Some(s) = self.service(nodes) else { return 0 };
        let first = s.children(&s.lock_path).into_iter().next();
        self.believers(nodes)
            .iter()
            .filter(|(_, w)| {
                w.node
                    .as_deref()
                    .is_some_and(|n| first.as_deref() == Some(base_name(n)))
            })
            .count() as u32
    }
}

impl World for ZkWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        PROPERTIES.iter().map(|p| p.spec()).collect()
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        // The lock is granted when a node becomes the lowest child, whether or not its owner
        // has listed the lock node yet; a worker acting later on a stale listing is not a new
        // grant.
        if let Some((owner, token)) = self.service(nodes).and_then(first_in_line) {
            self.grants.observe(owner, token, self.service, nodes.now_us);
        }
        let holders = self.holders(nodes);
        self.holders
            .observe(holders, self.believers(nodes).len() as u32, nodes.now_us);
        let service = self.service(nodes);
        for p in PROPERTIES {
            out.push(match p {
                LockProperty::OneHolderPerStore => holders <= 1,
                LockProperty::TokensIncrease => self.grants.tokens_ok,
                LockProperty::FenceMonotonic => fence_monotonic(ledger_row(nodes, self.ledger)),
                LockProperty::OneWakeupPerRelease => {
                    service.is_none_or(|s| s.releases.iter().all(|r| r.wakeups <= 1))
                }
            });
        }
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        let believers = self.believers(nodes);
        let s = self.service(nodes)?;
        let first = s.children(&s.lock_path).into_iter().next();
        let (real, stale): (Vec<_>, Vec<_>) = believers
            .iter()
            .partition(|(_, w)| w.node.as_deref().map(base_name) == first.as_deref());
        let (zombie_id, zombie) = stale.first()?;
        let token = |w: &ZkLockWorker| w.token.map(|t| t.to_string()).unwrap_or_default();
        Some(match real.first() {
            Some((holder_id, holder)) => format!(
                "{} still acts on the lock with token {}, but ZooKeeper deleted its node; {} holds it now with token {} — only the ledger's token check keeps them apart",
                nodes.name(*zombie_id),
                token(zombie),
                nodes.name(*holder_id),
                token(holder)
            ),
            None => format!(
                "{} still acts on the lock with token {}, but ZooKeeper has deleted its node",
                nodes.name(*zombie_id),
                token(zombie)
            ),
        })
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        runner_holdings::<ZkLock>(
            nodes,
            self.workers.iter().copied(),
            self.service(nodes).and_then(lowest_child_owner),
        )
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let mut tables = Vec::new();
        if let Some(s) = self.service(nodes) {
            tables.push(children_table(s, nodes));
            tables.push(sessions_table(s, nodes, nodes.local_now_us[self.service.index()]));
            tables.push(releases_table(s, nodes));
        }
        tables.push(self.grants.table(nodes));
        tables.extend(ledger_tables(nodes, self.ledger));
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        self.holders.insert_outcome(&mut out, nodes.now_us);
        out.insert("grants".into(), self.grants.json(nodes));
        out.insert(
            "handovers".into(),
            json!(self.grants.grants.len().saturating_sub(1)),
        );
        let first = self.workers.first().copied();
        if let Some(s) = self.service(nodes) {
            let per_release: Vec<u32> = s.releases.iter().map(|r| r.wakeups).collect();
            out.insert(
                "max_wakeups_per_release".into(),
                json!(per_release.iter().copied().max().unwrap_or(0)),
            );
            out.insert("wakeups_per_release".into(), Value::from(per_release));
            out.insert("wakeups_on_create".into(), json!(s.create_wakeups));
            out.insert(
                "first_holder_session_expired".into(),
                json!(s
                    .releases
                    .iter()
                    .any(|r| Some(r.owner) == first && r.cause == ReleaseCause::SessionExpired)),
            );
        }
        ledger_outcome(nodes, self.ledger, &mut out);
        if let Some(l) = ledger_row(nodes, self.ledger) {
            out.insert(
                "stale_write_rejected".into(),
                json!(l.writes.iter().any(|w| Some(w.worker) == first && !w.accepted)),
            );
        }
        out
    }
}

/// The client whose session owns the lowest child of the lock node: the holder by
/// ZooKeeper's tree, whether or not it has listed the children yet. Unlike
/// [`first_in_line`] it collects nothing, since it runs at every step: a sequential child's
/// name ends in its zero-padded sequence number, so the smallest name is the lowest.
fn lowest_child_owner(s: &ZkService) -> Option<NodeId> {
    let lock_path = s.lock_path.as_str();
    let (_, node) = s
        .nodes
        .iter()
        .filter(|(path, _)| {
            path.strip_prefix(lock_path)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|child| !child.is_empty() && !child.contains('/'))
        })
        .min_by(|(a, _), (b, _)| base_name(a).cmp(base_name(b)))?;
    Some(s.sessions.get(&node.owner?)?.client)
}

/// The owner and token of the lowest child of the lock: the holder by ZooKeeper's tree.
fn first_in_line(s: &ZkService) -> Option<(NodeId, FencingToken)> {
    let first = s.children(&s.lock_path).into_iter().next()?;
    let node = s.nodes.get(&format!("{}/{first}", s.lock_path))?;
    let owner = s.sessions.get(&node.owner?)?.client;
    Some((owner, ZkService::token_of(&first)?))
}

/// The queue: each child of the lock node, its owner, its place and who watches it.
fn children_table(s: &ZkService, nodes: &Nodes<'_>) -> TableView {
    let lock_path = &s.lock_path;
    let mut rows: Vec<Vec<String>> = s
        .children(lock_path)
        .iter()
        .enumerate()
        .map(|(i, child)| {
            let path = format!("{lock_path}/{child}");
            let owner = s
                .nodes
                .get(&path)
                .and_then(|n| n.owner)
                .and_then(|o| s.sessions.get(&o))
                .map(|x| name(nodes, x.client))
                .unwrap_or_default();
            let watched: Vec<String> = s.watchers(&path).0.iter().map(|c| name(nodes, *c)).collect();
            vec![
                child.clone(),
                owner,
                if i == 0 {
                    "holds the lock".into()
                } else {
                    format!("waiting (#{} in line)", i + 1)
                },
                if watched.is_empty() {
                    "—".into()
                } else {
                    watched.join(", ")
                },
            ]
        })
        .collect();
    if rows.is_empty() {
        rows.push(vec!["(no children)".into(), "—".into(), "—".into(), "—".into()]);
    }
    let lock_watch = s.watchers(lock_path).1;
    TableView {
        title: format!(
            "{lock_path} children (watching {lock_path} itself: {})",
            if lock_watch.is_empty() {
                "nobody".to_string()
            } else {
                lock_watch
                    .iter()
                    .map(|c| name(nodes, *c))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
        columns: columns(&["node", "owner", "state", "watched by"]),
        rows,
    }
}

/// Every session, judged by ZooKeeper's clock reading `now_us`.
fn sessions_table(s: &ZkService, nodes: &Nodes<'_>, now_us: u64) -> TableView {
    TableView {
        title: "sessions (by ZooKeeper's clock)".into(),
        columns: columns(&["session", "client", "last heard", "state"]),
        rows: s
            .sessions
            .iter()
            .map(|(id, x)| {
                vec![
                    id.to_string(),
                    name(nodes, x.client),
                    format!("{} ago", seconds(now_us.saturating_sub(x.last_heard_us) / MS_US)),
                    if x.alive {
                        format!("alive (expires after {} of silence)", seconds(x.timeout_ms))
                    } else {
                        "closed or expired".into()
                    },
                ]
            })
            .collect(),
    }
}

/// Each release of the lock and how many waiters it woke: the herd, drawn as a bar.
fn releases_table(s: &ZkService, nodes: &Nodes<'_>) -> TableView {
    TableView {
        title: "wake-ups per release".into(),
        columns: columns(&["release", "node", "why", "still queued", "waiters woken", ""]),
        rows: s
            .releases
            .iter()
            .enumerate()
            .map(|(i, r)| {
                vec![
                    (i + 1).to_string(),
                    format!("{} ({})", base_name(&r.path), name(nodes, r.owner)),
                    match r.cause {
                        ReleaseCause::Deleted => "released".into(),
                        ReleaseCause::SessionExpired => "session expired".into(),
                        ReleaseCause::SessionClosed => "session closed".into(),
                    },
                    r.others_left.to_string(),
                    r.wakeups.to_string(),
                    "█".repeat(r.wakeups as usize),
                ]
            })
            .collect(),
    }
}
