//! What the real-lock-service scenarios (`zookeeper-lock`, `consensus-lock`) share: the
//! record of grants and the checks on it, and the holder counts. The fenced ledger's views
//! and the properties other chapters check too are in the property library.

use crate::json;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::world::Nodes;
use crate::properties::PropertySpec;
use crate::scenarios::common::{always, HolderCount};
use crate::scenarios::property_library as library;
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

/// The checks a lock-service scenario can declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockProperty {
    OneHolderPerStore,
    TokensIncrease,
    FenceMonotonic,
    OneWakeupPerRelease,
}

impl LockProperty {
    pub fn spec(self) -> PropertySpec {
        match self {
            LockProperty::OneHolderPerStore => library::one_holder_per_store_spec(),
            LockProperty::TokensIncrease => library::tokens_increase_spec(),
            LockProperty::FenceMonotonic => library::fence_monotonic_spec(),
            LockProperty::OneWakeupPerRelease => always(
                "one-wakeup-per-release",
                "Each release of the lock wakes at most one waiter: the next in line.",
            ),
        }
    }
}

/// One grant of the lock, as the lock service made it (its owner may learn of it later, or
/// never).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub worker: NodeId,
    pub token: FencingToken,
    pub granted_by: NodeId,
    pub at_us: u64,
}

/// Every grant of the run in the order the service made them, and whether they kept the
/// promise of [`LockProperty::TokensIncrease`].
#[derive(Clone, Debug, Default)]
pub struct GrantLog {
    pub grants: Vec<Grant>,
    pub tokens_ok: bool,
}

impl GrantLog {
    pub fn new() -> GrantLog {
        GrantLog {
            grants: Vec::new(),
            tokens_ok: true,
        }
    }

    /// Records that the service gave `worker` the lock with `token`; seeing the same grant
    /// again (a renewal, a lagging replica catching up) is not a new grant.
    pub fn observe(&mut self, worker: NodeId, token: FencingToken, granted_by: NodeId, at_us: u64) {
        if self.grants.iter().any(|g| g.worker == worker && g.token == token) {
            return;
        }
        if self.grants.iter().any(|g| g.token >= token) {
            self.tokens_ok = false;
        }
        self.grants.push(Grant {
            worker,
            token,
            granted_by,
            at_us,
        });
    }

    pub fn json(&self, nodes: &Nodes<'_>) -> Value {
        Value::Array(
            self.grants
                .iter()
                .map(|g| {
                    json!({
                        "worker": name(nodes, g.worker),
                        "token_or_revision": g.token.0,
                        "granted_by": name(nodes, g.granted_by),
                    })
                })
                .collect(),
        )
    }

    pub fn table(&self, nodes: &Nodes<'_>) -> TableView {
        TableView {
            title: "grants (token = what the ledger checks)".into(),
            columns: columns(&["worker", "token", "granted by", "at"]),
            rows: self
                .grants
                .iter()
                .map(|g| {
                    vec![
                        name(nodes, g.worker),
                        g.token.to_string(),
                        name(nodes, g.granted_by),
                        crate::kernel::time::format_time(g.at_us),
                    ]
                })
                .collect(),
        }
    }
}

/// How many hold the lock by the service's account and by their own, at most and over time.
#[derive(Clone, Debug, Default)]
pub struct LockHolders {
    pub max_holders: u32,
    /// The workers that believe they hold it: the most at once, and for how long two or more did.
    pub believers: HolderCount,
}

impl LockHolders {
    pub fn observe(&mut self, holders: u32, believers: u32, now_us: u64) {
        self.max_holders = self.max_holders.max(holders);
        self.believers.observe(believers, now_us);
    }

    pub fn insert_outcome(&self, out: &mut BTreeMap<String, Value>, now_us: u64) {
        out.insert("max_concurrent_holders".into(), json!(self.max_holders));
        out.insert("max_concurrent_believers".into(), json!(self.believers.max));
        out.insert(
            "believers_window_ms".into(),
            json!(self.believers.unsafe_window_ms(now_us)),
        );
    }
}

/// A participant's display name, owned (for table cells and outcome fields).
pub fn name(nodes: &Nodes<'_>, id: NodeId) -> String {
    nodes.name(id).to_string()
}
