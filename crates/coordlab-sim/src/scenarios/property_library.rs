//! The property library: what several chapters check, each defined once. A property's name
//! and wording live here, and so does its check where it reads only a view every world
//! shares (the fenced ledger's row). A world lists the properties it checks (its property
//! enum's `spec` names them from here) and keeps only what its own story needs, such as how
//! its store records grants. The fenced ledger is shown and reported here too, one way in
//! every chapter.

use super::common::{always, eventually};
use crate::json;
use crate::kernel::collections::{VecMap, VecSet};
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::properties::PropertySpec;
use crate::protocols::job::AMOUNT_PER_STEP;
use crate::protocols::lease::fenced_resource::{FencedResource, LedgerIntro, ResourceDurable, WriteRecord};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

/// `one-holder-per-store`: counted by the word of whoever granted the lock.
pub fn one_holder_per_store_spec() -> PropertySpec {
    always(
        "one-holder-per-store",
        "At most one worker at a time holds the lock on the word of a store or service that granted it — every copy of the store counted, failovers included.",
    )
}

/// `tokens-increase`: over the grants as the granting store recorded them.
pub fn tokens_increase_spec() -> PropertySpec {
    always(
        "tokens-increase",
        "Each new holder gets a higher fencing token than every grant before it, failovers included, so no token is handed to two workers; a renewal keeps its token.",
    )
}

/// `fence-monotonic`: checked by [`fence_monotonic`].
pub fn fence_monotonic_spec() -> PropertySpec {
    always(
        "fence-monotonic",
        "The ledger never accepts a write whose token is lower than the highest it has seen.",
    )
}

/// `no-double-debit`: checked by [`no_double_debit`].
pub fn no_double_debit_spec() -> PropertySpec {
    always(
        "no-double-debit",
        "No step of the job is debited twice: the account loses at most one job's worth.",
    )
}

/// `no-stale-write`: who is older is the world's to say (grant order, or who wrote first).
pub fn no_stale_write_spec() -> PropertySpec {
    always(
        "no-stale-write",
        "Once a newer holder's write has reached the storage, no write from an older holder is accepted.",
    )
}

/// `job-completes`: what counts as done is the world's to say (a finished worker, a
/// committed run key).
pub fn job_completes_spec() -> PropertySpec {
    eventually("job-completes", "Some worker finishes the job.")
}

/// Account 42's balance on the fenced ledger when a story starts, in every chapter.
pub const OPENING_BALANCE: i64 = 100;

/// Account 42's balance once `steps` steps of the job have each debited it once.
pub fn balance_after(steps: u32) -> i64 {
    OPENING_BALANCE - AMOUNT_PER_STEP * i64::from(steps)
}

/// Adds the fenced ledger row the workers debit, named `ledger` in every story and holding
/// `opening_balance`: the node whose rows [`ledger_row`] reads. It takes pauses and network
/// faults only: a crash would lose the writes the story's verdicts are about.
pub fn add_ledger(setup: &mut Setup, intro: LedgerIntro, opening_balance: i64) -> NodeId {
    setup.add::<FencedResource>(
        "ledger",
        "resource",
        &[FaultKind::Pause, FaultKind::Network],
        intro,
        FencedResource::initial(opening_balance),
    )
}

/// The fenced ledger's row: the live ledger's, or what it persisted while it is down.
pub fn ledger_row<'a>(nodes: &Nodes<'a>, ledger: NodeId) -> Option<&'a ResourceDurable> {
    nodes
        .live::<FencedResource>(ledger)
        .map(|l| &l.durable)
        .or_else(|| nodes.durable::<FencedResource>(ledger))
}

/// Whether the ledger has accepted some step of the job twice: the moment a story's beat
/// points at (the property [`no_double_debit`] judges the balance it leaves).
pub fn step_applied_twice(nodes: &Nodes<'_>, ledger: NodeId) -> bool {
    ledger_row(nodes, ledger).is_some_and(|r| {
        let steps: Vec<u32> = r.writes.iter().filter(|w| w.accepted).map(|w| w.step).collect();
        steps.iter().enumerate().any(|(i, s)| steps[..i].contains(s))
    })
}

/// `fence-monotonic` on the ledger row (no row yet: nothing accepted, so it holds).
pub fn fence_monotonic(row: Option<&ResourceDurable>) -> bool {
    row.is_none_or(|r| {
        r.writes
            .iter()
            .all(|w| !w.accepted || w.token >= w.highest_before)
    })
}

/// `no-double-debit` on the ledger row: no more than `job_total` taken from
/// `opening_balance`, and no step debited twice — checked at the write that repeats a step,
/// not only once the total is exceeded. A write of nothing (a run key's commit) debits no
/// step.
pub fn no_double_debit(row: Option<&ResourceDurable>, opening_balance: i64, job_total: i64) -> bool {
    row.is_none_or(|r| {
        let mut debited = VecSet::new();
        r.balance >= opening_balance - job_total
            && r.writes
                .iter()
                .filter(|w| w.accepted && w.amount != 0)
                .all(|w| debited.insert(w.step))
    })
}

/// The ledger's one row (account 42) as the inspector shows it, in every story with a ledger.
pub fn account_state_table(row: &ResourceDurable) -> TableView {
    TableView {
        title: "account_state".into(),
        columns: columns(&["account_id", "balance", "last_token", "steps done"]),
        rows: vec![vec![
            "42".into(),
            format!("₹{}", row.balance),
            row.last_token.to_string(),
            row.steps_done.to_string(),
        ]],
    }
}

/// The ledger's row and every write it saw, for the inspector: a step applied twice says so.
/// No tables while the ledger has no row (it is down before ever starting), so every story
/// can append these without checking first.
pub fn ledger_tables(nodes: &Nodes<'_>, ledger: NodeId) -> Vec<TableView> {
    let Some(row) = ledger_row(nodes, ledger) else {
        return Vec::new();
    };
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
        account_state_table(row),
        TableView {
            title: "ledger writes".into(),
            columns: columns(&["worker", "step", "token", "result"]),
            rows: writes,
        },
    ]
}

/// The ledger's outcome fields: accepted and rejected writes (a refusal with its reason), the
/// balance, and how many job steps were applied more than once. Nothing while the ledger has
/// no row, like [`ledger_tables`].
pub fn ledger_outcome(nodes: &Nodes<'_>, ledger: NodeId, out: &mut BTreeMap<String, Value>) {
    let Some(row) = ledger_row(nodes, ledger) else {
        return;
    };
    let write = |w: &WriteRecord| {
        let mut v = json!({"worker": nodes.name(w.worker), "token": w.token.0, "step": w.step});
        if let Some(reason) = &w.reason {
            v["reason"] = json!(reason.text());
        }
        v
    };
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
