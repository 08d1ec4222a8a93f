//! `zookeeper-lock` (curriculum §7): the lock recipe on ephemeral sequential znodes. Every
//! worker creates `/lock/n-…`; the lowest number holds the lock and that number is its
//! fencing token; each waiter watches the node just ahead of it, so a release wakes one
//! waiter. worker-1 freezes in a GC pause while holding the lock: ZooKeeper hears no pings,
//! expires its session and deletes its node; worker-2 takes over with a higher token, and
//! when worker-1 wakes its late debit is refused by the ledger. With `watch=lock-node` every
//! waiter watches `/lock` itself and wakes on every change — the herd effect, counted per
//! release.

use super::zookeeper_world::ZkWorld;
use crate::json;
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::job::AMOUNT_PER_STEP;
use crate::protocols::lease::fenced_resource::LedgerIntro;
use crate::protocols::redis_locks::redis_job::JobDurable;
use crate::protocols::zookeeper_locks::zk_lock_worker::{WatchMode, ZkLockWorker, ZkPlan, ZkWorkerPlan};
use crate::protocols::zookeeper_locks::zookeeper::{ZkConfig, ZkService};
use crate::scenarios::common::WORKER_FAULTS;
use crate::scenarios::lease_setup::{choice, count, millis};
use crate::scenarios::property_library::add_ledger;
use crate::scenarios::{Expectation, Listing, Params};

#[path = "zookeeper_lock_beats.rs"]
mod beats;

pub const ID: &str = "zookeeper-lock";
pub const LOCK_PATH: &str = "/lock";
const OPENING: i64 = 1_000;
const STEPS: u32 = 2;
const STEP_MS: u64 = 1_000;
/// worker-1's job fires first; each next worker 100 ms later.
const START_MS: u64 = 100;
const START_GAP_MS: u64 = 100;
/// When worker-1 freezes: in the middle of its second step.
pub const PAUSE_AT_MS: u64 = 1_500;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Queue for a lock with numbered ephemeral nodes",
        "Watch only the node before yours to avoid waking everyone",
        "See an expired session free the lock and the number act as a fence",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Why does each waiter watch only the node just before its own?",
        answers: &[
            "To save memory",
            "Because ZooKeeper allows one watch",
            "So a release wakes one waiter instead of the whole queue",
        ],
        correct: 2,
        why: "Watching the lock node itself wakes every waiter on each change: a herd for one winner.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§7",
        title: "ZooKeeper lock: sequential nodes, watches and a session that expires",
        summary: "Workers queue for a lock as numbered ephemeral nodes under /lock; the lowest number holds it and uses that number as its fencing token. worker-1 freezes mid-job, its session expires, its node is deleted and the next in line takes over with a higher number; worker-1's late debit is refused by the ledger. Switch the watch to the lock node to see every release wake the whole queue.",
        params: vec![
            choice(
                "watch",
                "What each waiter watches",
                "The node just ahead of its own, or the lock node itself (every change wakes every waiter).",
                &[
                    ("predecessor", "predecessor — exists(node ahead, watch): one wake-up per release"),
                    ("lock-node", "lock node — getChildren(/lock, watch): the herd wakes every time"),
                ],
            ),
            count("waiters", "Waiters", "How many workers queue behind worker-1.", "4", (2, 8)),
            millis(
                "session_timeout_ms",
                "Session timeout",
                "How long ZooKeeper waits, by its own clock, without hearing from a client before it expires the session. Clients ping every third of it.",
                "4000",
                (1_000, 30_000),
            ),
            millis(
                "pause_ms",
                "worker-1's pause",
                "How long worker-1 freezes (a GC pause) from 1.5 s, in the middle of its job; 0 for no pause.",
                "8000",
                (0, 60_000),
            ),
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

/// Room for the messages between worker-1's session ending and the next holder's first write
/// (the service's notice, the next worker's listing and its answer), a few ms each on these
/// links: a pause closer than this to the handover is too close to call.
const HANDOVER_SLACK_MS: u64 = 300;
/// Room for worker-1's pings in flight (the last one before the pause, the overdue one after
/// it): a pause closer than this to expiring the session is too close to call.
const PING_SLACK_MS: u64 = 200;

/// Whether worker-1's session surely expires during its pause and the next holder has
/// written before worker-1 wakes (so its late write meets a higher token).
fn expiry_story(params: &Params) -> bool {
    let timeout = num(params, "session_timeout_ms", 4_000);
    num(params, "pause_ms", 8_000) >= timeout + STEP_MS + HANDOVER_SLACK_MS
}

/// Whether worker-1 surely keeps its session (it never goes quiet long enough).
fn no_expiry(params: &Params) -> bool {
    let timeout = num(params, "session_timeout_ms", 4_000);
    // Pings go every third of the timeout; a pause shorter than the rest cannot expire it.
    num(params, "pause_ms", 8_000) + timeout / 3 + PING_SLACK_MS < timeout
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

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let waiters = num(params, "waiters", 4).clamp(2, 8) as u32;
    let timeout_ms = num(params, "session_timeout_ms", 4_000).max(1);
    let watch = watch_mode(params);
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    // A clock fault on the service makes sessions expire early or late: its clock is the one
    // that judges them.
    let service = setup.add::<ZkService>(
        "zookeeper",
        "store",
        &[FaultKind::Pause, FaultKind::Network, FaultKind::Clock],
        ZkConfig {
            lock_path: LOCK_PATH.into(),
        },
        (),
    );
    let ledger = add_ledger(&mut setup, LedgerIntro::RefusesBelowHighest, OPENING);
    let workers: Vec<NodeId> = (0..=waiters)
        .map(|k| {
            let plan = ZkWorkerPlan {
                service,
                ledger,
                lock_path: LOCK_PATH.into(),
                watch,
                session_timeout_ms: timeout_ms,
                start_ms: START_MS + START_GAP_MS * u64::from(k),
                steps: STEPS,
                step_ms: STEP_MS,
                amount_per_step: AMOUNT_PER_STEP,
                first_step: 1 + STEPS * k,
            };
            setup.add::<ZkLockWorker>(
                format!("worker-{}", k + 1),
                "worker",
                &WORKER_FAULTS,
                ZkPlan::from(plan),
                JobDurable::default(),
            )
        })
        .collect();
    let pause_ms = num(params, "pause_ms", 8_000);
    if pause_ms > 0 {
        setup.script(
            PAUSE_AT_MS * MS_US,
            Fault::Pause {
                node: workers[0],
                duration_ms: pause_ms,
            },
        );
    }
    beats::beats(&mut setup, service, ledger, &workers, watch, expiry_story(params));
    setup.set_world(ZkWorld::new(service, ledger, workers));
    setup
}
