//! `zookeeper-lock` (curriculum §7): the lock recipe on ephemeral sequential znodes. Every
//! worker creates `/lock/n-…`; the lowest number holds the lock and that number is its
//! fencing token; each waiter watches the node just ahead of it, so a release wakes one
//! waiter. worker-1 freezes in a GC pause while holding the lock: ZooKeeper hears no pings,
//! expires its session and deletes its node; worker-2 takes over with a higher token, and
//! when worker-1 wakes its late debit is refused by the ledger. With `watch=lock-node` every
//! waiter watches `/lock` itself and wakes on every change — the herd effect, counted per
//! release.

use super::lease_common::WORKER_FAULTS;
use super::lock_service_common::{
    fence_monotonic, ledger_outcome, ledger_relay, ledger_tables, name, GrantLog, HolderCount, LockProperty,
};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::engine::{Engine, Limits, Nodes, Recording, Setup, World};
use crate::kernel::faults::{Action, Fault, FaultKind};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::network::LinkConfig;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::fenced_resource::{FencedResource, ResourceDurable};
use crate::protocols::lease_msg::seconds;
use crate::protocols::zk_lock_worker::{WatchMode, ZkLockWorker, ZkWorkerDurable, ZkWorkerPlan};
use crate::protocols::zookeeper::{base_name, ReleaseCause, ZkMsg, ZkService, ZkTimer};
use crate::trace::{NodeInfo, TableView, Trace};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const ID: &str = "zookeeper-lock";
pub const SERVICE: NodeId = NodeId(0);
pub const LEDGER: NodeId = NodeId(1);
/// The first worker; the others follow in id order.
pub const FIRST_WORKER: NodeId = NodeId(2);
pub const LOCK_PATH: &str = "/lock";
const OPENING: i64 = 1_000;
const AMOUNT: i64 = 10;
const STEPS: u32 = 2;
const STEP_MS: u64 = 1_000;
/// worker-1's job fires first; each next worker 100 ms later.
const START_MS: u64 = 100;
const START_GAP_MS: u64 = 100;
/// When worker-1 freezes: in the middle of its second step.
pub const PAUSE_AT_MS: u64 = 1_500;

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 6,
        sections: "§7",
        title: "ZooKeeper lock: sequential nodes, watches and a session that expires",
        summary: "Workers queue for a lock as numbered ephemeral nodes under /lock; the lowest number holds it and uses that number as its fencing token. worker-1 freezes mid-job, its session expires, its node is deleted and the next in line takes over with a higher number; worker-1's late debit is refused by the ledger. Switch the watch to the lock node to see every release wake the whole queue.",
        params: vec![
            ParamSpec {
                key: "watch",
                label: "What each waiter watches",
                help: "The node just ahead of its own, or the lock node itself (every change wakes every waiter).",
                default: "predecessor",
                kind: ParamKind::Choice {
                    options: vec![
                        ChoiceOption {
                            value: "predecessor",
                            label: "predecessor — exists(node ahead, watch): one wake-up per release",
                        },
                        ChoiceOption {
                            value: "lock-node",
                            label: "lock node — getChildren(/lock, watch): the herd wakes every time",
                        },
                    ],
                },
            },
            ParamSpec {
                key: "waiters",
                label: "Waiters",
                help: "How many workers queue behind worker-1.",
                default: "4",
                kind: ParamKind::Int {
                    min: 2,
                    max: 8,
                    unit: "",
                },
            },
            ParamSpec {
                key: "session_timeout_ms",
                label: "Session timeout",
                help: "How long ZooKeeper waits, by its own clock, without hearing from a client before it expires the session. Clients ping every third of it.",
                default: "4000",
                kind: ParamKind::Int {
                    min: 1_000,
                    max: 30_000,
                    unit: "ms",
                },
            },
            ParamSpec {
                key: "pause_ms",
                label: "worker-1's pause",
                help: "How long worker-1 freezes (a GC pause) from 1.5 s, in the middle of its job; 0 for no pause.",
                default: "8000",
                kind: ParamKind::Int {
                    min: 0,
                    max: 60_000,
                    unit: "ms",
                },
            },
        ],
    }
}

fn num(params: &Params, key: &str, default: u64) -> u64 {
    params.get(key).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn watch_mode(params: &Params) -> WatchMode {
    match params.get("watch").map(String::as_str) {
        Some("lock-node") => WatchMode::LockNode,
        _ => WatchMode::Predecessor,
    }
}

/// Whether worker-1's session surely expires during its pause and the next holder has
/// written before worker-1 wakes (so its late write meets a higher token).
fn expiry_story(params: &Params) -> bool {
    let timeout = num(params, "session_timeout_ms", 4_000);
    num(params, "pause_ms", 8_000) >= timeout + STEP_MS + 300
}

/// Whether worker-1 surely keeps its session (it never goes quiet long enough).
fn no_expiry(params: &Params) -> bool {
    let timeout = num(params, "session_timeout_ms", 4_000);
    // Pings go every third of the timeout; a pause shorter than the rest cannot expire it.
    num(params, "pause_ms", 8_000) + timeout / 3 + 200 < timeout
}

pub fn expectation(params: &Params) -> Expectation {
    let waiters = num(params, "waiters", 4);
    let herd = watch_mode(params) == WatchMode::LockNode;
    let holds = |name: &str| (name.to_string(), Verdict::Holds);
    let mut verdicts = vec![
        holds("one-holder-per-store"),
        holds("tokens-increase"),
        holds("fence-monotonic"),
    ];
    verdicts.push((
        "one-wakeup-per-release".to_string(),
        if herd { Verdict::Violated } else { Verdict::Holds },
    ));
    let mut outcome = vec![
        ("max_concurrent_holders".to_string(), json!(1)),
        ("handovers".to_string(), json!(waiters)),
    ];
    let story = expiry_story(params);
    if story || no_expiry(params) {
        // Every release wakes the next in line; the last wakes nobody. With the herd, the
        // k-th release wakes everyone still queued.
        let per_release: Vec<u64> = (0..=waiters)
            .map(|k| match (herd, k < waiters) {
                (true, _) => waiters - k,
                (false, true) => 1,
                (false, false) => 0,
            })
            .collect();
        outcome.push(("wakeups_per_release".to_string(), json!(per_release)));
        outcome.push(("first_holder_session_expired".to_string(), json!(story)));
    }
    if story {
        outcome.push(("stale_write_rejected".to_string(), json!(true)));
        outcome.push(("max_concurrent_believers".to_string(), json!(2)));
    }
    Expectation { outcome, verdicts }
}

#[derive(Clone, Debug)]
pub enum ZkNode {
    Service(Box<ZkService>),
    Worker(ZkLockWorker),
    Ledger(FencedResource),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkDurable {
    /// The ensemble keeps its own state safe (the Raft chapter); this model never crashes
    /// it, so only its starting state is kept here.
    Service(Box<ZkService>),
    Worker(ZkWorkerDurable),
    Ledger(ResourceDurable, Vec<String>),
}

impl From<ZkWorkerDurable> for ZkDurable {
    fn from(d: ZkWorkerDurable) -> Self {
        ZkDurable::Worker(d)
    }
}

impl Participant for ZkNode {
    type Msg = ZkMsg;
    type Timer = ZkTimer;
    type Durable = ZkDurable;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        match self {
            ZkNode::Service(_) => ctx.note(
                "ZooKeeper is up: a replicated ensemble, drawn here as one service because its servers agree on one order of every change — how they agree is what the Raft chapter shows. /lock exists and has no children.",
            ),
            ZkNode::Worker(w) => w.start(ctx),
            ZkNode::Ledger(l) => ctx.note(format!(
                "The ledger holds account 42 at ₹{} and refuses any write whose token is below the highest it has seen.",
                l.durable.balance
            )),
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ZkMsg) {
        match (self, msg) {
            (ZkNode::Ledger(l), ZkMsg::Ledger(m)) => {
                let names = l.names.clone();
                ledger_relay(l, ctx, from, m, ZkMsg::Ledger, |d| {
                    ZkDurable::Ledger(d, names.clone())
                });
            }
            (ZkNode::Service(s), m) => s.handle(ctx, from, m),
            (ZkNode::Worker(w), m) => w.message(ctx, m),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ZkTimer) {
        match self {
            ZkNode::Service(s) => s.timer(ctx, timer),
            ZkNode::Worker(w) => w.timer(ctx, timer),
            ZkNode::Ledger(_) => {}
        }
    }

    fn recover(_id: NodeId, durable: &ZkDurable) -> Self {
        match durable {
            ZkDurable::Service(s) => ZkNode::Service(s.clone()),
            ZkDurable::Worker(d) => ZkNode::Worker(ZkLockWorker::recover(d)),
            ZkDurable::Ledger(d, names) => ZkNode::Ledger(FencedResource {
                names: names.clone(),
                durable: d.clone(),
            }),
        }
    }

    fn summary(&self, local_now_us: u64) -> Vec<String> {
        match self {
            ZkNode::Service(s) => s.summary(LOCK_PATH, local_now_us),
            ZkNode::Worker(w) => w.summary(),
            ZkNode::Ledger(l) => l.summary(),
        }
    }

    fn durable_summary(durable: &ZkDurable) -> Vec<String> {
        match durable {
            ZkDurable::Worker(d) if d.finished => vec!["down".into(), "batch posted".into()],
            ZkDurable::Worker(_) => vec!["down".into(), "batch not posted".into()],
            _ => vec!["down".into(), "state kept on disk".into()],
        }
    }
}

const PROPERTIES: [LockProperty; 4] = [
    LockProperty::OneHolderPerStore,
    LockProperty::TokensIncrease,
    LockProperty::FenceMonotonic,
    LockProperty::OneWakeupPerRelease,
];

pub struct ZkWorld {
    pub names: Vec<String>,
    pub workers: Vec<NodeId>,
    pub grants: GrantLog,
    pub holders: HolderCount,
}

impl ZkWorld {
    fn service<'a>(&self, nodes: &'a Nodes<'_, ZkNode>) -> Option<&'a ZkService> {
        match &nodes.live[SERVICE.index()] {
            Some(ZkNode::Service(s)) => Some(s),
            _ => match &nodes.durable[SERVICE.index()] {
                ZkDurable::Service(s) => Some(s),
                _ => None,
            },
        }
    }

    fn ledger<'a>(&self, nodes: &'a Nodes<'_, ZkNode>) -> Option<&'a ResourceDurable> {
        match (&nodes.live[LEDGER.index()], &nodes.durable[LEDGER.index()]) {
            (Some(ZkNode::Ledger(l)), _) => Some(&l.durable),
            (_, ZkDurable::Ledger(d, _)) => Some(d),
            _ => None,
        }
    }

    fn worker<'a>(nodes: &'a Nodes<'_, ZkNode>, id: NodeId) -> Option<&'a ZkLockWorker> {
        match &nodes.live[id.index()] {
            Some(ZkNode::Worker(w)) => Some(w),
            _ => None,
        }
    }

    fn believers<'a>(&self, nodes: &'a Nodes<'_, ZkNode>) -> Vec<&'a ZkLockWorker> {
        self.workers
            .iter()
            .filter_map(|id| Self::worker(nodes, *id))
            .filter(|w| w.believes_it_holds())
            .collect()
    }

    /// Believers whose node is, by ZooKeeper's own tree, the lowest child of the lock.
    fn holders(&self, nodes: &Nodes<'_, ZkNode>) -> u32 {
        let Some(s) = self.service(nodes) else { return 0 };
        let first = s.children(LOCK_PATH).into_iter().next();
        self.believers(nodes)
            .iter()
            .filter(|w| {
                w.node
                    .as_deref()
                    .is_some_and(|n| first.as_deref() == Some(base_name(n)))
            })
            .count() as u32
    }
}

impl World for ZkWorld {
    type Node = ZkNode;

    fn properties(&self) -> Vec<PropertySpec> {
        PROPERTIES.iter().map(|p| p.spec()).collect()
    }

    fn evaluate(&mut self, nodes: &Nodes<'_, ZkNode>, out: &mut Vec<bool>) {
        // The lock is granted when a node becomes the lowest child, whether or not its owner
        // has listed /lock yet; a worker acting later on a stale listing is not a new grant.
        if let Some((owner, token)) = self.service(nodes).and_then(first_in_line) {
            self.grants.observe(owner, token, SERVICE, nodes.now_us);
        }
        let holders = self.holders(nodes);
        self.holders
            .observe(holders, self.believers(nodes).len() as u32, nodes.now_us);
        let service = self.service(nodes);
        for p in PROPERTIES {
            out.push(match p {
                LockProperty::OneHolderPerStore => holders <= 1,
                LockProperty::TokensIncrease => self.grants.tokens_ok,
                LockProperty::FenceMonotonic => self.ledger(nodes).is_none_or(fence_monotonic),
                LockProperty::OneWakeupPerRelease => {
                    service.is_none_or(|s| s.releases.iter().all(|r| r.wakeups <= 1))
                }
            });
        }
    }

    fn highlight(&self, nodes: &Nodes<'_, ZkNode>) -> Option<String> {
        let believers = self.believers(nodes);
        let s = self.service(nodes)?;
        let first = s.children(LOCK_PATH).into_iter().next();
        let (real, stale): (Vec<&&ZkLockWorker>, Vec<&&ZkLockWorker>) = believers
            .iter()
            .partition(|w| w.node.as_deref().map(base_name) == first.as_deref());
        let zombie = stale.first()?;
        let token = |w: &ZkLockWorker| w.token.map(|t| t.to_string()).unwrap_or_default();
        Some(match real.first() {
            Some(holder) => format!(
                "{} still acts on the lock with token {}, but ZooKeeper deleted its node; {} holds it now with token {} — only the ledger's token check keeps them apart",
                zombie.name,
                token(zombie),
                holder.name,
                token(holder)
            ),
            None => format!(
                "{} still acts on the lock with token {}, but ZooKeeper has deleted its node",
                zombie.name,
                token(zombie)
            ),
        })
    }

    fn tables(&self, nodes: &Nodes<'_, ZkNode>) -> Vec<TableView> {
        let mut tables = Vec::new();
        if let Some(s) = self.service(nodes) {
            let (pred_watch, lock_watch) = (|path: &str| s.watchers(path).0, s.watchers(LOCK_PATH).1);
            let children = s.children(LOCK_PATH);
            let mut rows: Vec<Vec<String>> = children
                .iter()
                .enumerate()
                .map(|(i, child)| {
                    let path = format!("{LOCK_PATH}/{child}");
                    let node = s.nodes.get(&path);
                    let owner = node
                        .and_then(|n| n.owner)
                        .and_then(|o| s.sessions.get(&o))
                        .map(|x| name(&self.names, x.client))
                        .unwrap_or_default();
                    let watched: Vec<String> =
                        pred_watch(&path).iter().map(|c| name(&self.names, *c)).collect();
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
            tables.push(TableView {
                title: format!(
                    "{LOCK_PATH} children (watching {LOCK_PATH} itself: {})",
                    if lock_watch.is_empty() {
                        "nobody".to_string()
                    } else {
                        lock_watch
                            .iter()
                            .map(|c| name(&self.names, *c))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
                columns: ["node", "owner", "state", "watched by"]
                    .map(String::from)
                    .to_vec(),
                rows,
            });
            let now = nodes.local_now_us[SERVICE.index()];
            tables.push(TableView {
                title: "sessions (by ZooKeeper's clock)".into(),
                columns: ["session", "client", "last heard", "state"]
                    .map(String::from)
                    .to_vec(),
                rows: s
                    .sessions
                    .iter()
                    .map(|(id, x)| {
                        vec![
                            id.to_string(),
                            name(&self.names, x.client),
                            format!("{} ago", seconds(now.saturating_sub(x.last_heard_us) / MS_US)),
                            if x.alive {
                                format!("alive (expires after {} of silence)", seconds(x.timeout_ms))
                            } else {
                                "closed or expired".into()
                            },
                        ]
                    })
                    .collect(),
            });
            tables.push(TableView {
                title: "wake-ups per release".into(),
                columns: ["release", "node", "why", "still queued", "waiters woken", ""]
                    .map(String::from)
                    .to_vec(),
                rows: s
                    .releases
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        vec![
                            (i + 1).to_string(),
                            format!("{} ({})", base_name(&r.path), name(&self.names, r.owner)),
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
            });
        }
        tables.push(self.grants.table(&self.names));
        if let Some(l) = self.ledger(nodes) {
            tables.extend(ledger_tables(&self.names, l));
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_, ZkNode>) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        self.holders.insert_outcome(&mut out, nodes.now_us);
        out.insert("grants".into(), self.grants.json(&self.names));
        out.insert(
            "handovers".into(),
            json!(self.grants.grants.len().saturating_sub(1)),
        );
        if let Some(s) = self.service(nodes) {
            let per_release: Vec<u32> = s.releases.iter().map(|r| r.wakeups).collect();
            out.insert(
                "max_wakeups_per_release".into(),
                json!(per_release.iter().copied().max().unwrap_or(0)),
            );
            out.insert("wakeups_per_release".into(), json!(per_release));
            out.insert("wakeups_on_create".into(), json!(s.create_wakeups));
            let first = self.workers.first().copied();
            out.insert(
                "first_holder_session_expired".into(),
                json!(s
                    .releases
                    .iter()
                    .any(|r| Some(r.owner) == first && r.cause == ReleaseCause::SessionExpired)),
            );
        }
        if let Some(l) = self.ledger(nodes) {
            ledger_outcome(&self.names, l, &mut out);
            let first = self.workers.first().copied();
            out.insert(
                "stale_write_rejected".into(),
                json!(l.writes.iter().any(|w| Some(w.worker) == first && !w.accepted)),
            );
        }
        out
    }
}

/// The owner and token of the lowest child of the lock: the holder by ZooKeeper's tree.
fn first_in_line(s: &ZkService) -> Option<(NodeId, FencingToken)> {
    let first = s.children(LOCK_PATH).into_iter().next()?;
    let node = s.nodes.get(&format!("{LOCK_PATH}/{first}"))?;
    let owner = s.sessions.get(&node.owner?)?.client;
    Some((owner, ZkService::token_of(&first)?))
}

pub fn setup(params: &Params) -> Setup<ZkWorld> {
    let waiters = num(params, "waiters", 4).clamp(2, 8) as u32;
    let timeout_ms = num(params, "session_timeout_ms", 4_000).max(1);
    let watch = watch_mode(params);
    let mut names = vec!["zookeeper".to_string(), "ledger".to_string()];
    let workers: Vec<NodeId> = (0..=waiters).map(|k| NodeId(FIRST_WORKER.0 + k)).collect();
    names.extend((1..=waiters + 1).map(|k| format!("worker-{k}")));
    let info = |id: NodeId, kind: &str, faults: Vec<FaultKind>| NodeInfo {
        id,
        name: names[id.index()].clone(),
        kind: kind.into(),
        faults,
    };
    let service = ZkService::new(names.clone(), &[LOCK_PATH]);
    let ledger = FencedResource::new(names.clone(), OPENING);
    let mut nodes = vec![
        (
            // A clock fault on the service makes sessions expire early or late: its clock is
            // the one that judges them.
            info(
                SERVICE,
                "store",
                vec![FaultKind::Pause, FaultKind::Network, FaultKind::Clock],
            ),
            ZkNode::Service(Box::new(service.clone())),
            ZkDurable::Service(Box::new(service)),
        ),
        (
            info(LEDGER, "resource", vec![FaultKind::Pause, FaultKind::Network]),
            ZkNode::Ledger(ledger.clone()),
            ZkDurable::Ledger(ledger.durable.clone(), names.clone()),
        ),
    ];
    for (k, id) in workers.iter().enumerate() {
        let plan = ZkWorkerPlan {
            service: SERVICE,
            ledger: LEDGER,
            lock_path: LOCK_PATH.into(),
            watch,
            session_timeout_ms: timeout_ms,
            start_ms: START_MS + START_GAP_MS * k as u64,
            steps: STEPS,
            step_ms: STEP_MS,
            amount_per_step: AMOUNT,
            first_step: 1 + STEPS * k as u32,
        };
        let d = ZkWorkerDurable {
            name: names[id.index()].clone(),
            plan,
            finished: false,
        };
        nodes.push((
            info(*id, "worker", WORKER_FAULTS.to_vec()),
            ZkNode::Worker(ZkLockWorker::recover(&d)),
            ZkDurable::Worker(d),
        ));
    }
    let pause_ms = num(params, "pause_ms", 8_000);
    let scripted = if pause_ms > 0 {
        vec![(
            PAUSE_AT_MS * MS_US,
            Fault::Pause {
                node: FIRST_WORKER,
                duration_ms: pause_ms,
            },
        )]
    } else {
        Vec::new()
    };
    Setup {
        world: ZkWorld {
            names,
            workers,
            grants: GrantLog::new(),
            holders: HolderCount::default(),
        },
        nodes,
        link: LinkConfig::reliable(MS_US, 4 * MS_US),
        scripted,
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
