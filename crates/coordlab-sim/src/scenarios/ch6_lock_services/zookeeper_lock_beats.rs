//! `zookeeper-lock`'s story in beats: worker-1 holds the lowest node → the others queue →
//! worker-1 freezes → ZooKeeper expires its session and deletes its node → worker-2 takes over
//! → worker-1's late write is refused. With `watch=lock-node` the queue watches `/lock`
//! itself, and the beats show each release waking the whole herd.

use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::protocols::job::Phase;
use crate::protocols::zookeeper_locks::zk_lock_worker::{WatchMode, ZkLockWorker};
use crate::protocols::zookeeper_locks::zookeeper::{ReleaseCause, ZkService};
use crate::scenarios::common::beat_either;
use crate::scenarios::property_library::ledger_row;

fn worker<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a ZkLockWorker> {
    n.live::<ZkLockWorker>(id)
}

/// Every worker after the first is waiting on its watch.
fn all_queued(n: &Nodes<'_>, waiters: &[NodeId]) -> bool {
    waiters
        .iter()
        .all(|id| worker(n, *id).is_some_and(|w| w.phase == Phase::Watching))
}

/// Whether ZooKeeper has deleted a node of `owner`'s for `cause`.
fn released(n: &Nodes<'_>, service: NodeId, owner: NodeId, cause: ReleaseCause) -> bool {
    n.live::<ZkService>(service)
        .is_some_and(|s| s.releases.iter().any(|r| r.owner == owner && r.cause == cause))
}

/// `expires`: the pause surely outlasts worker-1's session, so the question about the
/// deletion it causes is asked.
pub fn beats(
    setup: &mut Setup,
    service: NodeId,
    ledger: NodeId,
    workers: &[NodeId],
    watch: WatchMode,
    expires: bool,
) {
    let (first, second) = (workers[0], workers[1]);
    let waiters = workers[1..].to_vec();
    setup.beat(
        "first-holds",
        "worker-1 holds the lock with token 0",
        "Its ephemeral sequential node /lock/n-0000000000 is the lowest child of /lock. Its sequence number is its fencing token.",
        move |n, _| worker(n, first).is_some_and(|w| w.token.is_some()),
    );
    let herd = watch == WatchMode::LockNode;
    beat_either(
        setup,
        "queue",
        herd,
        [
            (
                "Every waiter watches /lock itself",
                "Each waiter created its numbered node, then set a watch on /lock's children: any change under /lock will wake them all.",
            ),
            (
                "Each waiter watches the node just ahead",
                "Each waiter created its numbered node, then set one watch, on the node just before its own. A release will wake one waiter.",
            ),
        ],
        move |n, _| all_queued(n, &waiters),
    );
    let why = if herd {
        "Every waiter watches /lock's children, so the one deletion notifies every one of them, and each lists /lock again; only worker-2 finds itself first."
    } else {
        "Only worker-2 watches worker-1's node; the others watch the node ahead of their own, which is still there."
    };
    let freeze = setup.beat(
        "freeze",
        "worker-1 freezes holding the lock",
        "A stop-the-world pause mid-job: worker-1 sends no pings, yet it still believes it holds token 0.",
        move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == first),
    );
    if expires {
        freeze.ask(
            "worker-1 stays frozen past its session timeout, so ZooKeeper will delete its node. How many waiters wake up?",
            &["None: nobody is told", "One: worker-2, the next in line", "Every waiter"],
            if herd { 2 } else { 1 },
            why,
        );
    }
    setup.beat(
        "expired",
        "ZooKeeper expires worker-1's session",
        if herd {
            "No ping for a whole session timeout, by ZooKeeper's clock: the session ends and its ephemeral node goes with it. The watch on /lock fires for every waiter at once."
        } else {
            "No ping for a whole session timeout, by ZooKeeper's clock: the session ends and its ephemeral node goes with it. Only worker-2's watch fires."
        },
        move |n, _| released(n, service, first, ReleaseCause::SessionExpired),
    );
    setup.beat(
        "second-holds",
        "worker-2 takes over with token 1",
        "worker-2 lists /lock and finds its node n-0000000001 lowest: it holds the lock and writes with token 1.",
        move |n, _| worker(n, second).is_some_and(|w| w.token.is_some()),
    );
    if herd {
        setup.beat(
            "herd",
            "worker-2's release wakes the whole queue again",
            "Deleting its node notifies every waiter still queued, though only one can be next: the herd effect, on every release.",
            move |n, _| released(n, service, second, ReleaseCause::Deleted),
        );
    }
    setup.beat(
        "fenced",
        "worker-1's stale write is refused",
        "worker-1 wakes still believing it holds token 0 and sends its debit; the ledger has seen a higher token and changes nothing.",
        move |n, _| {
            ledger_row(n, ledger).is_some_and(|l| l.writes.iter().any(|w| w.worker == first && !w.accepted))
        },
    );
}
