//! Unit tests of one Redis Sentinel among three (`protocols/redis_locks/redis_sentinel/`), one rule each:
//! its ping rounds, when the primary is subjectively down (its own view) and objectively down
//! (a quorum of 2), the vote that lets exactly one sentinel fail over (a majority of 3), which
//! replica it promotes, what it tells the nodes, the clients and the other sentinels, and when
//! it stops. Each feeds one input and asserts on the effects it emits.

use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::participant::{Effect, Participant};
use coordlab_sim::kernel::testing::{self, narration, persisted, timers_set};
use coordlab_sim::kernel::time::MS_US;
use coordlab_sim::protocols::redis_locks::redis_msg::{RedisMsg, Vote};
use coordlab_sim::protocols::redis_locks::redis_sentinel::{
    Failover, PingRound, Sentinel, SentinelConfig, SentinelDurable,
};

const N1: NodeId = NodeId(0);
const N2: NodeId = NodeId(1);
const N3: NodeId = NodeId(2);
const WA: NodeId = NodeId(3);
const WB: NodeId = NodeId(4);
const ME: NodeId = NodeId(5);
const S2: NodeId = NodeId(6);
const S3: NodeId = NodeId(7);
const NAMES: [&str; 8] = [
    "redis-1",
    "redis-2",
    "redis-3",
    "worker-a",
    "worker-b",
    "sentinel-1",
    "sentinel-2",
    "sentinel-3",
];

const PING_MS: u64 = 100;
const DOWN_AFTER_MS: u64 = 1_000;
const FAILOVER_TIMEOUT_MS: u64 = 1_000;

type Fx = Vec<Effect<Sentinel>>;
type S = testing::Harness<Sentinel>;

fn config() -> SentinelConfig {
    SentinelConfig {
        nodes: vec![N1, N2, N3],
        sentinels: vec![ME, S2, S3],
        clients: vec![WA, WB],
        quorum: 2,
        ping_ms: PING_MS,
        down_after_ms: DOWN_AFTER_MS,
        failover_timeout_ms: FAILOVER_TIMEOUT_MS,
        stop_at_ms: 60_000,
    }
}

/// Sentinel-1 watching `redis-1` at epoch 0, started at 0 ms.
fn sentinel() -> S {
    let s = Sentinel::recover(&config(), &SentinelDurable::fresh(N1));
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

fn is_down(candidate: Option<NodeId>, epoch: u64) -> RedisMsg {
    RedisMsg::IsPrimaryDown {
        primary: N1,
        name: "redis-1".into(),
        epoch,
        candidate,
    }
}

/// Another sentinel's answer about redis-1, with its vote.
fn reply(down: bool, vote: Option<(NodeId, u64)>) -> RedisMsg {
    RedisMsg::PrimaryDownReply {
        primary: N1,
        name: "redis-1".into(),
        down,
        vote: vote.map(|(leader, epoch)| Vote {
            leader,
            name: NAMES[leader.index()].into(),
            epoch,
        }),
    }
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

fn hello(primary: NodeId, epoch: u64) -> RedisMsg {
    RedisMsg::Hello {
        primary,
        name: NAMES[primary.index()].into(),
        epoch,
    }
}

/// At 1,001 ms redis-1 has been silent too long; the replicas answered at 900 ms, redis-3
/// with more data. Returns the effects of that round.
fn subjectively_down(s: &mut S) -> Fx {
    at(s, 900);
    replica_pong(s, N2, 3);
    replica_pong(s, N3, 5);
    at(s, DOWN_AFTER_MS + 1);
    s.fire(PingRound)
}

/// Sentinel-2 agrees redis-1 is down: sentinel-1 starts epoch 1 and asks for votes.
fn candidate() -> S {
    let mut s = sentinel();
    subjectively_down(&mut s);
    at(&mut s, DOWN_AFTER_MS + 3);
    s.deliver(S2, reply(true, None));
    s
}

/// Sentinel-2 votes for sentinel-1: it fails redis-1 over to redis-3.
fn failed_over_to_n3() -> S {
    let mut s = candidate();
    at(&mut s, DOWN_AFTER_MS + 5);
    s.deliver(S2, reply(true, Some((ME, 1))));
    assert_eq!(s.node.primary, N3);
    s
}

#[test]
fn start_arms_the_first_round_at_its_own_moment_within_one_interval() {
    let s = Sentinel::recover(&config(), &SentinelDurable::fresh(N1));
    let mut s = testing::Harness::new(ME, s, &NAMES);
    at(&mut s, 5_000);
    let fx = s.start();
    let timers = timers_set(&fx);
    assert_eq!(timers.len(), 1);
    assert!((1..=PING_MS).any(|ms| timers[0].1 == ms * MS_US), "{timers:?}");
    assert!(sent(&fx).is_empty() && persisted(&fx).is_empty());
    assert!(narration(&fx).contains("3 sentinels watch redis-1"));
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
    assert_eq!(sent(&fx), pings(), "no questions, only pings");
    assert!(!s.node.sdown);
}

#[test]
fn one_sentinel_finding_the_primary_down_only_asks_the_others() {
    let mut s = sentinel();
    let fx = subjectively_down(&mut s);
    let mut expected = vec![(S2, is_down(None, 0)), (S3, is_down(None, 0))];
    expected.extend(pings());
    assert_eq!(sent(&fx), expected, "no vote asked, no order given");
    assert!(s.node.sdown && !s.node.odown);
    assert!(persisted(&fx).is_empty());
    assert!(narration(&fx).contains("subjectively down"));
    // Another sentinel that does not find it down changes nothing.
    let fx = s.deliver(S3, reply(false, None));
    assert!(sent(&fx).is_empty());
    assert!(!s.node.odown && s.node.election.is_none());
}

#[test]
fn a_quorum_of_two_makes_it_objectively_down_and_starts_an_election() {
    let mut s = sentinel();
    subjectively_down(&mut s);
    at(&mut s, DOWN_AFTER_MS + 3);
    let fx = s.deliver(S2, reply(true, None));
    assert!(s.node.odown);
    assert_eq!(
        sent(&fx),
        vec![(S2, is_down(Some(ME), 1)), (S3, is_down(Some(ME), 1))]
    );
    assert_eq!(
        persisted(&fx),
        vec![&SentinelDurable {
            primary: N1,
            config_epoch: 0,
            current_epoch: 1,
            vote: Some((ME, 1)),
        }],
        "its own vote is on disk before it asks"
    );
    assert!(narration(&fx).contains("objectively down"));
    // One vote (its own) is not a majority of three: nothing is promoted yet.
    assert_eq!(s.node.primary, N1);
    assert!(s.node.failovers.is_empty());
}

#[test]
fn with_a_majority_of_votes_it_promotes_the_replica_with_the_most_data_and_tells_everyone() {
    let mut s = candidate();
    at(&mut s, DOWN_AFTER_MS + 5);
    let fx = s.deliver(S2, reply(true, Some((ME, 1))));
    assert_eq!(
        sent(&fx),
        vec![
            (N3, promote(1)),
            (N1, replica_of(N3, "redis-3", 1)),
            (N2, replica_of(N3, "redis-3", 1)),
            (S2, hello(N3, 1)),
            (S3, hello(N3, 1)),
        ]
    );
    assert_eq!(
        persisted(&fx),
        vec![&SentinelDurable {
            primary: N3,
            config_epoch: 1,
            current_epoch: 1,
            vote: Some((ME, 1)),
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
    let said = narration(&fx);
    assert!(said.contains("2 of 3 votes in epoch 1"), "{said}");
    assert!(said.contains("promotes redis-3, the replica with the most data it has heard of (#5)"));
}

#[test]
fn a_vote_for_another_sentinel_does_not_count() {
    let mut s = candidate();
    at(&mut s, DOWN_AFTER_MS + 5);
    let fx = s.deliver(S2, reply(true, Some((S3, 1))));
    assert!(sent(&fx).is_empty());
    assert_eq!(s.node.primary, N1);
}

#[test]
fn each_sentinel_gives_one_vote_per_epoch_to_the_first_that_asks() {
    let mut s = sentinel();
    subjectively_down(&mut s);
    let fx = s.deliver(S2, is_down(Some(S2), 1));
    assert_eq!(sent(&fx), vec![(S2, reply(true, Some((S2, 1))))]);
    assert_eq!(persisted(&fx)[0].vote, Some((S2, 1)));
    // sentinel-3 asks in the same epoch: it is told the vote already went to sentinel-2.
    let fx = s.deliver(S3, is_down(Some(S3), 1));
    assert_eq!(sent(&fx), vec![(S3, reply(true, Some((S2, 1))))]);
    assert!(persisted(&fx).is_empty());
    // In a later epoch it may vote again.
    let fx = s.deliver(S3, is_down(Some(S3), 2));
    assert_eq!(sent(&fx), vec![(S3, reply(true, Some((S3, 2))))]);
}

#[test]
fn a_sentinel_that_voted_for_another_does_not_start_its_own_election_at_once() {
    let mut s = sentinel();
    subjectively_down(&mut s);
    s.deliver(S2, is_down(Some(S2), 1));
    // sentinel-3 agrees the primary is down: it is objectively down, but sentinel-1 leaves
    // the failover to the one it voted for.
    at(&mut s, DOWN_AFTER_MS + 10);
    let fx = s.deliver(S3, reply(true, None));
    assert!(s.node.odown);
    assert!(sent(&fx).is_empty());
    assert!(s.node.election.is_none());
}

#[test]
fn a_hello_with_a_newer_epoch_is_adopted_and_an_older_one_ignored() {
    let mut s = sentinel();
    let fx = s.deliver(S2, hello(N2, 1));
    assert_eq!((s.node.primary, s.node.config_epoch), (N2, 1));
    assert_eq!(persisted(&fx)[0].primary, N2);
    assert!(narration(&fx).contains("adopts it"));
    let fx = s.deliver(S3, hello(N3, 1));
    assert!(fx.is_empty(), "same epoch: nothing new");
    assert_eq!(s.node.primary, N2);
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
fn a_node_in_the_wrong_role_is_ordered_again_once_it_has_stayed_wrong_two_rounds() {
    let mut s = failed_over_to_n3();
    let t0 = DOWN_AFTER_MS + 5;
    // The old primary comes back still claiming to be primary.
    at(&mut s, t0 + PING_MS);
    assert!(pong(&mut s, N1, true, None, 6).is_empty(), "first seen wrong");
    at(&mut s, t0 + 2 * PING_MS);
    assert!(pong(&mut s, N1, true, None, 6).is_empty(), "one round later");
    at(&mut s, t0 + 3 * PING_MS);
    let fx = pong(&mut s, N1, true, None, 6);
    assert_eq!(sent(&fx), vec![(N1, replica_of(N3, "redis-3", 1))]);
    assert!(narration(&fx).contains("redis-1 answers as a primary, but to sentinel-1 the primary is redis-3"));
    at(&mut s, t0 + 3 * PING_MS + PING_MS / 2);
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
fn with_no_replica_answering_there_is_nothing_to_promote() {
    let mut s = sentinel();
    at(&mut s, DOWN_AFTER_MS + 1);
    s.fire(PingRound);
    s.deliver(S2, reply(true, None));
    let fx = s.deliver(S2, reply(true, Some((ME, 1))));
    assert!(sent(&fx).iter().all(|(to, _)| *to != N2 && *to != N3));
    assert_eq!((s.node.primary, s.node.config_epoch), (N1, 0));
    assert!(s.node.failovers.is_empty());
    assert!(narration(&fx).contains("there is nothing to promote"));
}

#[test]
fn it_stops_its_rounds_at_stop_at_and_gives_no_more_orders_or_votes() {
    let mut s = sentinel();
    at(&mut s, 60_000);
    let fx = s.fire(PingRound);
    assert!(sent(&fx).is_empty() && timers_set(&fx).is_empty());
    assert!(narration(&fx).contains("stop their rounds"));
    at(&mut s, 61_000);
    assert!(s.fire(PingRound).is_empty());
    assert!(
        pong(&mut s, N2, true, None, 0).is_empty(),
        "a wrong role goes uncorrected"
    );
    let fx = s.deliver(S2, is_down(Some(S2), 1));
    assert_eq!(sent(&fx), vec![(S2, reply(false, None))]);
}

#[test]
fn a_restart_brings_back_the_primary_epochs_and_vote_it_last_wrote_down() {
    let s = failed_over_to_n3();
    let on_disk = s.node.durable();
    assert_eq!(
        on_disk,
        SentinelDurable {
            primary: N3,
            config_epoch: 1,
            current_epoch: 1,
            vote: Some((ME, 1)),
        }
    );
    let mut back = testing::Harness::new(
        ME,
        <Sentinel as Participant>::recover(&config(), ME, &on_disk),
        &NAMES,
    );
    at(&mut back, 3_000);
    back.start();
    assert_eq!((back.node.primary, back.node.config_epoch), (N3, 1));
    assert!(back.node.failovers.is_empty(), "its history is not on disk");
    // It does not vote twice in epoch 1 after a restart.
    let fx = back.deliver(
        S2,
        RedisMsg::IsPrimaryDown {
            primary: N3,
            name: "redis-3".into(),
            epoch: 1,
            candidate: Some(S2),
        },
    );
    let votes: Vec<_> = sent(&fx)
        .into_iter()
        .filter_map(|(_, m)| match m {
            RedisMsg::PrimaryDownReply { vote, .. } => vote,
            _ => None,
        })
        .collect();
    assert_eq!(votes.len(), 1);
    assert_eq!(votes[0].leader, ME);
}
