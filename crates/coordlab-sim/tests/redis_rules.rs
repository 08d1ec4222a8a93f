//! Unit tests of the Redis node (`protocols/redis_locks/redis/`), one rule each: `SET NX PX` grants once
//! and refuses while the key is held, PX expiry by the node's own clock, the release script
//! against a plain `DEL`, asynchronous replication with its lag, `WAIT`, promotion and
//! demotion by the failover monitor, and persistence on and off across a restart. Each feeds
//! one input to one node and asserts on the effects it emits.

use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::participant::{Effect, Participant};
use coordlab_sim::kernel::testing::{self, narration, persisted, timers_set};
use coordlab_sim::kernel::time::MS_US;
use coordlab_sim::protocols::redis_locks::redis::{
    Grant, RedisConfig, RedisDurable, RedisNode, Role, StoreTimer, SYNC_RETRY_MS,
};
use coordlab_sim::protocols::redis_locks::redis_msg::{KeyEntry, RedisMsg, ReplOp, StreamEntry};

const P: NodeId = NodeId(0);
const R1: NodeId = NodeId(1);
const R2: NodeId = NodeId(2);
const CA: NodeId = NodeId(3);
const CB: NodeId = NodeId(4);
const SENTINEL: NodeId = NodeId(5);
const NAMES: [&str; 6] = [
    "redis-1", "redis-2", "redis-3", "client-a", "client-b", "sentinel",
];

type Fx = Vec<Effect<RedisNode>>;
type N = testing::Harness<RedisNode>;

fn config(persistence: bool, lag_ms: u64) -> RedisConfig {
    RedisConfig {
        persistence,
        replication_lag_ms: lag_ms,
    }
}

fn node(id: NodeId, role: Role, config: RedisConfig) -> N {
    let durable = RedisDurable::fresh(role, Default::default());
    testing::Harness::new(id, RedisNode::recover(config, &durable), &NAMES)
}

/// A primary with persistence on and a replication lag of `lag_ms`, at 1 s on its clock.
fn primary(lag_ms: u64) -> N {
    let mut n = node(P, Role::Primary, config(true, lag_ms));
    n.now_us = 1_000 * MS_US;
    n
}

/// A replica of `P` that has taken an empty copy from it.
fn synced_replica(id: NodeId) -> N {
    let mut r = node(id, Role::Replica { of: P }, config(true, 0));
    r.start();
    r.deliver(
        P,
        RedisMsg::FullSync {
            data: Default::default(),
            offset: 0,
            stream: Vec::new(),
        },
    );
    assert!(r.node.synced);
    r
}

fn sent(fx: &Fx) -> Vec<(NodeId, RedisMsg)> {
    testing::sent(fx)
}

fn cancelled(fx: &Fx) -> Vec<StoreTimer> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::CancelTimer { timer } => Some(timer.clone()),
            _ => None,
        })
        .collect()
}

fn set_nx(n: &mut N, from: NodeId, value: &str) -> Fx {
    n.deliver(
        from,
        RedisMsg::Set {
            key: "lock".into(),
            value: value.into(),
            nx: true,
            px_ms: 10_000,
            incr: None,
        },
    )
}

fn set_reply(ok: bool) -> RedisMsg {
    RedisMsg::SetReply {
        key: "lock".into(),
        ok,
        counter: None,
    }
}

fn del_reply(deleted: bool) -> RedisMsg {
    RedisMsg::DelReply {
        key: "lock".into(),
        deleted,
    }
}

fn lock_entry(value: &str, expires_ms: u64) -> KeyEntry {
    KeyEntry {
        value: value.into(),
        expires_at_us: Some(expires_ms * MS_US),
    }
}

fn entry(offset: u64, op: ReplOp) -> StreamEntry {
    StreamEntry {
        origin: P,
        offset,
        op,
    }
}

fn set_op(value: &str, expires_ms: u64) -> ReplOp {
    ReplOp::Set {
        key: "lock".into(),
        value: value.into(),
        expires_at_us: Some(expires_ms * MS_US),
    }
}

fn del_op() -> ReplOp {
    ReplOp::Del { key: "lock".into() }
}

/// Connects `replica` to the primary `n` the way a replica does: `Sync`, then an ack.
fn connect(n: &mut N, replica: NodeId) {
    let fx = n.deliver(replica, RedisMsg::Sync { have: 0 });
    assert!(matches!(sent(&fx)[..], [(to, RedisMsg::FullSync { .. })] if to == replica));
    let offset = n.node.offset;
    n.deliver(replica, RedisMsg::ReplAck { offset });
}

#[test]
fn set_nx_px_grants_the_key_once_and_answers_nil_while_it_is_held() {
    let mut n = primary(0);
    let fx = set_nx(&mut n, CA, "a-1");
    assert_eq!(sent(&fx), vec![(CA, set_reply(true))]);
    assert_eq!(n.node.get("lock", n.now_us), Some(&lock_entry("a-1", 11_000)));
    assert_eq!(
        timers_set(&fx),
        vec![(StoreTimer::Expire { key: "lock".into() }, 10_000 * MS_US)]
    );
    assert_eq!(persisted(&fx).len(), 1, "persistence on: the write is on disk");
    assert_eq!(n.node.offset, 1);

    n.now_us = 5_000 * MS_US;
    let fx = set_nx(&mut n, CB, "b-1");
    assert_eq!(sent(&fx), vec![(CB, set_reply(false))]);
    assert!(persisted(&fx).is_empty() && timers_set(&fx).is_empty());
    assert_eq!(
        n.node.get("lock", n.now_us).map(|e| e.value.as_str()),
        Some("a-1")
    );
    assert_eq!(n.node.offset, 1);
    assert!(narration(&fx).contains("client-b does not get the lock"));
    assert_eq!(
        n.node.grants,
        vec![Grant {
            client: CA,
            value: "a-1".into(),
            counter: None
        }]
    );
}

#[test]
fn the_acquire_script_increments_the_counter_in_the_same_step_and_returns_it() {
    let fence = KeyEntry {
        value: "41".into(),
        expires_at_us: None,
    };
    let data = [("fence".to_string(), fence)].into_iter().collect();
    let mut n = testing::Harness::new(
        P,
        RedisNode::recover(config(true, 0), &RedisDurable::fresh(Role::Primary, data)),
        &NAMES,
    );
    let fx = n.deliver(
        CA,
        RedisMsg::Set {
            key: "lock".into(),
            value: "a-1".into(),
            nx: true,
            px_ms: 10_000,
            incr: Some("fence".into()),
        },
    );
    assert_eq!(
        sent(&fx),
        vec![(
            CA,
            RedisMsg::SetReply {
                key: "lock".into(),
                ok: true,
                counter: Some(42)
            }
        )]
    );
    assert_eq!(n.node.get("fence", 0).map(|e| e.value.as_str()), Some("42"));
    assert_eq!(n.node.offset, 2, "two writes in the stream, one persist");
    assert_eq!(persisted(&fx).len(), 1);
}

#[test]
fn a_key_is_gone_at_its_px_instant_by_the_node_s_clock_and_can_be_granted_again() {
    let mut n = primary(0);
    set_nx(&mut n, CA, "a-1");
    let get = |n: &mut N| {
        sent(&n.deliver(CB, RedisMsg::Get { key: "lock".into() }))
            .into_iter()
            .find_map(|(_, m)| match m {
                RedisMsg::GetReply { value, .. } => Some(value),
                _ => None,
            })
            .expect("a GET reply")
    };
    n.now_us = 11_000 * MS_US - 1;
    assert_eq!(get(&mut n), Some("a-1".to_string()));
    assert_eq!(sent(&set_nx(&mut n, CB, "b-1")), vec![(CB, set_reply(false))]);
    n.now_us = 11_000 * MS_US;
    assert_eq!(get(&mut n), None);
    let fx = set_nx(&mut n, CB, "b-1");
    assert_eq!(sent(&fx), vec![(CB, set_reply(true))]);
    assert!(narration(&fx).contains("has already expired, so it is gone before the command runs"));
    // The lazy expiry is a write of its own: DEL at #2, then the new SET at #3.
    let ops: Vec<ReplOp> = n.node.stream.iter().map(|e| e.op.clone()).collect();
    assert_eq!(ops, vec![set_op("a-1", 11_000), del_op(), set_op("b-1", 21_000)]);
}

#[test]
fn the_expiry_timer_deletes_the_key_on_a_primary_and_waits_longer_if_its_clock_says_not_yet() {
    let mut n = primary(0);
    connect(&mut n, R1);
    set_nx(&mut n, CA, "a-1");
    // Fired early by this node's own reckoning: set again for the rest.
    n.now_us = 10_500 * MS_US;
    let fx = n.fire(StoreTimer::Expire { key: "lock".into() });
    assert_eq!(
        timers_set(&fx),
        vec![(StoreTimer::Expire { key: "lock".into() }, 500 * MS_US)]
    );
    assert!(sent(&fx).is_empty() && n.node.data.contains_key("lock"));

    n.now_us = 11_000 * MS_US;
    let fx = n.fire(StoreTimer::Expire { key: "lock".into() });
    assert!(!n.node.data.contains_key("lock"));
    assert_eq!(persisted(&fx).len(), 1);
    // The deletion goes down the stream: replicas never expire keys themselves.
    assert_eq!(
        sent(&fx),
        vec![(
            R1,
            RedisMsg::Replicate {
                entries: vec![entry(2, del_op())]
            }
        )]
    );
}

#[test]
fn the_release_script_deletes_only_the_caller_s_value_and_del_deletes_anyone_s() {
    let mut n = primary(0);
    set_nx(&mut n, CA, "a-1");
    let cad = |n: &mut N, from: NodeId, value: &str| {
        n.deliver(
            from,
            RedisMsg::CompareAndDelete {
                key: "lock".into(),
                value: value.into(),
            },
        )
    };
    let fx = cad(&mut n, CB, "b-1");
    assert_eq!(sent(&fx), vec![(CB, del_reply(false))]);
    assert!(persisted(&fx).is_empty() && n.node.data.contains_key("lock"));
    assert!(n.node.deletions.is_empty());

    let fx = n.deliver(CB, RedisMsg::Del { key: "lock".into() });
    assert_eq!(sent(&fx), vec![(CB, del_reply(true))]);
    assert_eq!(cancelled(&fx), vec![StoreTimer::Expire { key: "lock".into() }]);
    assert!(!n.node.data.contains_key("lock"));
    let d = &n.node.deletions[0];
    assert_eq!(
        (d.client, d.value.as_str()),
        (CB, "a-1"),
        "client-b deleted client-a's lock"
    );
    assert!(narration(&fx).contains("DEL does not ask whose value that is"));

    set_nx(&mut n, CA, "a-2");
    let fx = cad(&mut n, CA, "a-2");
    assert_eq!(sent(&fx), vec![(CA, del_reply(true))]);
    assert_eq!(persisted(&fx).len(), 1);
}

#[test]
fn a_write_reaches_the_replicas_only_when_the_lag_has_passed() {
    let mut n = primary(200);
    connect(&mut n, R1);
    let fx = set_nx(&mut n, CA, "a-1");
    // The client has its OK now; the stream waits.
    assert_eq!(sent(&fx), vec![(CA, set_reply(true))]);
    assert!(timers_set(&fx).contains(&(StoreTimer::Flush, 200 * MS_US)));
    let fx = n.deliver(CA, RedisMsg::Del { key: "lock".into() });
    assert!(
        !timers_set(&fx).contains(&(StoreTimer::Flush, 200 * MS_US)),
        "one flush pending"
    );
    assert_eq!(n.node.unsent.len(), 2);
    let fx = n.fire(StoreTimer::Flush);
    assert_eq!(
        sent(&fx),
        vec![(
            R1,
            RedisMsg::Replicate {
                entries: vec![entry(1, set_op("a-1", 11_000)), entry(2, del_op())]
            }
        )]
    );
    assert!(n.node.unsent.is_empty());
}

#[test]
fn a_replica_applies_the_stream_in_order_acks_it_and_starts_over_after_a_gap() {
    let mut r = node(R1, Role::Replica { of: P }, config(true, 0));
    assert_eq!(sent(&r.start()), vec![(P, RedisMsg::Sync { have: 0 })]);
    let data = [("lock".to_string(), lock_entry("a-1", 11_000))]
        .into_iter()
        .collect();
    let fx = r.deliver(
        P,
        RedisMsg::FullSync {
            data,
            offset: 1,
            stream: vec![entry(1, set_op("a-1", 11_000))],
        },
    );
    assert_eq!(sent(&fx), vec![(P, RedisMsg::ReplAck { offset: 1 })]);
    assert_eq!(persisted(&fx)[0].data.len(), 1);
    // A stream from a node that is not its primary is ignored.
    assert!(r
        .deliver(
            R2,
            RedisMsg::Replicate {
                entries: vec![entry(2, del_op())]
            }
        )
        .is_empty());
    // An entry it already has is skipped; the next one is applied.
    let fx = r.deliver(
        P,
        RedisMsg::Replicate {
            entries: vec![entry(1, set_op("a-1", 11_000)), entry(2, del_op())],
        },
    );
    assert_eq!(sent(&fx), vec![(P, RedisMsg::ReplAck { offset: 2 })]);
    assert!(!r.node.data.contains_key("lock"));
    // #3 never arrived: it asks for a whole copy again.
    let fx = r.deliver(
        P,
        RedisMsg::Replicate {
            entries: vec![entry(4, del_op())],
        },
    );
    assert_eq!(sent(&fx), vec![(P, RedisMsg::Sync { have: 2 })]);
    assert!(!r.node.synced);
    assert_eq!(r.node.offset, 2);
}

#[test]
fn a_replica_refuses_writes_and_never_expires_a_key_by_itself() {
    let mut r = synced_replica(R1);
    r.deliver(
        P,
        RedisMsg::Replicate {
            entries: vec![entry(1, set_op("a-1", 11_000))],
        },
    );
    let fx = set_nx(&mut r, CB, "b-1");
    assert_eq!(
        sent(&fx),
        vec![(
            CB,
            RedisMsg::Error {
                text: "READONLY this node is a replica".into()
            }
        )]
    );
    r.now_us = 12_000 * MS_US;
    let fx = r.fire(StoreTimer::Expire { key: "lock".into() });
    assert!(fx.is_empty());
    assert!(r.node.data.contains_key("lock"), "it waits for its primary's DEL");
    // A read judges the expiry, though: the key is not served.
    let fx = r.deliver(CB, RedisMsg::Get { key: "lock".into() });
    assert_eq!(
        sent(&fx),
        vec![(
            CB,
            RedisMsg::GetReply {
                key: "lock".into(),
                value: None
            }
        )]
    );
}

#[test]
fn a_replica_whose_link_dropped_asks_for_a_fresh_copy_on_a_ping_once_the_retry_interval_passed() {
    // Started (and asked for its first copy) at 0 ms on its clock.
    let mut r = synced_replica(R1);
    assert!(r.node.watches(P) && !r.node.watches(R2));
    r.peer_down(P);
    assert!(r.node.link_down);
    let pong = RedisMsg::Pong {
        primary: false,
        replica_of: Some(P),
        offset: 0,
    };
    // However many sentinels ping it, it asks at most once per retry interval.
    r.now_us = (SYNC_RETRY_MS - 1) * MS_US;
    assert_eq!(
        sent(&r.deliver(SENTINEL, RedisMsg::Ping)),
        vec![(SENTINEL, pong.clone())]
    );
    r.now_us = SYNC_RETRY_MS * MS_US;
    assert_eq!(
        sent(&r.deliver(SENTINEL, RedisMsg::Ping)),
        vec![(SENTINEL, pong.clone()), (P, RedisMsg::Sync { have: 0 })]
    );
    r.now_us = (SYNC_RETRY_MS + 1) * MS_US;
    assert_eq!(sent(&r.deliver(SENTINEL, RedisMsg::Ping)), vec![(SENTINEL, pong)]);
}

#[test]
fn wait_answers_only_once_enough_replicas_acknowledged_the_client_s_last_write() {
    let mut n = primary(0);
    connect(&mut n, R1);
    connect(&mut n, R2);
    set_nx(&mut n, CA, "a-1");
    let fx = n.deliver(
        CA,
        RedisMsg::Wait {
            replicas: 2,
            timeout_ms: 1_000,
        },
    );
    assert!(sent(&fx).is_empty());
    assert_eq!(
        timers_set(&fx),
        vec![(StoreTimer::WaitTimeout { id: 1 }, 1_000 * MS_US)]
    );
    assert!(n.deliver(R1, RedisMsg::ReplAck { offset: 1 }).is_empty());
    let fx = n.deliver(R2, RedisMsg::ReplAck { offset: 1 });
    assert_eq!(sent(&fx), vec![(CA, RedisMsg::WaitReply { acked: 2 })]);
    assert_eq!(cancelled(&fx), vec![StoreTimer::WaitTimeout { id: 1 }]);
    // Answered once: the timeout, had it fired anyway, says nothing more.
    assert!(n.fire(StoreTimer::WaitTimeout { id: 1 }).is_empty());
}

#[test]
fn an_acknowledgement_from_a_node_this_primary_never_synced_counts_for_nothing() {
    // A primary back from a restart without persistence has synced nobody yet; a late ack
    // from before the crash must not make WAIT believe R1 has the new write.
    let mut n = primary(0);
    connect(&mut n, R2);
    set_nx(&mut n, CA, "a-1");
    assert!(n.deliver(R1, RedisMsg::ReplAck { offset: 5 }).is_empty());
    assert!(!n.node.replicas.contains_key(&R1), "R1 never asked for a copy");
    let fx = n.deliver(
        CA,
        RedisMsg::Wait {
            replicas: 1,
            timeout_ms: 1_000,
        },
    );
    assert!(
        sent(&fx).is_empty(),
        "no replica has the write yet: WAIT must hold its answer"
    );
}

#[test]
fn wait_times_out_with_the_count_it_has_and_takes_nothing_back() {
    let mut n = primary(0);
    connect(&mut n, R1);
    connect(&mut n, R2);
    set_nx(&mut n, CA, "a-1");
    n.deliver(
        CA,
        RedisMsg::Wait {
            replicas: 2,
            timeout_ms: 1_000,
        },
    );
    n.deliver(R1, RedisMsg::ReplAck { offset: 1 });
    let fx = n.fire(StoreTimer::WaitTimeout { id: 1 });
    assert_eq!(sent(&fx), vec![(CA, RedisMsg::WaitReply { acked: 1 })]);
    assert!(persisted(&fx).is_empty());
    assert!(
        n.node.data.contains_key("lock"),
        "WAIT reports, it never rolls back"
    );
    assert!(narration(&fx).contains("times out with 1 of 2 replica(s)"));
}

#[test]
fn a_promoted_replica_that_never_got_the_write_grants_the_key_again() {
    let mut n = primary(200);
    connect(&mut n, R1);
    set_nx(&mut n, CA, "a-1");
    assert_eq!(
        n.node.unsent.len(),
        1,
        "acknowledged to client-a, not yet streamed"
    );

    let mut r = synced_replica(R1);
    let fx = r.deliver(
        SENTINEL,
        RedisMsg::ReplicaOf {
            primary: None,
            epoch: 1,
        },
    );
    assert_eq!(
        sent(&fx),
        vec![(
            SENTINEL,
            RedisMsg::Pong {
                primary: true,
                replica_of: None,
                offset: 0
            }
        )]
    );
    assert_eq!((r.node.role, r.node.epoch), (Role::Primary, 1));
    let on_disk = persisted(&fx);
    assert_eq!((on_disk[0].role, on_disk[0].epoch), (Role::Primary, 1));
    assert_eq!(sent(&set_nx(&mut r, CB, "b-1")), vec![(CB, set_reply(true))]);

    // An order from an older epoch is ignored.
    let fx = r.deliver(
        SENTINEL,
        RedisMsg::ReplicaOf {
            primary: Some((P, "redis-1".into())),
            epoch: 0,
        },
    );
    assert!(fx.is_empty());
    assert_eq!(r.node.role, Role::Primary);
}

#[test]
fn a_demoted_primary_drops_what_it_had_not_streamed_and_takes_the_new_primary_s_copy() {
    let mut n = primary(200);
    connect(&mut n, R1);
    set_nx(&mut n, CA, "a-1");
    let fx = n.deliver(
        SENTINEL,
        RedisMsg::ReplicaOf {
            primary: Some((R1, "redis-2".into())),
            epoch: 1,
        },
    );
    assert_eq!(sent(&fx), vec![(R1, RedisMsg::Sync { have: 1 })]);
    assert_eq!(cancelled(&fx), vec![StoreTimer::Flush]);
    assert_eq!(n.node.role, Role::Replica { of: R1 });
    assert!(n.node.unsent.is_empty() && n.node.replicas.is_empty());
    assert!(n.fire(StoreTimer::Flush).is_empty());
    let fx = n.deliver(
        R1,
        RedisMsg::FullSync {
            data: Default::default(),
            offset: 0,
            stream: Vec::new(),
        },
    );
    assert_eq!(sent(&fx), vec![(R1, RedisMsg::ReplAck { offset: 0 })]);
    assert!(n.node.data.is_empty(), "client-a's lock is gone");
}

#[test]
fn with_persistence_a_restart_keeps_the_keys_and_rearms_their_expiry() {
    let mut n = primary(0);
    let fx = set_nx(&mut n, CA, "a-1");
    let on_disk = persisted(&fx)[0].clone();
    assert_eq!(on_disk.offset, 1);
    assert_eq!(on_disk.data.get("lock"), Some(&lock_entry("a-1", 11_000)));
    let mut back = testing::Harness::new(
        P,
        <RedisNode as Participant>::recover(&config(true, 0), P, &on_disk),
        &NAMES,
    );
    back.now_us = 4_000 * MS_US;
    let fx = back.start();
    assert_eq!(
        timers_set(&fx),
        vec![(StoreTimer::Expire { key: "lock".into() }, 7_000 * MS_US)]
    );
    assert_eq!(sent(&set_nx(&mut back, CB, "b-1")), vec![(CB, set_reply(false))]);
}

#[test]
fn without_persistence_a_restart_keeps_only_the_role_and_grants_the_key_again() {
    let mut n = node(P, Role::Primary, config(false, 0));
    n.deliver(
        SENTINEL,
        RedisMsg::ReplicaOf {
            primary: None,
            epoch: 3,
        },
    );
    let fx = set_nx(&mut n, CA, "a-1");
    let on_disk = persisted(&fx)[0].clone();
    assert_eq!(
        on_disk,
        RedisDurable {
            role: Role::Primary,
            epoch: 3,
            data: Default::default(),
            offset: 0,
            stream: Vec::new(),
        }
    );
    let mut back = testing::Harness::new(
        P,
        <RedisNode as Participant>::recover(&config(false, 0), P, &on_disk),
        &NAMES,
    );
    let fx = back.start();
    assert!(timers_set(&fx).is_empty());
    assert!(narration(&fx).contains("without persistence it remembers nothing"));
    assert_eq!(sent(&set_nx(&mut back, CB, "b-1")), vec![(CB, set_reply(true))]);
}
