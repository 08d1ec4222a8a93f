//! What a worker taking the ZooKeeper lock saw as it queued, held and released, and the
//! sentences it reads as. `me` is the worker's own name; nodes are named by their last
//! component (`n-0000000003`).

use crate::kernel::ids::FencingToken;
use crate::presentation::durations::seconds;
use crate::protocols::lease::lease_msg::RejectReason;
use crate::protocols::zookeeper_locks::zookeeper::WatchEvent;

/// One thing the worker's lock side saw.
pub enum ZkLockWorkerSaw<'a> {
    UpAgainBatchPosted {
        me: &'a str,
    },
    OpensSession {
        me: &'a str,
    },
    /// Its `node` is the lowest child of `lock_path`.
    HoldsLock {
        me: &'a str,
        node: &'a str,
        lock_path: &'a str,
        token: FencingToken,
    },
    /// It is number `place` in line and watches `ahead` alone.
    WatchesPredecessor {
        me: &'a str,
        place: usize,
        ahead: &'a str,
    },
    WaitsForAnyChange {
        me: &'a str,
        place: usize,
        lock_path: &'a str,
    },
    /// Its `exists` watch on `node` is set.
    WaitsOnNode {
        me: &'a str,
        node: &'a str,
    },
    /// The `node` ahead was deleted before the watch was set.
    NodeWentBeforeWatch {
        me: &'a str,
        node: &'a str,
    },
    /// A watch woke it (`wakeups` so far) while it waited on `lock_path`.
    Woken {
        me: &'a str,
        event: WatchEvent,
        wakeups: u32,
        lock_path: &'a str,
    },
    /// `held_lock`: it held the lock (or had stopped) when its session expired.
    LearnsSessionExpired {
        me: &'a str,
        held_lock: bool,
        session_timeout_ms: u64,
    },
    ClosesSession {
        me: &'a str,
    },
    SendsDebit {
        me: &'a str,
        step: u32,
        token: FencingToken,
    },
    DebitRefused {
        me: &'a str,
        reason: Option<&'a RejectReason>,
    },
    Releases {
        me: &'a str,
        node: &'a str,
    },
}

impl From<ZkLockWorkerSaw<'_>> for String {
    fn from(saw: ZkLockWorkerSaw<'_>) -> String {
        use ZkLockWorkerSaw::*;
        match saw {
            UpAgainBatchPosted { me } => format!("{me} is up again; its batch is already posted."),
            OpensSession { me } => {
                format!("{me}'s job fires. It opens a ZooKeeper session before touching the lock.")
            }
            HoldsLock {
                me,
                node,
                lock_path,
                token,
            } => format!(
                "{node} is the lowest child of {lock_path}: {me} holds the lock. Its sequence number {token} is its fencing token."
            ),
            WatchesPredecessor { me, place, ahead } => format!(
                "{me} is number {place} in line. It watches only {ahead}, the node just ahead of its own."
            ),
            WaitsForAnyChange {
                me,
                place,
                lock_path,
            } => format!(
                "{me} is number {place} in line and waits for any change under {lock_path}, like every other waiter."
            ),
            WaitsOnNode { me, node } => format!(
                "{me} waits. Its watch is on {node} alone, so only that node's deletion will wake it."
            ),
            NodeWentBeforeWatch { me, node } => {
                format!("{node} went before the watch was set: {me} lists again.")
            }
            Woken {
                me,
                event: WatchEvent::NodeDeleted,
                lock_path,
                ..
            } => format!(
                "{me} wakes: the node ahead of it is gone. It lists {lock_path} to see whether it is first now."
            ),
            Woken {
                me,
                event: WatchEvent::ChildrenChanged,
                wakeups,
                lock_path,
            } => format!(
                "{me} wakes (wake-up number {wakeups} for it) and lists {lock_path} again, though most likely it is still not first."
            ),
            LearnsSessionExpired {
                me,
                held_lock: true,
                session_timeout_ms,
            } => format!(
                "{me} learns that its session expired. It has not held the lock since ZooKeeper deleted its node — {} of its silence, long before it found out.",
                seconds(session_timeout_ms)
            ),
            LearnsSessionExpired { me, .. } => {
                format!("{me} learns that its session expired; its place in line is gone.")
            }
            ClosesSession { me } => format!("{me} closes its session and is done."),
            SendsDebit { me, step, token } => format!(
                "{me} has done step {step}'s work and sends the debit; its token {token} is part of the write's WHERE clause."
            ),
            DebitRefused { me, reason } => format!(
                "{me}'s debit was refused ({}). It does not hold the lock any more, whatever it believed; it stops.",
                reason.map(|r| r.text()).unwrap_or_default()
            ),
            Releases { me, node } => {
                format!("{me} has posted its whole batch and asks ZooKeeper to delete {node}, to release the lock.")
            }
        }
    }
}
