//! `redis-failover` (curriculum §4–6): worker A's lock is acknowledged by the Redis
//! primary, which crashes before its replication stream carries the write to either replica.
//! The failover monitor promotes a replica that never heard of the lock — nor of the token
//! counter's last increment — and worker B's `SET NX` succeeds with the same token A got.
//!
//! Node ids and names match `consensus-lock`, so the pair can run side by side with the same
//! seed and the same fault clicks: 0 `store-1` (the primary), 1 `store-2`, 2 `store-3`,
//! 3 `worker-a`, 4 `worker-b`, 5 `ledger`, and here 6 `sentinel`.

use super::common::WORKER_FAULTS;
use super::redis_common::{
    add_ledger, fence_monotonic, fence_monotonic_spec, finished_by, ledger_outcome, ledger_row,
    ledger_tables, lock_cells, one_holder_spec, releases_own_spec, tokens_increase_spec, HolderWindow,
    STORE_FAULTS,
};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::collections::VecMap;
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::lease_msg::ReleaseMode;
use crate::protocols::redis::{RedisConfig, RedisDurable, RedisNode, Role};
use crate::protocols::redis_job::{JobDurable, JobPlan};
use crate::protocols::redis_msg::KeyEntry;
use crate::protocols::redis_sentinel::{Sentinel, SentinelConfig, SentinelDurable};
use crate::protocols::redis_worker::{RedisWorker, WorkerPlan};
use crate::trace::{columns, TableView};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const ID: &str = "redis-failover";
pub const STORE_1: NodeId = NodeId(0);
pub const STORE_2: NodeId = NodeId(1);
pub const STORE_3: NodeId = NodeId(2);
pub const WORKER_A: NodeId = NodeId(3);
pub const WORKER_B: NodeId = NodeId(4);
pub const LEDGER: NodeId = NodeId(5);
pub const SENTINEL: NodeId = NodeId(6);
const STORES: [NodeId; 3] = [STORE_1, STORE_2, STORE_3];
const WORKERS: [NodeId; 2] = [WORKER_A, WORKER_B];

pub const LOCK_KEY: &str = "lock";
pub const FENCE_KEY: &str = "fence";
/// The counter's value before the story starts: the first grant gets the next number.
pub const FENCE_START: u64 = 41;
pub const TTL_MS: u64 = 30_000;
/// Worker A's job fires at exactly this time; its lock is granted one hop later.
pub const A_START_MS: u64 = 200;
/// Worker B's job fires after A's grant and before the crash, so B first sees the lock held.
pub const B_START_MS: u64 = 220;
/// The scripted failure: the primary that granted A's lock crashes (true time).
pub const CRASH_AT_MS: u64 = 250;
pub const LATENCY_MIN_MS: u64 = 1;
pub const LATENCY_MAX_MS: u64 = 3;
const STEPS: u32 = 4;
const STEP_MS: u64 = 500;
const AMOUNT: i64 = 10;
/// Longer than the largest lag allowed, so a WAIT on a healthy primary always confirms.
const WAIT_TIMEOUT_MS: u64 = 1_000;
const PING_MS: u64 = 200;
const DOWN_AFTER_MS: u64 = 1_000;
const STOP_AT_MS: u64 = 6_000;

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 6,
        sections: "§4–6",
        title: "Redis failover loses the lock",
        summary: "Worker A's lock (and its fencing token, an INCR in the same script) is acknowledged by the Redis primary, which crashes before streaming the write to its replicas. The sentinel promotes a replica with no record of either; worker B's SET NX succeeds and gets the very same token. Two holders, one token, and a ledger that cannot tell them apart. Compare with consensus-lock.",
        params: vec![
            ParamSpec {
                key: "replication_lag_ms",
                label: "Replication lag",
                help: "How long the primary buffers a write before streaming it to the replicas. The primary crashes 50 ms after A's job fires; a write still buffered then is lost.",
                default: "100",
                kind: ParamKind::Int {
                    min: 0,
                    max: 500,
                    unit: "ms",
                },
            },
            ParamSpec {
                key: "wait",
                label: "WAIT after acquiring",
                help: "Whether a worker sends WAIT 1 1000 after its lock is granted and acts only once a replica confirms.",
                default: "off",
                kind: ParamKind::Choice {
                    options: vec![
                        ChoiceOption {
                            value: "off",
                            label: "off — trust the primary's OK",
                        },
                        ChoiceOption {
                            value: "wait-1",
                            label: "wait-1 — WAIT 1 1000, act only if a replica confirms",
                        },
                    ],
                },
            },
            ParamSpec {
                key: "release",
                label: "Release",
                help: "How a worker gives the lock back when its job is done.",
                default: "compare-and-delete",
                kind: ParamKind::Choice {
                    options: vec![
                        ChoiceOption {
                            value: "compare-and-delete",
                            label: "compare-and-delete — a script deletes the key only if it still holds my value",
                        },
                        ChoiceOption {
                            value: "del",
                            label: "del — DEL the key, whoever's value it holds",
                        },
                    ],
                },
            },
        ],
    }
}

fn lag_ms(params: &Params) -> u64 {
    params
        .get("replication_lag_ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

fn waits(params: &Params) -> bool {
    params.get("wait").is_some_and(|w| w == "wait-1")
}

fn release(params: &Params) -> ReleaseMode {
    match params.get("release").map(String::as_str) {
        Some("del") => ReleaseMode::NaiveDelete,
        _ => ReleaseMode::CompareAndDelete,
    }
}

/// Whether the crash certainly catches A's write still in the primary's buffer: the grant
/// lands one hop after A's job fires, the stream leaves `lag` later, the crash comes first.
pub fn write_certainly_lost(lag_ms: u64) -> bool {
    A_START_MS + LATENCY_MIN_MS + lag_ms >= CRASH_AT_MS
}

/// Whether the stream certainly leaves before the crash (and so reaches the replicas).
pub fn write_certainly_kept(lag_ms: u64) -> bool {
    A_START_MS + LATENCY_MAX_MS + lag_ms < CRASH_AT_MS
}

pub fn expectation(params: &Params) -> Expectation {
    let lag = lag_ms(params);
    let v = |ok: bool| if ok { Verdict::Holds } else { Verdict::Violated };
    let mut verdicts = vec![("fence-monotonic".to_string(), Verdict::Holds)];
    let mut outcome = Vec::new();
    if write_certainly_lost(lag) {
        // Without WAIT both work under the lock; with it A never acts on the lost grant —
        // but the token it was handed is handed out again either way.
        let two = !waits(params);
        let foreign_delete = two && release(params) == ReleaseMode::NaiveDelete;
        outcome.push((
            "max_concurrent_holders".to_string(),
            json!(if two { 2 } else { 1 }),
        ));
        outcome.push(("lock_lost".to_string(), json!(two)));
        outcome.push(("tokens_reissued".to_string(), json!(1)));
        verdicts.push(("one-holder-per-store".to_string(), v(!two)));
        verdicts.push(("tokens-increase".to_string(), Verdict::Violated));
        verdicts.push(("releases-only-own-lock".to_string(), v(!foreign_delete)));
    } else if write_certainly_kept(lag) {
        outcome.push(("max_concurrent_holders".to_string(), json!(1)));
        outcome.push(("lock_lost".to_string(), json!(false)));
        outcome.push(("tokens_reissued".to_string(), json!(0)));
        verdicts.push(("one-holder-per-store".to_string(), Verdict::Holds));
        verdicts.push(("tokens-increase".to_string(), Verdict::Holds));
        verdicts.push(("releases-only-own-lock".to_string(), Verdict::Holds));
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    setup_with_crash_at(params, CRASH_AT_MS)
}

/// The scenario with the primary's scripted crash at `crash_ms` (true time) instead.
pub fn setup_with_crash_at(params: &Params, crash_ms: u64) -> Setup {
    let mut setup = Setup::new(LinkConfig::reliable(
        LATENCY_MIN_MS * MS_US,
        LATENCY_MAX_MS * MS_US,
    ));
    let config = RedisConfig {
        persistence: true,
        replication_lag_ms: lag_ms(params),
    };
    // The counter has been used before: it sits at 41 on every node.
    let data = VecMap::from([(
        FENCE_KEY.to_string(),
        KeyEntry {
            value: FENCE_START.to_string(),
            expires_at_us: None,
        },
    )]);
    for (id, name) in STORES.into_iter().zip(["store-1", "store-2", "store-3"]) {
        let role = if id == STORE_1 {
            Role::Primary
        } else {
            Role::Replica { of: STORE_1 }
        };
        setup.add::<RedisNode>(
            name,
            "store",
            &STORE_FAULTS,
            config,
            RedisDurable::fresh(role, data.clone()),
        );
    }
    let plan = |short: &str, start_at_ms: u64| WorkerPlan {
        job: JobPlan {
            short: short.to_string(),
            key: LOCK_KEY.to_string(),
            ttl_ms: TTL_MS,
            start_at_ms,
            retry_ms: 500,
            max_attempts: 100,
            steps: STEPS,
            step_ms: STEP_MS,
            amount: AMOUNT,
            ledger: LEDGER,
        },
        fence_key: FENCE_KEY.to_string(),
        wait: waits(params).then_some((1, WAIT_TIMEOUT_MS)),
        release: release(params),
        request_timeout_ms: 300,
        sentinel: SENTINEL,
        first_primary: STORE_1,
    };
    for (name, short, start_at_ms) in [("worker-a", "a", A_START_MS), ("worker-b", "b", B_START_MS)] {
        setup.add::<RedisWorker>(
            name,
            "worker",
            &WORKER_FAULTS,
            plan(short, start_at_ms),
            JobDurable { finished: false },
        );
    }
    add_ledger(&mut setup);
    setup.add::<Sentinel>(
        "sentinel",
        "sentinel",
        &[
            FaultKind::Crash,
            FaultKind::Restart,
            FaultKind::Pause,
            FaultKind::Network,
        ],
        SentinelConfig {
            nodes: STORES.to_vec(),
            clients: WORKERS.to_vec(),
            ping_ms: PING_MS,
            down_after_ms: DOWN_AFTER_MS,
            stop_at_ms: STOP_AT_MS,
        },
        SentinelDurable {
            primary: STORE_1,
            epoch: 0,
        },
    );
    setup.script(crash_ms * MS_US, Fault::Crash { node: STORE_1 });
    setup.set_world(FailoverWorld::new());
    setup
}

/// A grant as the world saw it happen on a store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenGrant {
    pub worker: NodeId,
    pub value: String,
    pub token: Option<u64>,
    pub granted_by: NodeId,
}

pub struct FailoverWorld {
    window: HolderWindow,
    /// Every grant on any store, in the order they happened.
    pub grants: Vec<SeenGrant>,
    seen_grants: Vec<usize>,
    seen_deletions: Vec<usize>,
    tokens_ok: bool,
    pub tokens_reissued: u32,
    /// Releases that deleted another worker's value: (who released, whose value, where).
    pub foreign_releases: Vec<(NodeId, NodeId, NodeId)>,
    lock_lost_at_us: Option<u64>,
}

impl Default for FailoverWorld {
    fn default() -> Self {
        FailoverWorld::new()
    }
}

impl FailoverWorld {
    pub fn new() -> FailoverWorld {
        FailoverWorld {
            window: HolderWindow::default(),
            grants: Vec::new(),
            seen_grants: vec![0; STORES.len()],
            seen_deletions: vec![0; STORES.len()],
            tokens_ok: true,
            tokens_reissued: 0,
            foreign_releases: Vec::new(),
            lock_lost_at_us: None,
        }
    }

    /// The workers that are up and believe they hold the lock, with their ids.
    fn believers<'a>(nodes: &Nodes<'a>) -> Vec<(NodeId, &'a RedisWorker)> {
        WORKERS
            .iter()
            .filter_map(|id| nodes.live::<RedisWorker>(*id).map(|w| (*id, w)))
            .filter(|(_, w)| w.believes_it_holds())
            .collect()
    }

    /// The node the failover monitor currently calls primary.
    fn primary(nodes: &Nodes<'_>) -> NodeId {
        nodes
            .live::<Sentinel>(SENTINEL)
            .map(|s| s.primary)
            .or_else(|| nodes.durable::<Sentinel>(SENTINEL).map(|d| d.primary))
            .unwrap_or(STORE_1)
    }

    /// Whether the value is set, unexpired, on store `id` if it is up.
    fn store_has(nodes: &Nodes<'_>, id: NodeId, value: &str) -> bool {
        nodes
            .live::<RedisNode>(id)
            .and_then(|n| n.get(LOCK_KEY, nodes.local_now_us[id.index()]))
            .is_some_and(|e| e.value == value)
    }

    /// Believers whose lock the running primary does not have: the lock is gone for good.
    fn lost<'a>(nodes: &Nodes<'a>) -> Vec<(NodeId, &'a RedisWorker)> {
        let primary = Self::primary(nodes);
        if nodes.live::<RedisNode>(primary).is_none_or(|s| !s.is_primary()) {
            return Vec::new();
        }
        Self::believers(nodes)
            .into_iter()
            .filter(|(_, w)| {
                w.held
                    .as_ref()
                    .is_some_and(|h| !Self::store_has(nodes, primary, &h.value))
            })
            .collect()
    }

    /// Believers whose lock is on no running store at all (its only copy is on a node that
    /// is down, and what the network still carries is not known here).
    fn at_risk<'a>(nodes: &Nodes<'a>) -> Vec<(NodeId, &'a RedisWorker)> {
        Self::believers(nodes)
            .into_iter()
            .filter(|(_, w)| {
                w.held
                    .as_ref()
                    .is_some_and(|h| !STORES.iter().any(|s| Self::store_has(nodes, *s, &h.value)))
            })
            .collect()
    }

    fn observe(&mut self, nodes: &Nodes<'_>) {
        for (i, id) in STORES.iter().enumerate() {
            let Some(store) = nodes.live::<RedisNode>(*id) else {
                // A restarted node starts new lists; begin counting from scratch.
                self.seen_grants[i] = 0;
                self.seen_deletions[i] = 0;
                continue;
            };
            for g in store.grants.iter().skip(self.seen_grants[i]) {
                if let Some(token) = g.counter {
                    let highest = self.grants.iter().filter_map(|s| s.token).max();
                    if highest.is_some_and(|h| token <= h) {
                        self.tokens_ok = false;
                        self.tokens_reissued += 1;
                    }
                }
                self.grants.push(SeenGrant {
                    worker: g.client,
                    value: g.value.clone(),
                    token: g.counter,
                    granted_by: *id,
                });
            }
            self.seen_grants[i] = store.grants.len();
            for d in store.deletions.iter().skip(self.seen_deletions[i]) {
                let owner = self.grants.iter().find(|g| g.value == d.value).map(|g| g.worker);
                if let Some(owner) = owner.filter(|o| *o != d.client) {
                    self.foreign_releases.push((d.client, owner, *id));
                }
            }
            self.seen_deletions[i] = store.deletions.len();
        }
    }

    fn store_rows(nodes: &Nodes<'_>) -> Vec<Vec<String>> {
        STORES
            .iter()
            .map(|id| {
                let now = nodes.local_now_us[id.index()];
                let name = nodes.name(*id).to_string();
                let (role, data, offset) =
                    match (nodes.live::<RedisNode>(*id), nodes.durable::<RedisNode>(*id)) {
                        (Some(s), _) => (
                            match s.role {
                                Role::Primary => "primary".to_string(),
                                Role::Replica { of } => format!("replica of {}", nodes.name(of)),
                            },
                            &s.data,
                            s.offset.to_string(),
                        ),
                        (None, Some(d)) => ("DOWN (disk)".to_string(), &d.data, d.offset.to_string()),
                        (None, None) => return vec![name, "?".into()],
                    };
                let (lock, left) = lock_cells(data, LOCK_KEY, now);
                let fence = data
                    .get(FENCE_KEY)
                    .map_or("(none)".to_string(), |e| e.value.clone());
                vec![name, role, lock, left, fence, format!("#{offset}")]
            })
            .collect()
    }

    /// The recent writes of every primary's stream, and which node has each.
    fn stream_table(nodes: &Nodes<'_>) -> TableView {
        // Entries are told apart by the primary that wrote them: after a failover two
        // primaries may each have written a different #5.
        let mut entries: VecMap<(u64, NodeId), String> = VecMap::new();
        let streams: Vec<Option<(&Vec<_>, Option<&RedisNode>)>> = STORES
            .iter()
            .map(
                |id| match (nodes.live::<RedisNode>(*id), nodes.durable::<RedisNode>(*id)) {
                    (Some(s), _) => Some((&s.stream, Some(s))),
                    (None, Some(d)) => Some((&d.stream, None)),
                    _ => None,
                },
            )
            .collect();
        for (stream, _) in streams.iter().flatten() {
            for e in stream.iter() {
                entries.insert((e.offset, e.origin), e.op.label());
            }
        }
        let shown: Vec<_> = entries.iter().rev().take(8).collect();
        let rows = shown
            .into_iter()
            .rev()
            .map(|((offset, origin), label)| {
                let mut row = vec![
                    format!("#{offset}"),
                    nodes.name(*origin).to_string(),
                    label.clone(),
                ];
                for node in &streams {
                    let cell = match node {
                        Some((stream, live)) => {
                            let has = stream.iter().any(|e| e.offset == *offset && e.origin == *origin);
                            let buffered = live.is_some_and(|s| {
                                s.unsent
                                    .iter()
                                    .any(|e| e.offset == *offset && e.origin == *origin)
                            });
                            match (has, buffered, live.is_some()) {
                                (true, true, _) => "✓ not yet sent".to_string(),
                                (true, _, true) => "✓".to_string(),
                                (true, _, false) => "✓ (down)".to_string(),
                                (false, _, true) => "✗".to_string(),
                                (false, _, false) => "✗ (down)".to_string(),
                            }
                        }
                        None => "?".to_string(),
                    };
                    row.push(cell);
                }
                row
            })
            .collect();
        TableView {
            title: "replication stream".into(),
            columns: columns(&["#", "from", "write", "store-1", "store-2", "store-3"]),
            rows,
        }
    }

    /// What each worker believes, for the inspector.
    fn worker_table(nodes: &Nodes<'_>) -> TableView {
        let rows = WORKERS
            .iter()
            .map(|id| match nodes.live::<RedisWorker>(*id) {
                Some(w) => {
                    let (holds, token, from) = match &w.held {
                        Some(h) if w.believes_it_holds() => (
                            "yes".to_string(),
                            h.token.to_string(),
                            nodes.name(h.granted_by).to_string(),
                        ),
                        Some(h) => (
                            "not yet".to_string(),
                            h.token.to_string(),
                            nodes.name(h.granted_by).to_string(),
                        ),
                        None => ("no".to_string(), "—".to_string(), "—".to_string()),
                    };
                    vec![
                        nodes.name(*id).to_string(),
                        holds,
                        token,
                        from,
                        nodes.name(w.primary).to_string(),
                        w.doing(),
                    ]
                }
                None => vec![
                    nodes.name(*id).to_string(),
                    "no".into(),
                    "—".into(),
                    "—".into(),
                    "—".into(),
                    "down".into(),
                ],
            })
            .collect();
        TableView {
            title: "what each worker believes".into(),
            columns: columns(&["worker", "holds it?", "token", "granted by", "talks to", "doing"]),
            rows,
        }
    }
}

impl World for FailoverWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            one_holder_spec(),
            tokens_increase_spec(),
            fence_monotonic_spec(),
            releases_own_spec(),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.observe(nodes);
        let holders = Self::believers(nodes).len() as u32;
        self.window.observe(holders, nodes.now_us);
        if self.lock_lost_at_us.is_none() && !Self::lost(nodes).is_empty() {
            self.lock_lost_at_us = Some(nodes.now_us);
        }
        out.push(holders <= 1);
        out.push(self.tokens_ok);
        out.push(fence_monotonic(ledger_row(nodes, LEDGER)));
        out.push(self.foreign_releases.is_empty());
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        let believers = Self::believers(nodes);
        let describe = |(id, w): &(NodeId, &RedisWorker)| {
            let h = w.held.as_ref();
            format!(
                "{} (token {} from {})",
                nodes.name(*id),
                h.map_or(0, |h| h.token),
                h.map_or("", |h| nodes.name(h.granted_by))
            )
        };
        if believers.len() >= 2 {
            let who: Vec<String> = believers.iter().map(describe).collect();
            return Some(format!("Unsafe window: {} both hold the lock", who.join(" and ")));
        }
        if let Some(w) = Self::lost(nodes).first() {
            return Some(format!(
                "Lock lost: {} still works under its lock, but the primary now, {}, has no such key",
                describe(w),
                nodes.name(Self::primary(nodes))
            ));
        }
        Self::at_risk(nodes).first().map(|w| {
            format!(
                "Lock at risk: {} works under a lock whose only copy is on a node that is down",
                describe(w)
            )
        })
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let mut tables = vec![
            TableView {
                title: "the lock on every node (TTL by that node's clock)".into(),
                columns: columns(&[
                    "node",
                    "role",
                    "lock value",
                    "TTL left",
                    FENCE_KEY,
                    "stream offset",
                ]),
                rows: Self::store_rows(nodes),
            },
            Self::stream_table(nodes),
            Self::worker_table(nodes),
        ];
        if let Some(row) = ledger_row(nodes, LEDGER) {
            tables.extend(ledger_tables(nodes, row));
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        out.insert("max_concurrent_holders".into(), json!(self.window.max_concurrent));
        let grants: Vec<Value> = self
            .grants
            .iter()
            .map(|g| {
                json!({
                    "worker": nodes.name(g.worker),
                    "token_or_revision": g.token,
                    "granted_by": nodes.name(g.granted_by),
                })
            })
            .collect();
        out.insert("grants".into(), Value::Array(grants));
        out.insert("tokens_reissued".into(), json!(self.tokens_reissued));
        out.insert("lock_lost".into(), json!(self.lock_lost_at_us.is_some()));
        out.insert(
            "lock_lost_at_ms".into(),
            self.lock_lost_at_us.map_or(Value::Null, |us| json!(us / MS_US)),
        );
        out.insert(
            "unsafe_window_ms".into(),
            json!(self.window.total_ms(nodes.now_us)),
        );
        out.insert(
            "foreign_releases".into(),
            Value::Array(self
                .foreign_releases
                .iter()
                .map(|(by, owner, on)| json!({"by": nodes.name(*by), "deleted_lock_of": nodes.name(*owner), "on": nodes.name(*on)}))
                .collect()),
        );
        if let Some(s) = nodes.live::<Sentinel>(SENTINEL) {
            out.insert(
                "failovers".into(),
                Value::Array(
                    s.failovers
                        .iter()
                        .map(|f| json!({"from": nodes.name(f.from), "to": nodes.name(f.to)}))
                        .collect(),
                ),
            );
            out.insert("final_primary".into(), json!(nodes.name(s.primary)));
        }
        if let Some(row) = ledger_row(nodes, LEDGER) {
            ledger_outcome(nodes, row, &mut out);
        }
        out.insert("finished_by".into(), finished_by::<RedisWorker>(nodes, &WORKERS));
        out
    }
}
