//! `redis-failover` (curriculum §4–6): worker A's lock is acknowledged by the Redis
//! primary, which crashes before its replication stream carries the write to either replica.
//! Three sentinels agree that it is down (a quorum of 2), elect one of themselves to fail it
//! over (a majority of 2), and that one promotes a replica that never heard of the lock — nor
//! of the token counter's last increment — so worker B's `SET NX` succeeds with the same token
//! A got.
//!
//! `WAIT 1` only delays a worker's start until a replica has its write. With
//! `failure=other-replica-promoted` it returns 1, and the lock is lost all the same: the
//! replica that confirmed is frozen when the primary dies, and the sentinels promote the one
//! that never got the write.
//!
//! Node ids and names match `consensus-lock`, so the pair can run side by side with the same
//! seed and the same fault clicks: 0 `store-1` (the primary), 1 `store-2`, 2 `store-3`,
//! 3 `worker-a`, 4 `worker-b`, 5 `ledger`, and here 6–8 `sentinel-1`…`sentinel-3`.

use super::redis_common::{add_ledger, lock_cells, releases_own_spec, STORE_FAULTS};
use super::redis_failover_beats::{beats, Story};
use crate::json;
use crate::kernel::collections::{sort_by_key, VecMap};
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertySpec, Verdict};
use crate::protocols::job::AMOUNT_PER_STEP;
use crate::protocols::lease::lease_msg::ReleaseMode;
use crate::protocols::redis_locks::redis::{RedisConfig, RedisDurable, RedisNode, Role};
use crate::protocols::redis_locks::redis_job::JobPlan;
use crate::protocols::redis_locks::redis_msg::KeyEntry;
use crate::protocols::redis_locks::redis_sentinel::{Sentinel, SentinelConfig, SentinelDurable};
use crate::protocols::redis_locks::redis_worker::{RedisLock, RedisWorker, WorkerPlan};
use crate::scenarios::common::{
    down_worker_row, finished_by, place_fresh_workers, runner_believers, runner_holdings, HolderCount,
};
use crate::scenarios::lease_setup::{choice, millis};
use crate::scenarios::property_library::{
    fence_monotonic, fence_monotonic_spec, ledger_outcome, ledger_row, ledger_tables,
    one_holder_per_store_spec, tokens_increase_spec,
};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::{columns, TableView};
use serde_json::Value;
use std::collections::BTreeMap;

pub const ID: &str = "redis-failover";
/// Who the setup added: the stores (store-1 the first primary), the workers, the ledger and
/// the sentinels.
#[derive(Clone, Copy, Debug)]
pub struct RedisCast {
    pub stores: [NodeId; 3],
    pub workers: [NodeId; 2],
    pub ledger: NodeId,
    pub sentinels: [NodeId; 3],
}
/// Sentinels that must find the primary down before it is objectively down.
pub const QUORUM: u32 = 2;

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
/// `failure=other-replica-promoted`: the link store-1 → store-3 is cut at this time (true
/// time), before A's job fires, so store-3 silently falls behind.
pub const CUT_AT_MS: u64 = 100;
/// … store-1 crashes this long after it streamed A's write: store-2 has confirmed it, and
/// A's WAIT has had its answer …
pub const CRASH_AFTER_STREAM_MS: u64 = 100;
/// … and at the same moment store-2 freezes for this long, through the sentinels' failover.
pub const FREEZE_MS: u64 = 1_400;
pub const LATENCY_MIN_MS: u64 = 1;
pub const LATENCY_MAX_MS: u64 = 3;
const STEPS: u32 = 4;
const STEP_MS: u64 = 500;
/// Longer than the largest lag allowed, so a WAIT on a healthy primary always confirms.
const WAIT_TIMEOUT_MS: u64 = 1_000;
const PING_MS: u64 = 200;
const DOWN_AFTER_MS: u64 = 1_000;
const FAILOVER_TIMEOUT_MS: u64 = 1_000;
const STOP_AT_MS: u64 = 6_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a primary acknowledge a lock and crash before replicating it",
        "Watch the promoted replica grant the same lock, with the same token, again",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Why do two workers end up holding the same lock?",
        answers: &[
            "The sentinels disagreed",
            "The replica that was promoted never had the grant",
            "The TTL was too short",
        ],
        correct: 1,
        why: "Replication was asynchronous, so the replica that took over never heard of the first grant.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§4–6",
        title: "Redis failover loses the lock",
        summary: "Worker A's lock (and its fencing token, an INCR in the same script) is acknowledged by the Redis primary, which crashes before streaming the write to its replicas. Three sentinels agree it is down (quorum 2) and elect one of themselves (a majority) to promote a replica, which has no record of either; worker B's SET NX succeeds and gets the very same token. Two holders, one token, and a ledger that cannot tell them apart. WAIT 1 only delays a worker's start until one replica has the write; it does not make Redis consistent. A failover can still promote a replica without the write (failure=other-replica-promoted: WAIT returns 1 and the lock is lost all the same), and a holder paused past the TTL still overlaps the next one. Compare with consensus-lock.",
        params: vec![
            millis(
                "replication_lag_ms",
                "Replication lag",
                "How long the primary buffers a write before streaming it to the replicas. With failure=primary-crash the primary crashes 50 ms after A's job fires; a write still buffered then is lost.",
                "100",
                (0, 500),
            ),
            choice(
                "wait",
                "WAIT after acquiring",
                "Whether a worker sends WAIT 1 1000 after its lock is granted and starts only once a replica has the write. WAIT delays the answer; it does not make Redis consistent: a failover can still promote a replica without the write, and the key still expires under a holder that is paused or slow.",
                &[
                    ("off", "off — trust the primary's OK"),
                    ("wait-1", "wait-1 — WAIT 1 1000, start only once a replica has the write"),
                ],
            ),
            choice(
                "failure",
                "What fails",
                "primary-crash: store-1 crashes 50 ms after A's job fires, before its stream carries A's lock anywhere. other-replica-promoted: the link from store-1 to store-3 is cut first; store-2 gets A's lock and acknowledges it (with wait=wait-1, A's WAIT 1 returns 1); then store-1 crashes while store-2 is frozen for 1.4 s, so the sentinels promote store-3, which never got the lock.",
                &[
                    ("primary-crash", "primary-crash — store-1 dies with A's lock still unsent"),
                    ("other-replica-promoted", "other-replica-promoted — store-2 confirms A's lock, but store-3, which never got it, is promoted"),
                ],
            ),
            choice(
                "release",
                "Release",
                "How a worker gives the lock back when its job is done.",
                &[
                    ("compare-and-delete", "compare-and-delete — a script deletes the key only if it still holds my value"),
                    ("del", "del — DEL the key, whoever's value it holds"),
                ],
            ),
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

/// Whether the sentinels promote the replica that missed A's write
/// (`failure=other-replica-promoted`).
fn other_replica_promoted(params: &Params) -> bool {
    params
        .get("failure")
        .is_some_and(|f| f == "other-replica-promoted")
}

/// `failure=other-replica-promoted`: when store-1 crashes and store-2 freezes (true time).
pub fn crash_after_confirm_ms(lag_ms: u64) -> u64 {
    A_START_MS + lag_ms + CRASH_AFTER_STREAM_MS
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

/// What a run promises. `fence-monotonic` holds whatever fails: the ledger takes no lower
/// token. Everything else is what this failure does to the lock; none of it is a promise that
/// WAIT makes the lock safe, because it does not (`coordlab sweep` finds two holders with
/// `wait=wait-1` too).
pub fn expectation(params: &Params) -> Expectation {
    let lag = lag_ms(params);
    let del = release(params) == ReleaseMode::NaiveDelete;
    let v = |ok: bool| if ok { Verdict::Holds } else { Verdict::Violated };
    let mut verdicts = vec![("fence-monotonic".to_string(), Verdict::Holds)];
    let mut outcome = Vec::new();
    if other_replica_promoted(params) {
        // store-2 has A's lock (with WAIT: and said so), but store-3 is promoted: both work
        // under the lock with the same token, WAIT or not.
        outcome.push(("max_concurrent_holders".to_string(), json!(2)));
        outcome.push(("lock_lost".to_string(), json!(true)));
        outcome.push(("tokens_reissued".to_string(), json!(1)));
        outcome.push(("final_primary".to_string(), json!("store-3")));
        if waits(params) {
            outcome.push((
                "wait_acks".to_string(),
                json!([
                    json!({"worker": "worker-a", "acked": 1}),
                    json!({"worker": "worker-b", "acked": 1})
                ]),
            ));
        }
        verdicts.push(("one-holder-per-store".to_string(), Verdict::Violated));
        verdicts.push(("tokens-increase".to_string(), Verdict::Violated));
        if !del {
            // With DEL, whose key A's release finds depends on who finishes first.
            verdicts.push(("releases-only-own-lock".to_string(), Verdict::Holds));
        }
    } else if write_certainly_lost(lag) {
        // The token A was handed is handed out again, WAIT or not.
        outcome.push(("tokens_reissued".to_string(), json!(1)));
        verdicts.push(("tokens-increase".to_string(), Verdict::Violated));
        if waits(params) {
            // A's WAIT gets no answer, so A never starts on this grant. That is all WAIT did:
            // no promise about holders here.
            if !del {
                verdicts.push(("releases-only-own-lock".to_string(), Verdict::Holds));
            }
        } else {
            outcome.push(("max_concurrent_holders".to_string(), json!(2)));
            outcome.push(("lock_lost".to_string(), json!(true)));
            verdicts.push(("one-holder-per-store".to_string(), Verdict::Violated));
            verdicts.push(("releases-only-own-lock".to_string(), v(!del)));
        }
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
    if !other_replica_promoted(params) {
        return setup_with_crash_at(params, CRASH_AT_MS);
    }
    let (mut setup, cast) = setup_without_faults(params);
    let [store_1, store_2, store_3] = cast.stores;
    let crash_ms = crash_after_confirm_ms(lag_ms(params));
    setup.script(
        CUT_AT_MS * MS_US,
        Fault::CutLink {
            from: store_1,
            to: store_3,
        },
    );
    setup.script(crash_ms * MS_US, Fault::Crash { node: store_1 });
    setup.script(
        crash_ms * MS_US,
        Fault::Pause {
            node: store_2,
            duration_ms: FREEZE_MS,
        },
    );
    setup
}

/// The scenario with the primary's scripted crash at `crash_ms` (true time) instead.
pub fn setup_with_crash_at(params: &Params, crash_ms: u64) -> Setup {
    let (mut setup, cast) = setup_without_faults(params);
    setup.script(crash_ms * MS_US, Fault::Crash { node: cast.stores[0] });
    setup
}

/// The nodes, the network and the world, with no failure scripted.
fn setup_without_faults(params: &Params) -> (Setup, RedisCast) {
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
    let mut store = |name, role| {
        let fresh = RedisDurable::fresh(role, data.clone());
        setup.add::<RedisNode>(name, "store", &STORE_FAULTS, config, fresh)
    };
    let primary = store("store-1", Role::Primary);
    let replicas = ["store-2", "store-3"].map(|name| store(name, Role::Replica { of: primary }));
    let stores = [primary, replicas[0], replicas[1]];
    // The workers come next; they name the ledger and the sentinels, which also name each
    // other: their ids are reserved, and the nodes placed once every id is known.
    let workers = [setup.reserve(), setup.reserve()];
    let ledger = add_ledger(&mut setup);
    let sentinels = [setup.reserve(), setup.reserve(), setup.reserve()];
    let cast = RedisCast {
        stores,
        workers,
        ledger,
        sentinels,
    };
    let plan = |short: &str, start_at_ms: u64| WorkerPlan {
        job: JobPlan {
            short: short.to_string(),
            key: LOCK_KEY.to_string(),
            ttl_ms: TTL_MS,
            start_at_ms,
            retry_ms: 500,
            max_attempts: 100,
            ..JobPlan::of_steps(STEPS, STEP_MS, AMOUNT_PER_STEP, ledger)
        },
        fence_key: FENCE_KEY.to_string(),
        wait: waits(params).then_some((1, WAIT_TIMEOUT_MS)),
        release: release(params),
        request_timeout_ms: 300,
        sentinels: sentinels.to_vec(),
        first_primary: primary,
    };
    place_fresh_workers::<RedisWorker>(
        &mut setup,
        [
            (workers[0], "worker-a", plan("a", A_START_MS)),
            (workers[1], "worker-b", plan("b", B_START_MS)),
        ],
    );
    for (id, name) in sentinels
        .into_iter()
        .zip(["sentinel-1", "sentinel-2", "sentinel-3"])
    {
        setup.place::<Sentinel>(
            id,
            name,
            "sentinel",
            &[
                FaultKind::Crash,
                FaultKind::Restart,
                FaultKind::Pause,
                FaultKind::Network,
            ],
            SentinelConfig {
                nodes: stores.to_vec(),
                sentinels: sentinels.to_vec(),
                clients: workers.to_vec(),
                quorum: QUORUM,
                ping_ms: PING_MS,
                down_after_ms: DOWN_AFTER_MS,
                failover_timeout_ms: FAILOVER_TIMEOUT_MS,
                stop_at_ms: STOP_AT_MS,
            },
            SentinelDurable::fresh(primary),
        );
    }
    setup.set_world(FailoverWorld::new(cast));
    beats(
        &mut setup,
        Story {
            wait: waits(params),
            other_replica: other_replica_promoted(params),
            naive_delete: release(params) == ReleaseMode::NaiveDelete,
            lag_ms: lag_ms(params),
            write_lost: if write_certainly_lost(lag_ms(params)) {
                Some(true)
            } else if write_certainly_kept(lag_ms(params)) {
                Some(false)
            } else {
                None
            },
        },
        cast,
    );
    (setup, cast)
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
    cast: RedisCast,
    window: HolderCount,
    /// Every grant on any store, in the order they happened.
    pub grants: Vec<SeenGrant>,
    seen_grants: Vec<usize>,
    seen_deletions: Vec<usize>,
    tokens_ok: bool,
    pub tokens_reissued: u32,
    /// Releases that deleted another worker's value: (who released, whose value, where).
    pub foreign_releases: Vec<(NodeId, NodeId, NodeId)>,
    lock_lost_at_us: Option<u64>,
    /// Every answer a worker's `WAIT` got: (worker, replicas that had the write).
    pub wait_acks: Vec<(NodeId, u32)>,
    seen_wait_acks: Vec<usize>,
}

impl FailoverWorld {
    pub fn new(cast: RedisCast) -> FailoverWorld {
        FailoverWorld {
            cast,
            window: HolderCount::default(),
            grants: Vec::new(),
            seen_grants: vec![0; cast.stores.len()],
            seen_deletions: vec![0; cast.stores.len()],
            tokens_ok: true,
            tokens_reissued: 0,
            foreign_releases: Vec::new(),
            lock_lost_at_us: None,
            wait_acks: Vec::new(),
            seen_wait_acks: vec![0; cast.workers.len()],
        }
    }

    /// The workers that are up and believe they hold the lock, with their ids.
    fn believers<'a>(&self, nodes: &Nodes<'a>) -> Vec<(NodeId, &'a RedisWorker)> {
        runner_believers(nodes, &self.cast.workers)
    }

    /// The node the sentinels currently call primary: the view with the newest epoch.
    fn primary(&self, nodes: &Nodes<'_>) -> NodeId {
        let mut best = (0, self.cast.stores[0]);
        for id in self.cast.sentinels {
            let view = nodes
                .live::<Sentinel>(id)
                .map(|s| (s.config_epoch, s.primary))
                .or_else(|| nodes.durable::<Sentinel>(id).map(|d| (d.config_epoch, d.primary)));
            if let Some(view) = view.filter(|v| v.0 > best.0) {
                best = view;
            }
        }
        best.1
    }

    /// Whether the value is set, unexpired, on store `id` if it is up.
    fn store_has(&self, nodes: &Nodes<'_>, id: NodeId, value: &str) -> bool {
        nodes
            .live::<RedisNode>(id)
            .and_then(|n| n.get(LOCK_KEY, nodes.local_now_us[id.index()]))
            .is_some_and(|e| e.value == value)
    }

    /// The worker whose value the lock key holds, unexpired by that node's clock, on the node
    /// the sentinels call primary now: the record every new `SET NX` is judged against. A
    /// primary that is down answers from its disk (empty without persistence), which is what
    /// it would serve if it came back. The value names its worker by its prefix (`a-1f3c`
    /// is `a`'s), so a worker that crashed or moved on to a new attempt is still found.
    fn granted_to(&self, nodes: &Nodes<'_>) -> Option<NodeId> {
        let primary = self.primary(nodes);
        let data = match nodes.live::<RedisNode>(primary) {
            Some(s) => &s.data,
            None => &nodes.durable::<RedisNode>(primary)?.data,
        };
        let now = nodes.local_now_us.get(primary.index()).copied()?;
        let entry = data.get(LOCK_KEY).filter(|e| e.alive_at(now))?;
        let (short, _) = entry.value.rsplit_once('-')?;
        self.cast.workers.iter().copied().find(|w| {
            nodes
                .config::<RedisWorker>(*w)
                .is_some_and(|plan| plan.job.short == short)
        })
    }

    /// Believers whose lock the running primary does not have: the lock is gone for good.
    fn lost<'a>(&self, nodes: &Nodes<'a>) -> Vec<(NodeId, &'a RedisWorker)> {
        let primary = self.primary(nodes);
        if nodes.live::<RedisNode>(primary).is_none_or(|s| !s.is_primary()) {
            return Vec::new();
        }
        self.believers(nodes)
            .into_iter()
            .filter(|(_, w)| {
                w.held
                    .as_ref()
                    .is_some_and(|h| !self.store_has(nodes, primary, &h.value))
            })
            .collect()
    }

    /// Believers whose lock is on no running store at all (its only copy is on a node that
    /// is down, and what the network still carries is not known here).
    fn at_risk<'a>(&self, nodes: &Nodes<'a>) -> Vec<(NodeId, &'a RedisWorker)> {
        self.believers(nodes)
            .into_iter()
            .filter(|(_, w)| {
                w.held.as_ref().is_some_and(|h| {
                    !self
                        .cast
                        .stores
                        .iter()
                        .any(|s| self.store_has(nodes, *s, &h.value))
                })
            })
            .collect()
    }

    fn observe(&mut self, nodes: &Nodes<'_>) {
        let cast = self.cast;
        for (i, id) in cast.workers.iter().enumerate() {
            let Some(w) = nodes.live::<RedisWorker>(*id) else {
                self.seen_wait_acks[i] = 0;
                continue;
            };
            for acked in w.wait_acks.iter().skip(self.seen_wait_acks[i]) {
                self.wait_acks.push((*id, *acked));
            }
            self.seen_wait_acks[i] = w.wait_acks.len();
        }
        for (i, id) in cast.stores.iter().enumerate() {
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

    fn store_rows(&self, nodes: &Nodes<'_>) -> Vec<Vec<String>> {
        self.cast
            .stores
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
    fn stream_table(&self, nodes: &Nodes<'_>) -> TableView {
        // Entries are told apart by the primary that wrote them: after a failover two
        // primaries may each have written a different #5.
        let mut entries: VecMap<(u64, NodeId), String> = VecMap::new();
        let streams: Vec<Option<(&Vec<_>, Option<&RedisNode>)>> = self
            .cast
            .stores
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
    fn worker_table(&self, nodes: &Nodes<'_>) -> TableView {
        let rows = self
            .cast
            .workers
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
                None => down_worker_row(nodes.name(*id), 3),
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
            one_holder_per_store_spec(),
            tokens_increase_spec(),
            fence_monotonic_spec(),
            releases_own_spec(),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.observe(nodes);
        let holders = self.believers(nodes).len() as u32;
        self.window.observe(holders, nodes.now_us);
        if self.lock_lost_at_us.is_none() && !self.lost(nodes).is_empty() {
            self.lock_lost_at_us = Some(nodes.now_us);
        }
        out.push(holders <= 1);
        out.push(self.tokens_ok);
        out.push(fence_monotonic(ledger_row(nodes, self.cast.ledger)));
        out.push(self.foreign_releases.is_empty());
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        let believers = self.believers(nodes);
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
        if let Some(w) = self.lost(nodes).first() {
            return Some(format!(
                "Lock lost: {} still works under its lock, but the primary now, {}, has no such key",
                describe(w),
                nodes.name(self.primary(nodes))
            ));
        }
        self.at_risk(nodes).first().map(|w| {
            format!(
                "Lock at risk: {} works under a lock whose only copy is on a node that is down",
                describe(w)
            )
        })
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        runner_holdings::<RedisLock>(nodes, self.cast.workers, self.granted_to(nodes))
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
                rows: self.store_rows(nodes),
            },
            self.stream_table(nodes),
            self.worker_table(nodes),
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
            "foreign_releases".into(),
            Value::Array(self
                .foreign_releases
                .iter()
                .map(|(by, owner, on)| json!({"by": nodes.name(*by), "deleted_lock_of": nodes.name(*owner), "on": nodes.name(*on)}))
                .collect()),
        );
        let mut failovers: Vec<(u64, Value)> = Vec::new();
        for id in self.cast.sentinels {
            for f in nodes.live::<Sentinel>(id).iter().flat_map(|s| &s.failovers) {
                let by = nodes.name(id);
                failovers.push((
                    f.epoch,
                    json!({"from": nodes.name(f.from), "to": nodes.name(f.to), "by": by}),
                ));
            }
        }
        sort_by_key(&mut failovers, |(epoch, _)| *epoch);
        out.insert(
            "failovers".into(),
            Value::Array(failovers.into_iter().map(|(_, f)| f).collect()),
        );
        out.insert("final_primary".into(), json!(nodes.name(self.primary(nodes))));
        out.insert(
            "wait_acks".into(),
            Value::Array(
                self.wait_acks
                    .iter()
                    .map(|(w, acked)| json!({"worker": nodes.name(*w), "acked": acked}))
                    .collect(),
            ),
        );
        ledger_outcome(nodes, self.cast.ledger, &mut out);
        out.insert(
            "finished_by".into(),
            finished_by::<RedisWorker>(nodes, &self.cast.workers),
        );
        out
    }
}
