//! The story of `redis-failover` in beats, told by the stores', sentinels', workers' and
//! ledger's state. The default story reaches "Two holders" at its fifth beat, so that the
//! side-by-side view (beside `consensus-lock`) gets there in a few presses.

use super::redis_failover::{RedisCast, FENCE_KEY, LOCK_KEY};
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::protocols::redis_locks::redis::{RedisNode, Role};
use crate::protocols::redis_locks::redis_sentinel::Sentinel;
use crate::protocols::redis_locks::redis_worker::{Phase, RedisWorker};
use crate::scenarios::property_library::ledger_row;

/// Which story the run tells.
pub struct Story {
    /// `wait=wait-1`.
    pub wait: bool,
    /// `failure=other-replica-promoted`.
    pub other_replica: bool,
    /// `release=del`.
    pub naive_delete: bool,
    pub lag_ms: u64,
    /// Whether the crash surely comes before store-1 streams A's write (`Some(false)`: surely
    /// after; `None`: the hops' latency decides).
    pub write_lost: Option<bool>,
}

fn worker<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a RedisWorker> {
    n.live::<RedisWorker>(id)
}

fn believes(n: &Nodes<'_>, id: NodeId) -> bool {
    worker(n, id).is_some_and(|w| w.believes_it_holds())
}

fn store<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a RedisNode> {
    n.live::<RedisNode>(id)
}

/// A store other than store-1 is up and acting as the primary.
fn promoted(n: &Nodes<'_>, c: RedisCast, id: Option<NodeId>) -> bool {
    c.stores[1..]
        .iter()
        .filter(|s| id.is_none_or(|i| i == **s))
        .any(|s| store(n, *s).is_some_and(|st| st.role == Role::Primary))
}

/// The ledger accepted a debit from worker-b.
fn b_debited(n: &Nodes<'_>, c: RedisCast) -> bool {
    ledger_row(n, c.ledger)
        .is_some_and(|row| row.writes.iter().any(|w| w.worker == c.workers[1] && w.accepted))
}

/// The sentinels' verdict, told the same in both primary-crash stories: it happens once a
/// quorum of sentinels has found store-1 down (or one has already failed it over).
fn odown(setup: &mut Setup, c: RedisCast) {
    setup.beat(
        "odown",
        "The sentinels agree: store-1 is down",
        "Two of three sentinels (the quorum) find it silent too long. A majority then elects one sentinel to fail it over.",
        move |n, _| {
            let agrees = |s: &Sentinel| s.odown || !s.failovers.is_empty() || s.config_epoch > 0;
            c.sentinels.iter().any(|s| n.live::<Sentinel>(*s).is_some_and(agrees))
        },
    );
}

const CRASH_QUESTION: &str =
    "The primary dies before the replica has the lock key. What will the promoted replica say to B?";
const CRASH_ANSWERS: [&str; 3] = [
    "nil: the lock is taken",
    "OK, and token 42 again",
    "An error until store-1 returns",
];
const CRASH_WHY: &str = "The replica never received A's SET or its INCR: it has no lock key and the counter is still 41, so the next SET NX succeeds and the INCR gives 42 again.";

pub fn beats(setup: &mut Setup, story: Story, c: RedisCast) {
    let [a, b] = c.workers;
    let store_1 = c.stores[0];
    if story.other_replica {
        other_replica(setup, story.wait, c);
        return;
    }
    let lag = story.lag_ms;
    if story.write_lost != Some(true) {
        streamed_in_time(setup, &story, c);
        return;
    }
    if story.wait {
        setup.beat(
            "a-waits",
            "A gets OK and sends WAIT 1",
            "The lock is set on store-1 and visible to every client already. WAIT only delays A's start until a replica has the write.",
            move |n, _| worker(n, a).is_some_and(|w| w.phase == Phase::Confirming),
        );
    } else {
        setup.beat(
            "a-holds",
            "A takes the lock on store-1 with token 42",
            &format!("store-1 answers OK at once. Its replicas hear of the write only when the stream next goes out, {lag} ms later."),
            move |n, _| believes(n, a),
        );
    }
    setup
        .beat(
            "crash",
            "store-1 crashes before streaming the lock",
            "The lock key and the counter's increment were in store-1's memory only. Both replicas are still at #0.",
            move |n, _| !n.is_live(store_1),
        )
        .ask(
            if story.wait {
                "The primary dies before any replica has the lock key. What will the promoted replica answer the next worker that asks?"
            } else {
                CRASH_QUESTION
            },
            &CRASH_ANSWERS,
            1,
            CRASH_WHY,
        );
    if story.wait {
        setup.beat(
            "a-lets-go",
            "A's WAIT never returns; A lets the lock go",
            "Its connection drops with WAIT still waiting. A cannot know whether a replica got the key, so it does not start.",
            move |n, _| worker(n, a).is_some_and(|w| w.held.is_none()),
        );
    }
    odown(setup, c);
    setup.beat(
        "promoted",
        "A replica is promoted without the lock",
        "REPLICAOF NO ONE: it becomes the primary with the data it had, no lock key and the counter at 41. Nobody checks what store-1 acknowledged.",
        move |n, _| promoted(n, c, None),
    );
    if story.wait {
        setup.beat(
            "token-again",
            "Token 42 is handed out a second time",
            "The promoted replica grants the lock with 42 again. One holder here only because A never started on its first grant; WAIT would not stop a holder paused past its TTL.",
            move |n, _| believes(n, a) || believes(n, b),
        );
        setup.beat(
            "ledger-takes-it",
            "The ledger takes token 42",
            "It is the highest token the ledger has seen, so the debit lands. WAIT made A wait; it made Redis no more consistent.",
            move |n, _| ledger_row(n, c.ledger).is_some_and(|row| row.writes.iter().any(|w| w.accepted)),
        );
        return;
    }
    setup.beat(
        "two-holders",
        "Two holders",
        "The new primary grants B the lock with A's token, 42. A was never told its lock is gone, and keeps working.",
        move |n, _| believes(n, a) && believes(n, b),
    );
    setup.beat(
        "same-token",
        "The ledger takes token 42 from both",
        "Both debits carry the same token, so the fence cannot tell the two holders apart.",
        move |n, _| b_debited(n, c),
    );
    if story.naive_delete {
        setup.beat(
            "foreign-del",
            "A's DEL removes B's lock",
            "A releases with a plain DEL, which deletes whatever value is there: B's. A third worker could now take it.",
            move |n, _| {
                c.stores[1..].iter().any(|s| {
                    store(n, *s).is_some_and(|st| {
                        st.deletions
                            .iter()
                            .any(|d| d.client == a && d.key == LOCK_KEY && d.value.starts_with("b-"))
                    })
                })
            },
        );
    }
}

/// `failure=primary-crash` with a lag short enough that store-1 may stream A's write before
/// it crashes: the replica promoted then has the lock, and there is no second holder to tell.
fn streamed_in_time(setup: &mut Setup, story: &Story, c: RedisCast) {
    let a = c.workers[0];
    let store_1 = c.stores[0];
    let lag = story.lag_ms;
    setup.beat(
        "a-holds",
        "A takes the lock on store-1 with token 42",
        &format!("store-1 answers OK at once and streams the write to its replicas {lag} ms later."),
        move |n, _| worker(n, a).is_some_and(|w| w.held.is_some()),
    );
    let (title, text) = if story.write_lost == Some(false) {
        (
            "store-1 crashes after streaming the lock",
            "The stream went out before the crash: both replicas already hold the lock key and the counter at 42.",
        )
    } else {
        (
            "store-1 crashes about when it streams the lock",
            "Whether the stream left before the crash is a matter of a few milliseconds' latency: the replicas may or may not have the lock key.",
        )
    };
    setup.beat("crash", title, text, move |n, _| !n.is_live(store_1));
    odown(setup, c);
    setup.beat(
        "promoted",
        "A replica is promoted",
        "REPLICAOF NO ONE: it becomes the primary with the data it had. Had the crash come before the stream, that data would have had no lock key: a lag this short only narrows the window.",
        move |n, _| promoted(n, c, None),
    );
}

/// `failure=other-replica-promoted`: store-2 has the lock, store-3 is promoted.
fn other_replica(setup: &mut Setup, wait: bool, c: RedisCast) {
    let [a, b] = c.workers;
    let [store_1, store_2, store_3] = c.stores;
    setup.beat(
        "a-granted",
        "A gets OK from store-1 with token 42",
        "The link from store-1 to store-3 was cut earlier, so only store-2 will hear of this write.",
        move |n, _| worker(n, a).is_some_and(|w| w.held.is_some()),
    );
    setup.beat(
        "store-2-has-it",
        "store-2 has the lock; store-3 does not",
        "The stream reached store-2 and it acknowledged. store-3 is still at #0 and nobody notices.",
        move |n, _| {
            store(n, store_2).is_some_and(|s| s.data.contains_key(LOCK_KEY) && s.data.contains_key(FENCE_KEY))
        },
    );
    if wait {
        setup.beat(
            "wait-ok",
            "WAIT says 1 replica has it",
            "A starts its job. WAIT has done all it can: it delayed A until store-2 had the write.",
            move |n, _| worker(n, a).is_some_and(|w| w.wait_acks.iter().any(|a| *a >= 1)),
        );
    }
    setup
        .beat(
            "crash",
            "store-1 dies while store-2 is frozen",
            "The only replica with A's lock stops answering for 1.4 s, right when the sentinels look for a candidate.",
            move |n, _| !n.is_live(store_1),
        )
        .ask(
            "store-2 has A's lock but is frozen. Which replica will the sentinels promote?",
            &["store-2, the one with the lock", "Neither: they wait for store-2", "store-3, the one that answers"],
            2,
            "A frozen replica answers no pings, so only store-3 is a candidate, and no one asks whether it has every acknowledged write.",
        );
    setup.beat(
        "promoted",
        "store-3 is promoted without the lock",
        "The sentinels agreed (quorum 2), elected one of themselves, and it made store-3 the primary: no lock key, counter 41.",
        move |n, _| promoted(n, c, Some(store_3)),
    );
    if wait {
        // B's WAIT can only be answered once store-2 has rejoined as store-3's replica.
        copy_replaced(setup, wait, c);
    }
    setup.beat(
        "two-holders",
        "Two holders",
        if wait {
            "store-3 grants B token 42, and B's WAIT returns 1 too: from store-2, now a copy of store-3. A's WAIT also returned 1, and A still works under a lock that no longer exists."
        } else {
            "store-3 grants B the lock with token 42, while A still works under the lock store-2 confirmed."
        },
        move |n, _| believes(n, a) && believes(n, b),
    );
    if !wait {
        copy_replaced(setup, wait, c);
    }
}

fn copy_replaced(setup: &mut Setup, wait: bool, c: RedisCast) {
    let [_, store_2, store_3] = c.stores;
    setup.beat(
        "copy-replaced",
        "store-2 rejoins and drops A's lock",
        if wait {
            "It wakes, is told to replicate from store-3 and takes a full copy: the write A's WAIT counted is gone for good."
        } else {
            "It wakes, is told to replicate from store-3 and takes a full copy: the only copy of A's lock is gone for good."
        },
        move |n, _| {
            store(n, store_2).is_some_and(|s| {
                s.role == (Role::Replica { of: store_3 })
                    && s.synced
                    && s.data.get(LOCK_KEY).is_none_or(|e| !e.value.starts_with("a-"))
            })
        },
    );
}
