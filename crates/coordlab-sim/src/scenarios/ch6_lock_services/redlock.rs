//! `redlock` (curriculum §4, §7): the lock across five independent Redis masters. A client
//! needs three OKs and validity left (TTL − time spent acquiring − a drift allowance);
//! otherwise it unlocks all five. Each `fault` value bets against one of the algorithm's
//! timing assumptions — some bets it wins, some give two clients a majority at once.

use super::redis_common::{add_ledger, lock_cells, STORE_FAULTS};
use super::redlock_beats::beats;
use crate::json;
use crate::kernel::collections::VecMap;
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::{format_signed_duration, MS_US};
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::presentation::durations::tenths;
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::job::AMOUNT_PER_STEP;
use crate::protocols::redis_locks::redis::{RedisConfig, RedisDurable, RedisNode, Role};
use crate::protocols::redis_locks::redis_job::JobPlan;
use crate::protocols::redis_locks::redlock_client::{RedlockClient, RedlockLock, RedlockPlan};
use crate::scenarios::common::{
    down_worker_row, finished_by, place_fresh_workers, runner_believers, runner_holdings, HolderCount,
};
use crate::scenarios::lease_setup::choice;
use crate::scenarios::property_library::{
    fence_monotonic, fence_monotonic_spec, ledger_outcome, ledger_row, ledger_tables,
    one_holder_per_store_spec,
};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

pub const ID: &str = "redlock";
/// Who the setup added: five independent masters, the two clients, the ledger.
#[derive(Clone, Copy, Debug)]
pub struct RedlockCast {
    pub masters: [NodeId; 5],
    pub clients: [NodeId; 2],
    pub ledger: NodeId,
}

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
const MASTER_TIMEOUT_MS: u64 = 50;
/// pause-before-check freezes A this long after its requests leave: under the fastest
/// answer from a master (1 ms each way), so every answer is still in flight.
const BEFORE_ANSWERS_US: u64 = 500;
/// pause-after-check freezes A this long after its job fires: past its check (the five
/// answers are back within a few ms) and early in its first step's work.
const AFTER_CHECK_MS: u64 = 200;

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
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Follow Redlock's majority of five independent masters and its validity time",
        "See which faults (pauses, clock jumps) leave two clients holding the lock",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "What does Redlock not give you that a fencing scheme needs?",
        answers: &["A majority", "A TTL", "A token that increases with each grant"],
        correct: 2,
        why: "Without a token the resource cannot tell a stale holder's write from a current one.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§4, §7",
        title: "Redlock: five masters and a bet on time",
        summary: "Two clients take a lock across five independent Redis masters: three OKs, and validity = TTL − time spent acquiring − drift allowance, or unlock all five and retry. Redlock hands out no fencing token. Pick the fault: some the algorithm survives, others leave both clients holding a majority.",
        params: vec![choice(
            "fault",
            "Fault",
            "Which timing assumption breaks. In the clock and restart variants client-a cannot reach redis-4 and redis-5, so its lock rests on redis-1..3.",
            &[
                ("clock-jump", "clock jump — redis-3's clock leaps ahead and A's key there expires (two holders)"),
                ("pause-before-check", "pause before check — A freezes while the answers are in flight; its check rejects the lock (safe)"),
                ("pause-after-check", "pause after check — A freezes after its check and acts on a lapsed lock (two holders)"),
                ("restart-without-persistence", "restart without persistence — redis-3 comes straight back empty (two holders)"),
                ("delayed-restart", "delayed restart — redis-3 stays down longer than the TTL, then comes back empty (safe)"),
            ],
        )],
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

fn scripted(fault: RedlockFault, cast: RedlockCast) -> Vec<(u64, Fault)> {
    let client_a = cast.clients[0];
    // The master the clock, crash and restart faults hit.
    let redis_3 = cast.masters[2];
    let mut out = Vec::new();
    if fault.a_cut_off_from_4_and_5() {
        for m in [cast.masters[3], cast.masters[4]] {
            out.push((
                0,
                Fault::CutLink {
                    from: client_a,
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
                node: redis_3,
                delta_ms: (TTL_MS + 5_000) as i64,
            },
        )),
        // Just after A's requests leave, before any answer can arrive.
        RedlockFault::PauseBeforeCheck => out.push((
            A_START_MS * MS_US + BEFORE_ANSWERS_US,
            Fault::Pause {
                node: client_a,
                duration_ms: PAUSE_MS,
            },
        )),
        // After A's check, in the middle of its first step's work.
        RedlockFault::PauseAfterCheck => out.push((
            (A_START_MS + AFTER_CHECK_MS) * MS_US,
            Fault::Pause {
                node: client_a,
                duration_ms: PAUSE_MS,
            },
        )),
        RedlockFault::RestartWithoutPersistence | RedlockFault::DelayedRestart => {
            let down_ms = if fault == RedlockFault::DelayedRestart {
                TTL_MS + 2_000
            } else {
                100
            };
            out.push((at, Fault::Crash { node: redis_3 }));
            out.push((at + down_ms * MS_US, Fault::Restart { node: redis_3 }));
        }
    }
    out
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let fault = RedlockFault::parse(params);
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 3 * MS_US));
    let config = RedisConfig {
        persistence: false,
        replication_lag_ms: 0,
    };
    let masters = ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5"].map(|name| {
        let fresh = RedisDurable::fresh(Role::Primary, VecMap::new());
        setup.add::<RedisNode>(name, "store", &STORE_FAULTS, config, fresh)
    });
    // The clients name the ledger, added after them.
    let clients = [setup.reserve(), setup.reserve()];
    let ledger = add_ledger(&mut setup);
    let cast = RedlockCast {
        masters,
        clients,
        ledger,
    };
    let plan = |short: &str, start_at_ms: u64| RedlockPlan {
        job: JobPlan {
            short: short.to_string(),
            key: LOCK_KEY.to_string(),
            ttl_ms: TTL_MS,
            start_at_ms,
            retry_ms: 1_000,
            max_attempts: 40,
            ..JobPlan::of_steps(STEPS, STEP_MS, AMOUNT_PER_STEP, ledger)
        },
        masters: masters.to_vec(),
        master_timeout_ms: MASTER_TIMEOUT_MS,
        retry_jitter_ms: 200,
    };
    place_fresh_workers::<RedlockClient>(
        &mut setup,
        [
            (clients[0], "client-a", plan("a", A_START_MS)),
            (clients[1], "client-b", plan("b", B_START_MS)),
        ],
    );
    for (at_us, fault) in scripted(fault, cast) {
        setup.script(at_us, fault);
    }
    setup.set_world(RedlockWorld::new(cast));
    beats(&mut setup, fault, cast);
    setup
}

pub struct RedlockWorld {
    cast: RedlockCast,
    window: HolderCount,
    /// Every quorum lock a client took: (client, the masters that granted it).
    pub grants: Vec<(NodeId, Vec<NodeId>)>,
    seen: Vec<usize>,
    rejected_for_time: Vec<u32>,
    rejected_total: u32,
}

impl RedlockWorld {
    pub fn new(cast: RedlockCast) -> RedlockWorld {
        RedlockWorld {
            cast,
            window: HolderCount::default(),
            grants: Vec::new(),
            seen: vec![0; cast.clients.len()],
            rejected_for_time: vec![0; cast.clients.len()],
            rejected_total: 0,
        }
    }

    fn list(nodes: &Nodes<'_>, ids: &[NodeId]) -> String {
        ids.iter().map(|n| nodes.name(*n)).collect::<Vec<_>>().join(", ")
    }

    /// The clients that are up and believe they hold the lock, with their ids.
    fn believers<'a>(&self, nodes: &Nodes<'a>) -> Vec<(NodeId, &'a RedlockClient)> {
        runner_believers(nodes, &self.cast.clients)
    }

    /// The lock value a master holds now, unexpired by its own clock; nothing while it is
    /// down (persistence is off: it comes back empty).
    fn value_on<'a>(nodes: &Nodes<'a>, master: NodeId) -> Option<&'a str> {
        let now = nodes.local_now_us.get(master.index()).copied()?;
        let entry = nodes.live::<RedisNode>(master)?.get(LOCK_KEY, now)?;
        Some(entry.value.as_str())
    }

    /// The client whose one value a majority of the masters hold now: what the algorithm
    /// counts as holding the lock, judged by the masters rather than by the client's clock.
    /// At most one value can have a majority. The value names its client by its prefix
    /// (`a-1f3c` is `a`'s), so a client that crashed or retried is still found.
    fn granted_to(&self, nodes: &Nodes<'_>) -> Option<NodeId> {
        let quorum = self.cast.masters.len() / 2 + 1;
        let value = self.cast.masters.iter().find_map(|m| {
            let v = Self::value_on(nodes, *m)?;
            let copies = self
                .cast
                .masters
                .iter()
                .filter(|o| Self::value_on(nodes, **o) == Some(v))
                .count();
            (copies >= quorum).then_some(v)
        })?;
        let (short, _) = value.rsplit_once('-')?;
        self.cast.clients.iter().copied().find(|c| {
            nodes
                .config::<RedlockClient>(*c)
                .is_some_and(|plan| plan.job.short == short)
        })
    }

    fn observe(&mut self, nodes: &Nodes<'_>) {
        let cast = self.cast;
        for (i, id) in cast.clients.iter().enumerate() {
            let Some(c) = nodes.live::<RedlockClient>(*id) else {
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
    fn properties(&self) -> Vec<PropertySpec> {
        vec![one_holder_per_store_spec(), fence_monotonic_spec()]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.observe(nodes);
        let holders = self.believers(nodes).len() as u32;
        self.window.observe(holders, nodes.now_us);
        out.push(holders <= 1);
        out.push(fence_monotonic(ledger_row(nodes, self.cast.ledger)));
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        let believers = self.believers(nodes);
        (believers.len() >= 2).then(|| {
            let who: Vec<String> = believers
                .iter()
                .map(|(id, c)| {
                    let masters = c
                        .held
                        .as_ref()
                        .map(|h| Self::list(nodes, &h.masters))
                        .unwrap_or_default();
                    format!("{} ({masters})", nodes.name(*id))
                })
                .collect();
            format!("Unsafe window: {} each hold a majority", who.join(" and "))
        })
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        runner_holdings::<RedlockLock>(nodes, self.cast.clients, self.granted_to(nodes))
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let masters = self
            .cast
            .masters
            .iter()
            .map(|m| {
                let now = nodes.local_now_us[m.index()];
                let offset = format_signed_duration(now as i64 - nodes.now_us as i64);
                let name = nodes.name(*m).to_string();
                match nodes.live::<RedisNode>(*m) {
                    Some(s) => {
                        let (value, left) = lock_cells(&s.data, LOCK_KEY, now);
                        vec![name, value, left, offset]
                    }
                    None => vec![name, "DOWN".into(), "—".into(), offset],
                }
            })
            .collect();
        let clients = self
            .cast
            .clients
            .iter()
            .map(|id| match nodes.live::<RedlockClient>(*id) {
                Some(c) => {
                    let now = nodes.local_now_us[id.index()];
                    let (holds, on, left) = match &c.held {
                        Some(h) if c.believes_it_holds() => (
                            "yes".to_string(),
                            Self::list(nodes, &h.masters),
                            if h.deadline_local_us > now {
                                tenths((h.deadline_local_us - now) / MS_US)
                            } else {
                                "0 s (still acting)".to_string()
                            },
                        ),
                        _ => ("no".to_string(), "—".to_string(), "—".to_string()),
                    };
                    vec![nodes.name(*id).to_string(), holds, on, left, c.doing()]
                }
                None => down_worker_row(nodes.name(*id), 2),
            })
            .collect();
        let mut tables = vec![
            TableView {
                title: "the lock on each master (TTL by that master's clock)".into(),
                columns: columns(&["master", "lock value", "TTL left", "clock offset"]),
                rows: masters,
            },
            TableView {
                title: "what each client believes".into(),
                columns: columns(&[
                    "client",
                    "holds it?",
                    "granted by",
                    "validity left (own clock)",
                    "doing",
                ]),
                rows: clients,
            },
        ];
        tables.extend(ledger_tables(nodes, self.cast.ledger));
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        self.window.report(&mut out, nodes.now_us);
        let grants: Vec<Value> = self
            .grants
            .iter()
            .map(|(c, masters)| {
                json!({
                    "worker": nodes.name(*c),
                    "token_or_revision": Value::Null,
                    "granted_by": masters.iter().map(|m| nodes.name(*m)).collect::<Vec<_>>(),
                })
            })
            .collect();
        out.insert("grants".into(), Value::Array(grants));
        out.insert("locks_rejected_for_time".into(), json!(self.rejected_total));
        ledger_outcome(nodes, self.cast.ledger, &mut out);
        out.insert(
            "finished_by".into(),
            finished_by::<RedlockClient>(nodes, &self.cast.clients),
        );
        out
    }
}
