//! What the Redis scenarios share: the participant enum (Redis nodes, the failover monitor,
//! lock workers, Redlock clients, the fenced ledger row), the property specs, the ledger's
//! inspector tables and outcome fields, and the unsafe-window bookkeeping.

use crate::kernel::engine::Nodes;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Effect, Participant};
use crate::kernel::time::MS_US;
use crate::properties::{PropertyKind, PropertySpec};
use crate::protocols::fenced_resource::{FencedResource, ResourceDurable, WriteRecord};
use crate::protocols::lease_msg::LeaseMsg;
use crate::protocols::lease_worker::LeaseTimer;
use crate::protocols::redis::{RedisDurable, RedisNode};
use crate::protocols::redis_msg::{RedisMsg, RedisTimer};
use crate::protocols::redis_sentinel::{Sentinel, SentinelDurable};
use crate::protocols::redis_worker::{RedisWorker, WorkerDurable};
use crate::protocols::redlock_client::{RedlockClient, RedlockDurable};
use crate::trace::TableView;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The ledger row's opening balance.
pub const OPENING_BALANCE: i64 = 100;

#[derive(Clone, Debug)]
pub enum RedisLabNode {
    Store(Box<RedisNode>),
    Sentinel(Sentinel),
    Worker(RedisWorker),
    Redlock(RedlockClient),
    Ledger(FencedResource),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisLabDurable {
    Store(Box<RedisDurable>),
    Sentinel(SentinelDurable),
    Worker(WorkerDurable),
    Redlock(RedlockDurable),
    /// The ledger's row, and the participant names it narrates with.
    Ledger(ResourceDurable, Vec<String>),
}

impl From<RedisDurable> for RedisLabDurable {
    fn from(d: RedisDurable) -> Self {
        RedisLabDurable::Store(Box::new(d))
    }
}
impl From<SentinelDurable> for RedisLabDurable {
    fn from(d: SentinelDurable) -> Self {
        RedisLabDurable::Sentinel(d)
    }
}
impl From<WorkerDurable> for RedisLabDurable {
    fn from(d: WorkerDurable) -> Self {
        RedisLabDurable::Worker(d)
    }
}
impl From<RedlockDurable> for RedisLabDurable {
    fn from(d: RedlockDurable) -> Self {
        RedisLabDurable::Redlock(d)
    }
}

/// Lets the lease chapter's ledger row run unchanged: it speaks `LeaseMsg`, so it runs under
/// a context of its own and its effects are carried over, wrapped in [`RedisMsg::Ledger`].
#[derive(Clone, Debug)]
struct LedgerShim;

impl Participant for LedgerShim {
    type Msg = LeaseMsg;
    type Timer = LeaseTimer;
    type Durable = ResourceDurable;
    fn on_start(&mut self, _ctx: &mut Ctx<'_, Self>) {}
    fn on_message(&mut self, _ctx: &mut Ctx<'_, Self>, _from: NodeId, _msg: LeaseMsg) {}
    fn on_timer(&mut self, _ctx: &mut Ctx<'_, Self>, _timer: LeaseTimer) {}
    fn recover(_id: NodeId, _durable: &ResourceDurable) -> Self {
        LedgerShim
    }
    fn summary(&self, _local_now_us: u64) -> Vec<String> {
        Vec::new()
    }
    fn durable_summary(_durable: &ResourceDurable) -> Vec<String> {
        Vec::new()
    }
}

fn ledger_message(ledger: &mut FencedResource, ctx: &mut Ctx<'_, RedisLabNode>, from: NodeId, msg: LeaseMsg) {
    let mut inner: Vec<Effect<LedgerShim>> = Vec::new();
    ledger.handle(
        &mut Ctx::new(ctx.node, ctx.local_now_us, ctx.rng, &mut inner),
        from,
        msg,
    );
    for e in inner {
        match e {
            Effect::Send { to, msg } => ctx.send(to, RedisMsg::Ledger(msg)),
            Effect::Persist(d) => ctx.persist(RedisLabDurable::Ledger(d, ledger.names.clone())),
            Effect::Note(n) => ctx.note(n),
            // The ledger row sets no timers.
            Effect::SetTimer { .. } | Effect::CancelTimer { .. } => {}
        }
    }
}

impl Participant for RedisLabNode {
    type Msg = RedisMsg;
    type Timer = RedisTimer;
    type Durable = RedisLabDurable;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        match self {
            RedisLabNode::Store(s) => s.start(ctx),
            RedisLabNode::Sentinel(s) => s.start(ctx),
            RedisLabNode::Worker(w) => w.start(ctx),
            RedisLabNode::Redlock(c) => c.start(ctx),
            RedisLabNode::Ledger(r) => ctx.note(format!(
                "The ledger holds account 42 at ₹{}. It refuses a debit whose token is lower than the highest it has seen ({}); a debit without a token it cannot check at all.",
                r.durable.balance,
                if r.durable.last_token.0 == 0 {
                    "none yet".to_string()
                } else {
                    r.durable.last_token.to_string()
                }
            )),
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RedisMsg) {
        match self {
            RedisLabNode::Store(s) => s.message(ctx, from, msg),
            RedisLabNode::Sentinel(s) => s.message(ctx, from, msg),
            RedisLabNode::Worker(w) => w.message(ctx, from, msg),
            RedisLabNode::Redlock(c) => c.message(ctx, from, msg),
            RedisLabNode::Ledger(r) => {
                if let RedisMsg::Ledger(m) = msg {
                    ledger_message(r, ctx, from, m);
                }
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: RedisTimer) {
        match self {
            RedisLabNode::Store(s) => s.timer(ctx, timer),
            RedisLabNode::Sentinel(s) => s.timer(ctx, timer),
            RedisLabNode::Worker(w) => w.timer(ctx, timer),
            RedisLabNode::Redlock(c) => c.timer(ctx, timer),
            RedisLabNode::Ledger(_) => {}
        }
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        match self {
            RedisLabNode::Worker(w) => w.peer_down(ctx, peer),
            RedisLabNode::Store(s) => s.peer_down(ctx, peer),
            _ => {}
        }
    }

    fn watches(&self, peer: NodeId) -> bool {
        match self {
            RedisLabNode::Worker(w) => w.watches(peer),
            RedisLabNode::Store(s) => s.watches(peer),
            _ => false,
        }
    }

    fn recover(id: NodeId, durable: &RedisLabDurable) -> Self {
        match durable {
            RedisLabDurable::Store(d) => RedisLabNode::Store(Box::new(RedisNode::recover(id, d))),
            RedisLabDurable::Sentinel(d) => RedisLabNode::Sentinel(Sentinel::recover(d)),
            RedisLabDurable::Worker(d) => RedisLabNode::Worker(RedisWorker::recover(d)),
            RedisLabDurable::Redlock(d) => RedisLabNode::Redlock(RedlockClient::recover(d)),
            RedisLabDurable::Ledger(d, names) => RedisLabNode::Ledger(FencedResource {
                names: names.clone(),
                durable: d.clone(),
            }),
        }
    }

    fn summary(&self, local_now_us: u64) -> Vec<String> {
        match self {
            RedisLabNode::Store(s) => s.summary(local_now_us),
            RedisLabNode::Sentinel(s) => s.summary(local_now_us),
            RedisLabNode::Worker(w) => w.summary(),
            RedisLabNode::Redlock(c) => c.summary(local_now_us),
            RedisLabNode::Ledger(r) => r.summary(),
        }
    }

    fn durable_summary(durable: &RedisLabDurable) -> Vec<String> {
        match durable {
            RedisLabDurable::Store(d) => RedisNode::durable_summary(d),
            RedisLabDurable::Worker(WorkerDurable { finished, .. })
            | RedisLabDurable::Redlock(RedlockDurable { finished, .. }) => vec![
                "down".into(),
                if *finished {
                    "job done".into()
                } else {
                    "job not done".into()
                },
            ],
            _ => vec!["down".into(), "state kept on disk".into()],
        }
    }
}

/// A Redis node and what it has on disk at the start.
pub fn store_node(node: RedisNode) -> (RedisLabNode, RedisLabDurable) {
    let durable = RedisLabDurable::Store(Box::new(node.durable()));
    (RedisLabNode::Store(Box::new(node)), durable)
}

/// The fenced ledger row with the chapter's opening balance.
pub fn ledger_node(names: &[String]) -> (RedisLabNode, RedisLabDurable) {
    let ledger = FencedResource::new(names.to_vec(), OPENING_BALANCE);
    let durable = RedisLabDurable::Ledger(ledger.durable.clone(), names.to_vec());
    (RedisLabNode::Ledger(ledger), durable)
}

/// The live Redis node `id`, if it is up.
pub fn live_store<'a>(nodes: &'a Nodes<'_, RedisLabNode>, id: NodeId) -> Option<&'a RedisNode> {
    match nodes.live.get(id.index()) {
        Some(Some(RedisLabNode::Store(s))) => Some(s),
        _ => None,
    }
}

/// What the Redis node `id` has on disk.
pub fn durable_store<'a>(nodes: &'a Nodes<'_, RedisLabNode>, id: NodeId) -> Option<&'a RedisDurable> {
    match nodes.durable.get(id.index()) {
        Some(RedisLabDurable::Store(d)) => Some(d),
        _ => None,
    }
}

/// The ledger row, live or as persisted while it is down.
pub fn ledger_row<'a>(nodes: &'a Nodes<'_, RedisLabNode>, id: NodeId) -> Option<&'a ResourceDurable> {
    match (nodes.live.get(id.index()), nodes.durable.get(id.index())) {
        (Some(Some(RedisLabNode::Ledger(r))), _) => Some(&r.durable),
        (_, Some(RedisLabDurable::Ledger(d, _))) => Some(d),
        _ => None,
    }
}

pub fn one_holder_spec() -> PropertySpec {
    PropertySpec {
        name: "one-holder-per-store",
        kind: PropertyKind::Always,
        description: "At most one worker at a time does the protected work, each believing the lock is its own because the store it talks to said so.",
    }
}

pub fn tokens_increase_spec() -> PropertySpec {
    PropertySpec {
        name: "tokens-increase",
        kind: PropertyKind::Always,
        description: "Every fencing token handed out for the lock is higher than every one before it: no number is ever handed out twice, failovers included.",
    }
}

pub fn fence_monotonic_spec() -> PropertySpec {
    PropertySpec {
        name: "fence-monotonic",
        kind: PropertyKind::Always,
        description: "The ledger never accepts a write whose token is lower than the highest it has seen.",
    }
}

pub fn releases_own_spec() -> PropertySpec {
    PropertySpec {
        name: "releases-only-own-lock",
        kind: PropertyKind::Always,
        description: "A release never deletes a lock value that belongs to another worker.",
    }
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

fn name(names: &[String], id: NodeId) -> String {
    names.get(id.index()).cloned().unwrap_or_else(|| id.to_string())
}

/// The ledger's row and every write it saw, for the inspector.
pub fn ledger_tables(names: &[String], row: &ResourceDurable) -> Vec<TableView> {
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
                name(names, w.worker),
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
            columns: ["account_id", "balance", "last_token", "steps done"]
                .map(String::from)
                .to_vec(),
            rows: vec![vec![
                "42".into(),
                format!("₹{}", row.balance),
                row.last_token.to_string(),
                row.steps_done.to_string(),
            ]],
        },
        TableView {
            title: "ledger writes".into(),
            columns: ["worker", "step", "token", "result"].map(String::from).to_vec(),
            rows: writes,
        },
    ]
}

/// The ledger's outcome fields: accepted and rejected writes, the balance, and how many job
/// steps were applied more than once.
pub fn ledger_outcome(names: &[String], row: &ResourceDurable, out: &mut BTreeMap<String, Value>) {
    let write =
        |w: &WriteRecord| json!({"worker": name(names, w.worker), "token": w.token.0, "step": w.step});
    let accepted: Vec<Value> = row.writes.iter().filter(|w| w.accepted).map(write).collect();
    let rejected: Vec<Value> = row.writes.iter().filter(|w| !w.accepted).map(write).collect();
    let mut per_step: BTreeMap<u32, u32> = BTreeMap::new();
    for w in row.writes.iter().filter(|w| w.accepted) {
        *per_step.entry(w.step).or_default() += 1;
    }
    out.insert("accepted_writes".into(), json!(accepted));
    out.insert("rejected_writes".into(), json!(rejected));
    out.insert("balance".into(), json!(row.balance));
    out.insert(
        "steps_applied_twice".into(),
        json!(per_step.values().filter(|n| **n > 1).count()),
    );
}
