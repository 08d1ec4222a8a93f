//! `consensus-lock`'s story in beats: store-1 leads → worker-a's key is created at revision 2
//! → store-1 crashes and the new leader still has that key → worker-a freezes → its lease runs
//! out and the revoke deletes its key → worker-b's watch fires and it holds with revision 3 →
//! worker-a's late write with revision 2 is refused. Every variant tells the same story (a
//! planted Raft bug does not show in these runs; the sweep finds it).

use super::ConsensusCast;
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::protocols::raft::Role;
use crate::protocols::services::lock_client::EtcdWorker;
use crate::protocols::services::lock_service::LockServer;
use crate::protocols::services::lock_store::LockEvent;
use crate::scenarios::property_library::ledger_row;

/// Whether `worker` believes it holds the lock.
fn holds(n: &Nodes<'_>, worker: NodeId) -> bool {
    n.live::<EtcdWorker>(worker).is_some_and(|w| w.held.is_some())
}

/// A live server other than store-1 leads, and its store still has worker-a's key.
fn new_leader_keeps_a(n: &Nodes<'_>, c: ConsensusCast) -> bool {
    c.stores[1..].iter().any(|id| {
        n.live::<LockServer>(*id).is_some_and(|s| {
            s.server.role == Role::Leader && s.server.locks.keys.values().any(|kv| kv.owner == c.workers[0])
        })
    })
}

/// Some live server has applied the deletion of worker-a's key by its lease's expiry (not by
/// worker-a's own revoke when it wakes in time and finishes).
fn a_key_expired(n: &Nodes<'_>, c: ConsensusCast) -> bool {
    c.stores.iter().any(|id| {
        n.live::<LockServer>(*id).is_some_and(|s| {
            let store = &s.server.locks;
            store
                .history
                .iter()
                .any(|e| matches!(e, LockEvent::Ended { expired: true, .. }))
                && store.keys.values().all(|kv| kv.owner != c.workers[0])
        })
    })
}

/// `crashes`: store-1 is scripted to crash (`crash_at_ms` above 0); without it there is no
/// failover to tell or to ask about.
pub fn beats(setup: &mut Setup, c: ConsensusCast, crashes: bool) {
    let [a, b] = c.workers;
    setup.beat(
        "leader",
        "store-1 is elected leader",
        "The three stores run Raft underneath the lock: store-1 wins term 1, and every write to the store now goes through its log.",
        move |n, _| n.live::<LockServer>(c.stores[0]).is_some_and(|s| s.server.role == Role::Leader),
    );
    let a_holds = setup.beat(
        "a-holds",
        "worker-a holds the lock at revision 2",
        "Its Txn put its own key, /lock/account-42/7a01, because no such key existed. The store was at revision 1, so the key's create revision is 2: its fencing token.",
        move |n, _| holds(n, a),
    );
    if crashes {
        a_holds.ask(
            "store-1 crashes a moment after telling worker-a yes. What will the next leader know about worker-a's key?",
            &["Nothing: the key died with store-1", "It has the key only once worker-a sends a keep-alive", "It has the key: a majority stored it before worker-a was told"],
            2,
            "store-1 answered only after a majority had the entry, and Raft elects only a server whose log holds every committed entry.",
        );
        setup.beat(
            "failover",
            "A new leader still has worker-a's key",
            "store-1 crashed, and the new leader's store still shows worker-a's key first in line. worker-b, whose key came next (revision 3), still waits behind it.",
            move |n, _| new_leader_keeps_a(n, c),
        );
    }
    setup.beat(
        "freeze",
        "worker-a freezes holding the lock",
        "A stop-the-world pause: no keep-alive leaves worker-a, yet it still believes it holds revision 2.",
        move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == a),
    );
    setup.beat(
        "revoked",
        "The lease runs out: worker-a's key is deleted",
        "By its own clock the leader saw no keep-alive for a whole TTL. It revoked the lease through the log, and that one write deleted worker-a's key: revision 4.",
        move |n, _| a_key_expired(n, c),
    );
    setup.beat(
        "b-holds",
        "worker-b's watch fires: it holds at revision 3",
        "worker-b was watching worker-a's key, not polling. It reads once more, finds no key ahead of its own, and holds with token 3.",
        move |n, _| holds(n, b),
    );
    setup.beat(
        "fenced",
        "worker-a's stale write is refused",
        "worker-a wakes and writes with token 2; the ledger has seen 3 and changes nothing. Raft kept the store's leaders in line; only the token stops the worker.",
        move |n, _| {
            ledger_row(n, c.ledger)
                .is_some_and(|l| l.writes.iter().any(|w| w.worker == a && !w.accepted))
        },
    );
}
