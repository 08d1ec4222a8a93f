//! `redlock` (curriculum §4, §7): the lock across five independent Redis masters. A client
//! needs three OKs and validity left (TTL − time spent acquiring − a drift allowance);
//! otherwise it unlocks all five. Each `fault` value bets against one of the algorithm's
//! timing assumptions — some bets it wins, some give two clients a majority at once.

use super::lease_common::WORKER_FAULTS;
use super::redis_common::{
    fence_monotonic, fence_monotonic_spec, ledger_node, ledger_outcome, ledger_row, ledger_tables,
    live_store, one_holder_spec, store_node, HolderWindow, RedisLabDurable, RedisLabNode,
};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::engine::{Engine, Limits, Nodes, Recording, Setup, World};
use crate::kernel::faults::{Action, Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::time::{format_signed_ms, MS_US};
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::redis::{RedisConfig, RedisNode, Role};
use crate::protocols::redis_msg::tenths;
use crate::protocols::redlock_client::{RedlockClient, RedlockDurable, RedlockPlan};
use crate::trace::{NodeInfo, TableView, Trace};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const ID: &str = "redlock";
pub const MASTERS: [NodeId; 5] = [NodeId(0), NodeId(1), NodeId(2), NodeId(3), NodeId(4)];
pub const CLIENT_A: NodeId = NodeId(5);
pub const CLIENT_B: NodeId = NodeId(6);
pub const LEDGER: NodeId = NodeId(7);
const CLIENTS: [NodeId; 2] = [CLIENT_A, CLIENT_B];
/// The master whose clock jumps or that restarts.
const REDIS_3: NodeId = NodeId(2);

pub const LOCK_KEY: &str = "lock";
pub const TTL_MS: u64 = 10_000;
const A_START_MS: u64 = 100;
const B_START_MS: u64 = 1_500;
/// When node 3's clock jumps, or it crashes.
const FAULT_AT_MS: u64 = 1_000;
/// Long enough to outlive the TTL.
const PAUSE_MS: u64 = TTL_MS + 2_000;
const STEPS: u32 = 4;
const STEP_MS: u64 = 2_000;
const AMOUNT: i64 = 10;
const MASTER_TIMEOUT_MS: u64 = 50;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedlockFault {
    ClockJump,
    PauseBeforeCheck,
    PauseAfterCheck,
    RestartWithoutPersistence,
    DelayedRestart,
}

impl RedlockFault {
    fn parse(params: &Params) -> RedlockFault {
        match params.get("fault").map(String::as_str) {
            Some("pause-before-check") => RedlockFault::PauseBeforeCheck,
            Some("pause-after-check") => RedlockFault::PauseAfterCheck,
            Some("restart-without-persistence") => RedlockFault::RestartWithoutPersistence,
            Some("delayed-restart") => RedlockFault::DelayedRestart,
            _ => RedlockFault::ClockJump,
        }
    }

    /// Whether the algorithm's bet fails here: two clients at once believe they hold it.
    pub fn gives_two_holders(self) -> bool {
        matches!(
            self,
            RedlockFault::ClockJump | RedlockFault::PauseAfterCheck | RedlockFault::RestartWithoutPersistence
        )
    }

    /// Whether client-a cannot reach redis-4 and redis-5, so that it locks nodes 1–3 only.
    fn a_cut_off_from_4_and_5(self) -> bool {
        matches!(
            self,
            RedlockFault::ClockJump | RedlockFault::RestartWithoutPersistence | RedlockFault::DelayedRestart
        )
    }
}

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 6,
        sections: "§4, §7",
        title: "Redlock: five masters and a bet on time",
        summary: "Two clients take a lock across five independent Redis masters: three OKs, and validity = TTL − time spent acquiring − drift allowance, or unlock all five and retry. Redlock hands out no fencing token. Pick the fault: some the algorithm survives, others leave both clients holding a majority.",
        params: vec![ParamSpec {
            key: "fault",
            label: "Fault",
            help: "Which timing assumption breaks. In the clock and restart variants client-a cannot reach redis-4 and redis-5, so its lock rests on redis-1..3.",
            default: "clock-jump",
            kind: ParamKind::Choice {
                options: vec![
                    ChoiceOption {
                        value: "clock-jump",
                        label: "clock jump — redis-3's clock leaps ahead and A's key there expires (two holders)",
                    },
                    ChoiceOption {
                        value: "pause-before-check",
                        label: "pause before check — A freezes while the answers are in flight; its check rejects the lock (safe)",
                    },
                    ChoiceOption {
                        value: "pause-after-check",
                        label: "pause after check — A freezes after its check and acts on a lapsed lock (two holders)",
                    },
                    ChoiceOption {
                        value: "restart-without-persistence",
                        label: "restart without persistence — redis-3 comes straight back empty (two holders)",
                    },
                    ChoiceOption {
                        value: "delayed-restart",
                        label: "delayed restart — redis-3 stays down longer than the TTL, then comes back empty (safe)",
                    },
                ],
            },
        }],
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let fault = RedlockFault::parse(params);
    let two = fault.gives_two_holders();
    let mut outcome = vec![(
        "max_concurrent_holders".to_string(),
        json!(if two { 2 } else { 1 }),
    )];
    if fault == RedlockFault::PauseBeforeCheck {
        outcome.push(("locks_rejected_for_time".to_string(), json!(1)));
    }
    let verdicts = vec![
        (
            "one-holder-per-store".to_string(),
            if two { Verdict::Violated } else { Verdict::Holds },
        ),
        ("fence-monotonic".to_string(), Verdict::Holds),
    ];
    Expectation { outcome, verdicts }
}

pub fn names() -> Vec<String> {
    [
        "redis-1", "redis-2", "redis-3", "redis-4", "redis-5", "client-a", "client-b", "ledger",
    ]
    .map(String::from)
    .to_vec()
}

fn scripted(fault: RedlockFault) -> Vec<(u64, Fault)> {
    let mut out = Vec::new();
    if fault.a_cut_off_from_4_and_5() {
        for m in [NodeId(3), NodeId(4)] {
            out.push((
                0,
                Fault::CutLink {
                    from: CLIENT_A,
                    to: m,
                },
            ));
        }
    }
    let at = FAULT_AT_MS * MS_US;
    match fault {
        RedlockFault::ClockJump => out.push((
            at,
            Fault::ClockJump {
                node: REDIS_3,
                delta_ms: (TTL_MS + 5_000) as i64,
            },
        )),
        // Just after A's requests leave, before any answer can arrive.
        RedlockFault::PauseBeforeCheck => out.push((
            A_START_MS * MS_US + 500,
            Fault::Pause {
                node: CLIENT_A,
                duration_ms: PAUSE_MS,
            },
        )),
        // After A's check, in the middle of its first step's work.
        RedlockFault::PauseAfterCheck => out.push((
            (A_START_MS + 200) * MS_US,
            Fault::Pause {
                node: CLIENT_A,
                duration_ms: PAUSE_MS,
            },
        )),
        RedlockFault::RestartWithoutPersistence | RedlockFault::DelayedRestart => {
            let down_ms = if fault == RedlockFault::DelayedRestart {
                TTL_MS + 2_000
            } else {
                100
            };
            out.push((at, Fault::Crash { node: REDIS_3 }));
            out.push((at + down_ms * MS_US, Fault::Restart { node: REDIS_3 }));
        }
    }
    out
}

pub fn setup(params: &Params) -> Setup<RedlockWorld> {
    let fault = RedlockFault::parse(params);
    let names = names();
    let config = RedisConfig {
        names: names.clone(),
        persistence: false,
        replication_lag_ms: 0,
    };
    let info = |id: NodeId, kind: &str, faults: Vec<FaultKind>| NodeInfo {
        id,
        name: names[id.index()].clone(),
        kind: kind.to_string(),
        faults,
    };
    let master_faults = vec![
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Network,
        FaultKind::Clock,
    ];
    let mut nodes = Vec::new();
    for m in MASTERS {
        let (n, d) = store_node(RedisNode::new(m, config.clone(), Role::Primary, BTreeMap::new()));
        nodes.push((info(m, "store", master_faults.clone()), n, d));
    }
    let plan = |short: &str, start_at_ms: u64| RedlockPlan {
        names: names.clone(),
        short: short.to_string(),
        key: LOCK_KEY.to_string(),
        masters: MASTERS.to_vec(),
        ttl_ms: TTL_MS,
        master_timeout_ms: MASTER_TIMEOUT_MS,
        retry_ms: 1_000,
        retry_jitter_ms: 200,
        start_at_ms,
        max_attempts: 40,
        steps: STEPS,
        step_ms: STEP_MS,
        amount: AMOUNT,
        ledger: LEDGER,
    };
    for (id, short, start) in [(CLIENT_A, "a", A_START_MS), (CLIENT_B, "b", B_START_MS)] {
        let d = RedlockDurable {
            name: names[id.index()].clone(),
            plan: plan(short, start),
            finished: false,
        };
        nodes.push((
            info(id, "worker", WORKER_FAULTS.to_vec()),
            RedisLabNode::Redlock(RedlockClient::recover(&d)),
            RedisLabDurable::Redlock(d),
        ));
    }
    let (ledger, ledger_d) = ledger_node(&names);
    nodes.push((
        info(LEDGER, "resource", vec![FaultKind::Pause, FaultKind::Network]),
        ledger,
        ledger_d,
    ));
    Setup {
        world: RedlockWorld::new(names),
        nodes,
        link: LinkConfig::reliable(MS_US, 3 * MS_US),
        scripted: scripted(fault),
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

pub struct RedlockWorld {
    pub names: Vec<String>,
    window: HolderWindow,
    /// Every quorum lock a client took: (client, the masters that granted it).
    pub grants: Vec<(NodeId, Vec<NodeId>)>,
    seen: Vec<usize>,
    rejected_for_time: Vec<u32>,
    rejected_total: u32,
}

impl RedlockWorld {
    pub fn new(names: Vec<String>) -> RedlockWorld {
        RedlockWorld {
            names,
            window: HolderWindow::default(),
            grants: Vec::new(),
            seen: vec![0; CLIENTS.len()],
            rejected_for_time: vec![0; CLIENTS.len()],
            rejected_total: 0,
        }
    }

    fn name(&self, id: NodeId) -> String {
        self.names.get(id.index()).cloned().unwrap_or_default()
    }

    fn list(&self, ids: &[NodeId]) -> String {
        ids.iter().map(|n| self.name(*n)).collect::<Vec<_>>().join(", ")
    }

    fn client<'a>(nodes: &'a Nodes<'_, RedisLabNode>, id: NodeId) -> Option<&'a RedlockClient> {
        match nodes.live.get(id.index()) {
            Some(Some(RedisLabNode::Redlock(c))) => Some(c),
            _ => None,
        }
    }

    fn believers<'a>(&self, nodes: &'a Nodes<'_, RedisLabNode>) -> Vec<&'a RedlockClient> {
        CLIENTS
            .iter()
            .filter_map(|c| Self::client(nodes, *c))
            .filter(|c| c.believes_it_holds())
            .collect()
    }

    fn observe(&mut self, nodes: &Nodes<'_, RedisLabNode>) {
        for (i, id) in CLIENTS.iter().enumerate() {
            let Some(c) = Self::client(nodes, *id) else {
                self.seen[i] = 0;
                self.rejected_for_time[i] = 0;
                continue;
            };
            for masters in c.acquisitions.iter().skip(self.seen[i]) {
                self.grants.push((*id, masters.clone()));
            }
            self.seen[i] = c.acquisitions.len();
            self.rejected_total += c.rejected_for_time.saturating_sub(self.rejected_for_time[i]);
            self.rejected_for_time[i] = c.rejected_for_time;
        }
    }
}

impl World for RedlockWorld {
    type Node = RedisLabNode;

    fn properties(&self) -> Vec<PropertySpec> {
        vec![one_holder_spec(), fence_monotonic_spec()]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_, RedisLabNode>, out: &mut Vec<bool>) {
        self.observe(nodes);
        let holders = self.believers(nodes).len() as u32;
        self.window.observe(holders, nodes.now_us);
        out.push(holders <= 1);
        out.push(fence_monotonic(ledger_row(nodes, LEDGER)));
    }

    fn highlight(&self, nodes: &Nodes<'_, RedisLabNode>) -> Option<String> {
        let believers = self.believers(nodes);
        (believers.len() >= 2).then(|| {
            let who: Vec<String> = believers
                .iter()
                .map(|c| {
                    let masters = c.held.as_ref().map(|h| self.list(&h.masters)).unwrap_or_default();
                    format!("{} ({masters})", c.name)
                })
                .collect();
            format!("Unsafe window: {} each hold a majority", who.join(" and "))
        })
    }

    fn tables(&self, nodes: &Nodes<'_, RedisLabNode>) -> Vec<TableView> {
        let masters = MASTERS
            .iter()
            .map(|m| {
                let now = nodes.local_now_us[m.index()];
                let offset = format_signed_ms(now as i64 - nodes.now_us as i64);
                match live_store(nodes, *m) {
                    Some(s) => {
                        let (value, left) = match s.data.get(LOCK_KEY) {
                            Some(e) => (
                                e.value.clone(),
                                match e.expires_at_us {
                                    Some(at) if at > now => tenths((at - now) / MS_US),
                                    Some(_) => "expired".to_string(),
                                    None => "—".to_string(),
                                },
                            ),
                            None => ("(none)".to_string(), "—".to_string()),
                        };
                        vec![self.name(*m), value, left, offset]
                    }
                    None => vec![self.name(*m), "DOWN".into(), "—".into(), offset],
                }
            })
            .collect();
        let clients = CLIENTS
            .iter()
            .map(|id| match Self::client(nodes, *id) {
                Some(c) => {
                    let now = nodes.local_now_us[id.index()];
                    let (holds, on, left) = match &c.held {
                        Some(h) if c.believes_it_holds() => (
                            "yes".to_string(),
                            self.list(&h.masters),
                            if h.deadline_local_us > now {
                                tenths((h.deadline_local_us - now) / MS_US)
                            } else {
                                "0 s (still acting)".to_string()
                            },
                        ),
                        _ => ("no".to_string(), "—".to_string(), "—".to_string()),
                    };
                    vec![c.name.clone(), holds, on, left, c.summary(now)[0].clone()]
                }
                None => vec![self.name(*id), "no".into(), "—".into(), "—".into(), "down".into()],
            })
            .collect();
        let mut tables = vec![
            TableView {
                title: "the lock on each master (TTL by that master's clock)".into(),
                columns: ["master", "lock value", "TTL left", "clock offset"]
                    .map(String::from)
                    .to_vec(),
                rows: masters,
            },
            TableView {
                title: "what each client believes".into(),
                columns: [
                    "client",
                    "holds it?",
                    "granted by",
                    "validity left (own clock)",
                    "doing",
                ]
                .map(String::from)
                .to_vec(),
                rows: clients,
            },
        ];
        if let Some(row) = ledger_row(nodes, LEDGER) {
            tables.extend(ledger_tables(&self.names, row));
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_, RedisLabNode>) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        out.insert("max_concurrent_holders".into(), json!(self.window.max_concurrent));
        let grants: Vec<Value> = self
            .grants
            .iter()
            .map(|(c, masters)| {
                json!({
                    "worker": self.name(*c),
                    "token_or_revision": Value::Null,
                    "granted_by": masters.iter().map(|m| self.name(*m)).collect::<Vec<_>>(),
                })
            })
            .collect();
        out.insert("grants".into(), json!(grants));
        out.insert("locks_rejected_for_time".into(), json!(self.rejected_total));
        out.insert(
            "unsafe_window_ms".into(),
            json!(self.window.total_ms(nodes.now_us)),
        );
        if let Some(row) = ledger_row(nodes, LEDGER) {
            ledger_outcome(&self.names, row, &mut out);
        }
        let finished: Vec<String> = CLIENTS
            .iter()
            .filter(|c| matches!(&nodes.durable[c.index()], RedisLabDurable::Redlock(d) if d.finished))
            .map(|c| self.name(*c))
            .collect();
        out.insert("finished_by".into(), json!(finished));
        out
    }
}
