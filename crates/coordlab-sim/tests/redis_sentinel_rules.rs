//! Unit tests of the Sentinel-like failover monitor (`protocols/redis_sentinel.rs`), one rule
//! each: its ping rounds, when it declares the primary down, which replica it promotes, what
//! it tells the nodes and the clients, and when it stops. Each feeds one input and asserts on
//! the effects it emits.

use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::participant::{Effect, Participant};
use coordlab_sim::kernel::testing::{self, narration, persisted, timers_set};
use coordlab_sim::kernel::time::MS_US;
use coordlab_sim::protocols::redis_msg::RedisMsg;
use coordlab_sim::protocols::redis_sentinel::{
    Failover, PingRound, Sentinel, SentinelConfig, SentinelDurable,
};

const N1: NodeId = NodeId(0);
const N2: NodeId = NodeId(1);
const N3: NodeId = NodeId(2);
const WA: NodeId = NodeId(3);
const WB: NodeId = NodeId(4);
const ME: NodeId = NodeId(5);
const NAMES: [&str; 6] = [
    "redis-1", "redis-2", "redis-3", "worker-a", "worker-b", "sentinel",
];

const PING_MS: u64 = 100;
const DOWN_AFTER_MS: u64 = 1_000;

type Fx = Vec<Effect<Sentinel>>;
type S = testing::Harness<Sentinel>;

fn config() -> SentinelConfig {
    SentinelConfig {
        nodes: vec![N1, N2, N3],
        clients: vec![WA, WB],
        ping_ms: PING_MS,
        down_after_ms: DOWN_AFTER_MS,
        stop_at_ms: 60_000,
    }
}

/// The monitor of `redis-1` at epoch 0, started at 0 ms.
fn sentinel() -> S {
    let s = Sentinel::recover(
        &config(),
        &SentinelDurable {
            primary: N1,
            epoch: 0,
        },
    );
    let mut s = testing::Harness::new(ME, s, &NAMES);
    s.start();
    s
}

fn at(s: &mut S, ms: u64) {
    s.now_us = ms * MS_US;
}

fn sent(fx: &Fx) -> Vec<(NodeId, RedisMsg)> {
    testing::sent(fx)
}

fn pong(s: &mut S, from: NodeId, primary: bool, replica_of: Option<NodeId>, offset: u64) -> Fx {
    s.deliver(
        from,
        RedisMsg::Pong {
            primary,
            replica_of,
            offset,
        },
    )
}

fn replica_pong(s: &mut S, from: NodeId, offset: u64) -> Fx {
    pong(s, from, false, Some(N1), offset)
}

fn pings() -> Vec<(NodeId, RedisMsg)> {
    vec![(N1, RedisMsg::Ping), (N2, RedisMsg::Ping), (N3, RedisMsg::Ping)]
}

fn replica_of(primary: NodeId, name: &str, epoch: u64) -> RedisMsg {
    RedisMsg::ReplicaOf {
        primary: Some((primary, name.into())),
        epoch,
    }
}

fn promote(epoch: u64) -> RedisMsg {
    RedisMsg::ReplicaOf { primary: None, epoch }
}

/// Fails `redis-1` over to `redis-3` at 1,001 ms: the replicas answered at 900 ms, redis-3
/// with more data.
fn failed_over_to_n3() -> S {
    let mut s = sentinel();
    at(&mut s, 900);
    replica_pong(&mut s, N2, 3);
    replica_pong(&mut s, N3, 5);
    at(&mut s, DOWN_AFTER_MS + 1);
    s.fire(PingRound);
    assert_eq!(s.node.primary, N3);
    s
}

#[test]
fn start_gives_every_node_a_grace_period_and_arms_the_first_round() {
    let s = Sentinel::recover(
        &config(),
        &SentinelDurable {
            primary: N1,
            epoch: 0,
        },
    );
    let mut s = testing::Harness::new(ME, s, &NAMES);
    at(&mut s, 5_000);
    let fx = s.start();
    assert_eq!(timers_set(&fx), vec![(PingRound, PING_MS * MS_US)]);
    assert!(sent(&fx).is_empty() && persisted(&fx).is_empty());
    at(&mut s, 5_900);
    replica_pong(&mut s, N2, 3);
    // Silence is counted from the start, not from 0 on its clock: not down at 5.9 s...
    let fx = s.fire(PingRound);
    assert_eq!(sent(&fx), pings());
    // ...but a primary that never answered at all is down one down-after period later.
    at(&mut s, 5_000 + DOWN_AFTER_MS + 1);
    let fx = s.fire(PingRound);
    assert_eq!(sent(&fx)[0], (N2, promote(1)));
}

#[test]
fn every_round_pings_every_node_and_arms_the_next() {
    let mut s = sentinel();
    at(&mut s, PING_MS);
    let fx = s.fire(PingRound);
    assert_eq!(sent(&fx), pings());
    assert_eq!(timers_set(&fx), vec![(PingRound, PING_MS * MS_US)]);
    assert!(persisted(&fx).is_empty());
}

#[test]
fn a_primary_silent_for_exactly_down_after_is_not_yet_down() {
    let mut s = sentinel();
    at(&mut s, 900);
    replica_pong(&mut s, N2, 3);
    at(&mut s, DOWN_AFTER_MS);
    let fx = s.fire(PingRound);
    assert_eq!(sent(&fx), pings(), "no orders, only pings");
    assert_eq!((s.node.primary, s.node.epoch), (N1, 0));
    // A primary that answers is never down, however long the run.
    at(&mut s, 1_500);
    pong(&mut s, N1, true, None, 3);
    at(&mut s, 2_400);
    s.fire(PingRound);
    assert_eq!(s.node.primary, N1);
}

#[test]
fn a_silent_primary_is_replaced_by_the_replica_with_the_most_data_and_every_node_is_told() {
    let mut s = sentinel();
    at(&mut s, 900);
    replica_pong(&mut s, N2, 3);
    replica_pong(&mut s, N3, 5);
    at(&mut s, DOWN_AFTER_MS + 1);
    let fx = s.fire(PingRound);
    let mut expected = vec![
        (N3, promote(1)),
        (N1, replica_of(N3, "redis-3", 1)),
        (N2, replica_of(N3, "redis-3", 1)),
    ];
    expected.extend(pings());
    assert_eq!(sent(&fx), expected);
    assert_eq!(
        persisted(&fx),
        vec![&SentinelDurable {
            primary: N3,
            epoch: 1
        }]
    );
    assert_eq!(
        s.node.failovers,
        vec![Failover {
            from: N1,
            to: N3,
            epoch: 1,
            offset: 5
        }]
    );
    assert!(narration(&fx).contains("promotes redis-3, the replica with the most data it has heard of (#5)"));
}

#[test]
fn replicas_with_equal_data_are_tied_in_favour_of_the_first_in_its_list() {
    let mut s = sentinel();
    at(&mut s, 900);
    replica_pong(&mut s, N3, 4);
    replica_pong(&mut s, N2, 4);
    at(&mut s, DOWN_AFTER_MS + 1);
    let fx = s.fire(PingRound);
    assert_eq!(sent(&fx)[0], (N2, promote(1)));
    assert_eq!(s.node.primary, N2);
}

#[test]
fn a_replica_that_has_gone_quiet_is_no_candidate_however_much_data_it_had() {
    let mut s = sentinel();
    at(&mut s, 100);
    replica_pong(&mut s, N3, 9);
    at(&mut s, 900);
    replica_pong(&mut s, N2, 3);
    // 1,001 ms: redis-3 was last heard 901 ms ago, more than two and a half rounds.
    at(&mut s, DOWN_AFTER_MS + 1);
    let fx = s.fire(PingRound);
    assert_eq!(sent(&fx)[0], (N2, promote(1)));
    assert_eq!(s.node.failovers[0].offset, 3);
}

#[test]
fn with_no_replica_answering_there_is_nothing_to_promote() {
    let mut s = sentinel();
    at(&mut s, DOWN_AFTER_MS + 1);
    let fx = s.fire(PingRound);
    assert_eq!(sent(&fx), pings(), "it keeps pinging, and orders nothing");
    assert_eq!(timers_set(&fx), vec![(PingRound, PING_MS * MS_US)]);
    assert!(persisted(&fx).is_empty());
    assert_eq!((s.node.primary, s.node.epoch), (N1, 0));
    assert!(s.node.failovers.is_empty());
    assert!(narration(&fx).contains("there is nothing to promote"));
}

#[test]
fn the_clients_hear_of_the_new_primary_once_it_confirms_and_only_once() {
    let mut s = failed_over_to_n3();
    // An answer from before the promotion, still a replica's: no announcement, no new order.
    at(&mut s, DOWN_AFTER_MS + 20);
    assert!(replica_pong(&mut s, N3, 5).is_empty());
    // The promoted node's answer to REPLICAOF NO ONE.
    at(&mut s, DOWN_AFTER_MS + 30);
    let fx = pong(&mut s, N3, true, None, 5);
    let primary_is = RedisMsg::PrimaryIs {
        primary: N3,
        name: "redis-3".into(),
        epoch: 1,
    };
    assert_eq!(sent(&fx), vec![(WA, primary_is.clone()), (WB, primary_is)]);
    at(&mut s, DOWN_AFTER_MS + 40);
    assert!(pong(&mut s, N3, true, None, 5).is_empty());
}

#[test]
fn a_node_in_the_wrong_role_is_ordered_again_but_not_while_its_last_order_may_be_in_flight() {
    let mut s = failed_over_to_n3();
    // The old primary comes back still claiming to be primary.
    at(&mut s, DOWN_AFTER_MS + 1 + PING_MS / 2);
    assert!(
        pong(&mut s, N1, true, None, 6).is_empty(),
        "ordered half a round ago"
    );
    at(&mut s, DOWN_AFTER_MS + 1 + PING_MS);
    let fx = pong(&mut s, N1, true, None, 6);
    assert_eq!(sent(&fx), vec![(N1, replica_of(N3, "redis-3", 1))]);
    assert!(narration(&fx).contains("redis-1 answers as a primary, but the sentinel's primary is redis-3"));
    at(&mut s, DOWN_AFTER_MS + 1 + PING_MS + PING_MS / 2);
    assert!(
        pong(&mut s, N1, true, None, 6).is_empty(),
        "ordered again just now"
    );
    // A replica of the right primary needs no order.
    at(&mut s, 5_000);
    assert!(pong(&mut s, N2, false, Some(N3), 5).is_empty());
}

#[test]
fn who_is_primary_is_answered_from_its_current_view() {
    let mut s = failed_over_to_n3();
    let fx = s.deliver(WA, RedisMsg::WhoIsPrimary);
    assert_eq!(
        sent(&fx),
        vec![(
            WA,
            RedisMsg::PrimaryIs {
                primary: N3,
                name: "redis-3".into(),
                epoch: 1
            }
        )]
    );
}

#[test]
fn it_stops_its_rounds_at_stop_at_and_gives_no_more_orders() {
    let mut s = sentinel();
    at(&mut s, 60_000);
    let fx = s.fire(PingRound);
    assert!(sent(&fx).is_empty() && timers_set(&fx).is_empty());
    assert!(narration(&fx).contains("stops its rounds"));
    at(&mut s, 61_000);
    assert!(s.fire(PingRound).is_empty());
    assert!(
        pong(&mut s, N2, true, None, 0).is_empty(),
        "a wrong role goes uncorrected"
    );
}

#[test]
fn a_restart_brings_back_the_primary_and_epoch_it_last_wrote_down() {
    let s = failed_over_to_n3();
    let on_disk = s.node.durable();
    assert_eq!(
        on_disk,
        SentinelDurable {
            primary: N3,
            epoch: 1
        }
    );
    let mut back = testing::Harness::new(
        ME,
        <Sentinel as Participant>::recover(&config(), ME, &on_disk),
        &NAMES,
    );
    at(&mut back, 3_000);
    back.start();
    assert_eq!((back.node.primary, back.node.epoch), (N3, 1));
    assert!(back.node.failovers.is_empty(), "its history is not on disk");
    // The silence clock starts over at the restart, and the next failover's epoch follows
    // the one on disk.
    at(&mut back, 3_900);
    pong(&mut back, N2, false, Some(N3), 5);
    at(&mut back, 3_000 + DOWN_AFTER_MS);
    assert_eq!(sent(&back.fire(PingRound)), pings());
    at(&mut back, 3_000 + DOWN_AFTER_MS + 1);
    let fx = back.fire(PingRound);
    assert_eq!(sent(&fx)[0], (N2, promote(2)));
    assert_eq!(
        persisted(&fx),
        vec![&SentinelDurable {
            primary: N2,
            epoch: 2
        }]
    );
}
