//! What the Redis scenarios share: the faults a Redis node takes, the fenced ledger row (its
//! node, its inspector tables and outcome fields), the property specs, and the unsafe-window
//! bookkeeping.

use super::common::always;
use crate::json;
use crate::kernel::collections::VecMap;
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Participant;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::Nodes;
use crate::properties::PropertySpec;
use crate::protocols::fenced_resource::{FencedResource, LedgerIntro, ResourceDurable, WriteRecord};
use crate::protocols::redis_job::JobDurable;
use crate::protocols::redis_msg::{tenths, KeyEntry};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

/// The ledger row's opening balance.
pub const OPENING_BALANCE: i64 = 100;

/// Faults a user may inject on a Redis node: everything, including its clock.
pub const STORE_FAULTS: [FaultKind; 5] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
    FaultKind::Clock,
];

/// Adds the fenced ledger row `ledger` with the chapter's opening balance.
pub fn add_ledger(setup: &mut Setup) -> NodeId {
    setup.add::<FencedResource>(
        "ledger",
        "resource",
        &[FaultKind::Pause, FaultKind::Network],
        LedgerIntro::RefusesStaleOrUnchecked,
        FencedResource::initial(OPENING_BALANCE),
    )
}

/// The ledger row, live or as persisted while it is down.
pub fn ledger_row<'a>(nodes: &Nodes<'a>, id: NodeId) -> Option<&'a ResourceDurable> {
    nodes
        .live::<FencedResource>(id)
        .map(|r| &r.durable)
        .or_else(|| nodes.durable::<FencedResource>(id))
}

/// The names of the lock clients (of type `P`) among `ids` whose job is recorded as done.
pub fn finished_by<P: Participant<Durable = JobDurable>>(nodes: &Nodes<'_>, ids: &[NodeId]) -> Value {
    let finished: Vec<&str> = ids
        .iter()
        .filter(|id| nodes.durable::<P>(**id).is_some_and(|d| d.finished))
        .map(|id| nodes.name(*id))
        .collect();
    Value::from(finished)
}

/// The lock key's value and the time it has left by the node's clock, for a table.
pub fn lock_cells(data: &VecMap<String, KeyEntry>, key: &str, local_now_us: u64) -> (String, String) {
    match data.get(key) {
        Some(e) => (
            e.value.clone(),
            match e.expires_at_us {
                Some(at) if at > local_now_us => tenths((at - local_now_us) / MS_US),
                Some(_) => "expired".to_string(),
                None => "—".to_string(),
            },
        ),
        None => ("(none)".to_string(), "—".to_string()),
    }
}

pub fn one_holder_spec() -> PropertySpec {
    always("one-holder-per-store", "At most one worker at a time does the protected work, each believing the lock is its own because the store it talks to said so.")
}

pub fn tokens_increase_spec() -> PropertySpec {
    always("tokens-increase", "Every fencing token handed out for the lock is higher than every one before it: no number is ever handed out twice, failovers included.")
}

pub fn fence_monotonic_spec() -> PropertySpec {
    always(
        "fence-monotonic",
        "The ledger never accepts a write whose token is lower than the highest it has seen.",
    )
}

pub fn releases_own_spec() -> PropertySpec {
    always(
        "releases-only-own-lock",
        "A release never deletes a lock value that belongs to another worker.",
    )
}

/// `fence-monotonic` on the ledger row.
pub fn fence_monotonic(row: Option<&ResourceDurable>) -> bool {
    row.is_none_or(|r| {
        r.writes
            .iter()
            .all(|w| !w.accepted || w.token >= w.highest_before)
    })
}

/// How many workers believed at once, and for how long two or more did.
#[derive(Clone, Debug, Default)]
pub struct HolderWindow {
    pub max_concurrent: u32,
    opened_us: Option<u64>,
    closed_total_us: u64,
}

impl HolderWindow {
    pub fn observe(&mut self, holders: u32, now_us: u64) {
        self.max_concurrent = self.max_concurrent.max(holders);
        match (holders >= 2, self.opened_us) {
            (true, None) => self.opened_us = Some(now_us),
            (false, Some(opened)) => {
                self.closed_total_us += now_us - opened;
                self.opened_us = None;
            }
            _ => {}
        }
    }

    pub fn total_ms(&self, now_us: u64) -> u64 {
        (self.closed_total_us + self.opened_us.map_or(0, |o| now_us - o)) / MS_US
    }
}

/// The ledger's row and every write it saw, for the inspector.
pub fn ledger_tables(nodes: &Nodes<'_>, row: &ResourceDurable) -> Vec<TableView> {
    let writes = row
        .writes
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let twice = w.accepted && row.writes[..i].iter().any(|x| x.accepted && x.step == w.step);
            let result = match (&w.reason, w.accepted, twice) {
                (Some(reason), _, _) => format!("✗ rejected: {}", reason.text()),
                (None, true, true) => format!("✓ accepted — step {} debited AGAIN", w.step),
                _ => "✓ accepted".to_string(),
            };
            vec![
                nodes.name(w.worker).to_string(),
                w.step.to_string(),
                if w.token.0 == 0 {
                    "—".into()
                } else {
                    w.token.to_string()
                },
                result,
            ]
        })
        .collect();
    vec![
        TableView {
            title: "account_state".into(),
            columns: columns(&["account_id", "balance", "last_token", "steps done"]),
            rows: vec![vec![
                "42".into(),
                format!("₹{}", row.balance),
                row.last_token.to_string(),
                row.steps_done.to_string(),
            ]],
        },
        TableView {
            title: "ledger writes".into(),
            columns: columns(&["worker", "step", "token", "result"]),
            rows: writes,
        },
    ]
}

/// The ledger's outcome fields: accepted and rejected writes, the balance, and how many job
/// steps were applied more than once.
pub fn ledger_outcome(nodes: &Nodes<'_>, row: &ResourceDurable, out: &mut BTreeMap<String, Value>) {
    let write = |w: &WriteRecord| json!({"worker": nodes.name(w.worker), "token": w.token.0, "step": w.step});
    let accepted: Vec<Value> = row.writes.iter().filter(|w| w.accepted).map(write).collect();
    let rejected: Vec<Value> = row.writes.iter().filter(|w| !w.accepted).map(write).collect();
    let mut per_step: VecMap<u32, u32> = VecMap::new();
    for w in row.writes.iter().filter(|w| w.accepted) {
        *per_step.get_or_insert_with(w.step, Default::default) += 1;
    }
    out.insert("accepted_writes".into(), Value::Array(accepted));
    out.insert("rejected_writes".into(), Value::Array(rejected));
    out.insert("balance".into(), json!(row.balance));
    out.insert(
        "steps_applied_twice".into(),
        json!(per_step.values().filter(|n| **n > 1).count()),
    );
}
