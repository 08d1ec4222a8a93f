//! Unit tests of the lease store's state machine (`protocols/lease_store.rs`), one rule each:
//! the insert-or-take-over statement, renewals, denials, the two kinds of release, the expiry
//! timer, and what the table keeps on disk. Each feeds one input to the store and asserts on
//! the effects it emits. (The inline tests there cover the basic grant/renew/takeover
//! sequence, the renewal bug and releasing someone else's row; these do not repeat them.)

use coordlab_sim::kernel::ids::{FencingToken, NodeId};
use coordlab_sim::kernel::participant::{Effect, Participant};
use coordlab_sim::kernel::testing::{self, narration, persisted, timers_set};
use coordlab_sim::kernel::time::MS_US;
use coordlab_sim::protocols::lease_msg::{LeaseMsg, ReleaseMode};
use coordlab_sim::protocols::lease_store::{
    ExpiryTimer, Grant, GrantKind, LeaseRow, LeaseStore, StoreConfig, StoreDurable,
};

const STORE: NodeId = NodeId(0);
const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const NAMES: [&str; 3] = ["store", "worker-A", "worker-B"];
const TTL_MS: u64 = 10_000;

type Fx = Vec<Effect<LeaseStore>>;

/// A store with correct rules whose sequence for lease `l` has issued 32 tokens already.
fn store() -> testing::Harness<LeaseStore> {
    let first = [("l".to_string(), FencingToken(32))].into_iter().collect();
    let node = LeaseStore::recover(StoreConfig::default(), &LeaseStore::initial(first));
    testing::Harness::new(STORE, node, &NAMES)
}

fn acquire_lease(s: &mut testing::Harness<LeaseStore>, from: NodeId, lease: &str, at_ms: u64) -> Fx {
    s.now_us = at_ms * MS_US;
    s.deliver(
        from,
        LeaseMsg::Acquire {
            lease: lease.into(),
            ttl_ms: TTL_MS,
        },
    )
}

fn acquire(s: &mut testing::Harness<LeaseStore>, from: NodeId, at_ms: u64) -> Fx {
    acquire_lease(s, from, "l", at_ms)
}

fn release(s: &mut testing::Harness<LeaseStore>, from: NodeId, mode: ReleaseMode) -> Fx {
    s.deliver(
        from,
        LeaseMsg::Release {
            lease: "l".into(),
            mode,
        },
    )
}

fn sent(fx: &Fx) -> Vec<(NodeId, LeaseMsg)> {
    testing::sent(fx)
}

fn granted(lease: &str, token: u64) -> LeaseMsg {
    LeaseMsg::Granted {
        lease: lease.into(),
        token: FencingToken(token),
        ttl_ms: TTL_MS,
    }
}

fn released(deleted: bool) -> LeaseMsg {
    LeaseMsg::Released {
        lease: "l".into(),
        deleted,
    }
}

fn expiry(token: u64) -> ExpiryTimer {
    ExpiryTimer {
        lease: "l".into(),
        token: FencingToken(token),
    }
}

/// The one state the effects persisted.
fn only_persisted(fx: &Fx) -> StoreDurable {
    let p = persisted(fx);
    assert_eq!(p.len(), 1, "exactly one persist: {fx:?}");
    p[0].clone()
}

#[test]
fn a_lease_with_no_sequence_yet_starts_at_token_1_and_inserts_its_row() {
    let mut s = store();
    let fx = acquire_lease(&mut s, A, "other", 2_000);
    assert_eq!(sent(&fx), vec![(A, granted("other", 1))]);
    let row = LeaseRow {
        owner: A,
        token: FencingToken(1),
        acquired_at_us: 2_000 * MS_US,
        expires_at_us: 12_000 * MS_US,
    };
    assert_eq!(s.node.row("other"), Some(&row));
    assert_eq!(s.node.durable.last_token.get("other"), Some(&FencingToken(1)));
    // The other lease's sequence is untouched.
    assert_eq!(s.node.durable.last_token.get("l"), Some(&FencingToken(32)));
    assert_eq!(
        s.node.durable.grants,
        vec![Grant {
            lease: "other".into(),
            owner: A,
            token: FencingToken(1),
            kind: GrantKind::New,
            at_us: 2_000 * MS_US,
            expires_at_us: 12_000 * MS_US,
        }]
    );
    assert_eq!(
        only_persisted(&fx),
        s.node.durable,
        "the grant is on disk before the reply"
    );
}

#[test]
fn each_lease_name_has_its_own_row_and_token_sequence() {
    let mut s = store();
    assert_eq!(
        sent(&acquire_lease(&mut s, A, "l", 0)),
        vec![(A, granted("l", 33))]
    );
    // B is not denied: A's row is for another name.
    assert_eq!(
        sent(&acquire_lease(&mut s, B, "m", 0)),
        vec![(B, granted("m", 1))]
    );
    assert_eq!(s.node.durable.rows.len(), 2);
    assert_eq!(s.node.row("l").map(|r| r.owner), Some(A));
    assert_eq!(s.node.row("m").map(|r| r.owner), Some(B));
}

#[test]
fn a_renewal_moves_the_expiry_by_the_store_clock_and_rearms_the_same_timer() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let fx = acquire(&mut s, A, 4_000);
    assert_eq!(sent(&fx), vec![(A, granted("l", 33))]);
    let row = s.node.row("l").unwrap();
    assert_eq!((row.token, row.acquired_at_us), (FencingToken(33), 4_000 * MS_US));
    assert_eq!(
        row.expires_at_us,
        14_000 * MS_US,
        "now + ttl, not the old expiry + ttl"
    );
    // The same timer identity: the kernel replaces the pending one.
    assert_eq!(timers_set(&fx), vec![(expiry(33), TTL_MS * MS_US)]);
    assert_eq!(s.node.durable.last_token.get("l"), Some(&FencingToken(33)));
    assert_eq!(only_persisted(&fx).rows.get("l"), Some(row));
    assert!(narration(&fx).contains("keeps token 33"));
}

#[test]
fn an_owner_whose_lease_lapsed_with_nobody_else_asking_renews_with_the_same_token() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let fx = acquire(&mut s, A, 25_000);
    assert_eq!(sent(&fx), vec![(A, granted("l", 33))]);
    assert_eq!(
        s.node.durable.grants.last().map(|g| g.kind),
        Some(GrantKind::Renewal)
    );
    assert_eq!(s.node.durable.overlapping_grants, 0);
}

#[test]
fn a_request_while_held_is_denied_with_the_holder_and_leaves_the_table_alone() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let before = s.node.durable.clone();
    let fx = acquire(&mut s, B, 4_000);
    assert_eq!(
        sent(&fx),
        vec![(
            B,
            LeaseMsg::Denied {
                lease: "l".into(),
                holder: A
            }
        )]
    );
    assert!(persisted(&fx).is_empty() && timers_set(&fx).is_empty());
    assert_eq!(s.node.durable, before);
    assert!(narration(&fx).contains("worker-A holds it for another 6 s"));
    // Every acquire request is counted for the stampede histogram, denied or not.
    assert_eq!(s.node.acquire_requests_us, vec![0, 4_000 * MS_US]);
}

#[test]
fn a_lease_is_free_for_takeover_at_its_exact_expiry_instant_and_not_a_microsecond_before() {
    let mut s = store();
    acquire(&mut s, A, 0);
    s.now_us = TTL_MS * MS_US - 1;
    let fx = s.deliver(
        B,
        LeaseMsg::Acquire {
            lease: "l".into(),
            ttl_ms: TTL_MS,
        },
    );
    assert!(matches!(sent(&fx)[..], [(B, LeaseMsg::Denied { .. })]));
    let fx = acquire(&mut s, B, TTL_MS);
    assert_eq!(sent(&fx), vec![(B, granted("l", 34))]);
    assert_eq!(timers_set(&fx), vec![(expiry(34), TTL_MS * MS_US)]);
    let row = s.node.row("l").unwrap();
    assert_eq!((row.owner, row.token), (B, FencingToken(34)));
    assert_eq!(s.node.durable.last_token.get("l"), Some(&FencingToken(34)));
    assert!(narration(&fx).contains("token 33 becomes 34"));
}

#[test]
fn tokens_keep_growing_across_a_release_because_the_sequence_survives_deletes() {
    let mut s = store();
    acquire(&mut s, A, 0);
    release(&mut s, A, ReleaseMode::CompareAndDelete);
    assert!(s.node.row("l").is_none());
    let fx = acquire(&mut s, B, 1_000);
    assert_eq!(sent(&fx), vec![(B, granted("l", 34))]);
    assert_eq!(s.node.durable.grants.last().map(|g| g.kind), Some(GrantKind::New));
}

#[test]
fn the_owner_s_release_deletes_the_row_and_its_live_grant_so_the_next_grant_is_no_overlap() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let fx = release(&mut s, A, ReleaseMode::CompareAndDelete);
    assert_eq!(sent(&fx), vec![(A, released(true))]);
    let on_disk = only_persisted(&fx);
    assert!(!on_disk.rows.contains_key("l"));
    assert_eq!(on_disk.last_token.get("l"), Some(&FencingToken(33)));
    assert!(!s.node.live_grants.contains_key("l"));
    let fx = acquire(&mut s, B, 1_000);
    assert_eq!(s.node.durable.overlapping_grants, 0);
    assert!(!narration(&fx).contains("two workers now hold"));
}

#[test]
fn the_owner_s_naive_delete_releases_just_like_a_compare_and_delete() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let fx = release(&mut s, A, ReleaseMode::NaiveDelete);
    assert_eq!(sent(&fx), vec![(A, released(true))]);
    assert!(s.node.row("l").is_none() && !s.node.live_grants.contains_key("l"));
    assert_eq!(persisted(&fx).len(), 1);
}

#[test]
fn releasing_a_lease_with_no_row_deletes_nothing_and_persists_nothing() {
    for mode in [ReleaseMode::CompareAndDelete, ReleaseMode::NaiveDelete] {
        let mut s = store();
        let fx = release(&mut s, A, mode);
        assert_eq!(sent(&fx), vec![(A, released(false))], "{mode:?}");
        assert!(persisted(&fx).is_empty(), "{mode:?}");
        assert!(narration(&fx).contains("DELETE 0"), "{mode:?}");
    }
}

#[test]
fn a_grant_after_a_naively_deleted_holder_s_own_expiry_is_no_overlap() {
    let mut s = store();
    acquire(&mut s, B, 0);
    release(&mut s, A, ReleaseMode::NaiveDelete);
    // B was told it holds the lease until 10 s; by then nobody else holds it any more.
    let fx = acquire(&mut s, A, TTL_MS);
    assert_eq!(sent(&fx), vec![(A, granted("l", 34))]);
    assert_eq!(s.node.durable.overlapping_grants, 0);
    assert_eq!(s.node.live_grants.get("l"), Some(&(A, 2 * TTL_MS * MS_US)));
}

#[test]
fn a_grant_inside_a_naively_deleted_holder_s_time_says_two_workers_hold_it() {
    let mut s = store();
    acquire(&mut s, B, 0);
    release(&mut s, A, ReleaseMode::NaiveDelete);
    let fx = acquire(&mut s, A, 3_000);
    assert_eq!(sent(&fx), vec![(A, granted("l", 34))]);
    assert_eq!(s.node.durable.grants.last().map(|g| g.kind), Some(GrantKind::New));
    assert_eq!(only_persisted(&fx).overlapping_grants, 1, "the count is on disk");
    assert!(narration(&fx).contains("worker-B's grant still has 7 s to run"));
}

#[test]
fn the_expiry_timer_only_narrates_the_lapse_and_deletes_nothing() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let before = s.node.durable.clone();
    s.now_us = TTL_MS * MS_US;
    let fx = s.fire(expiry(33));
    assert!(sent(&fx).is_empty() && persisted(&fx).is_empty() && timers_set(&fx).is_empty());
    assert_eq!(
        s.node.durable, before,
        "the row stays until the next request decides"
    );
    assert!(narration(&fx).contains("(token 33) has expired. Nobody is told"));
}

#[test]
fn a_stale_expiry_timer_changes_nothing_after_a_takeover_or_a_release() {
    let mut s = store();
    acquire(&mut s, A, 0);
    acquire(&mut s, B, TTL_MS);
    s.now_us = 2 * TTL_MS * MS_US - 1;
    let fx = s.fire(expiry(33));
    assert!(narration(&fx).contains("worker-B holds it with token 34 since"));
    assert!(persisted(&fx).is_empty());
    assert_eq!(s.node.row("l").map(|r| r.token), Some(FencingToken(34)));

    release(&mut s, B, ReleaseMode::CompareAndDelete);
    let fx = s.fire(expiry(34));
    assert!(narration(&fx).contains("released already"));
    assert!(persisted(&fx).is_empty());
}

#[test]
fn a_restart_recovers_the_table_the_sequence_and_the_live_grants_from_disk() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let on_disk = only_persisted(&acquire(&mut s, A, 2_000));
    let mut s2 = testing::Harness::new(
        STORE,
        <LeaseStore as Participant>::recover(&StoreConfig::default(), STORE, &on_disk),
        &NAMES,
    );
    assert_eq!(s2.node.durable, s.node.durable);
    assert_eq!(s2.node.live_grants.get("l"), Some(&(A, 12_000 * MS_US)));
    assert!(
        s2.node.acquire_requests_us.is_empty(),
        "the histogram is not on disk"
    );
    assert!(narration(&s2.start()).contains("1 row(s) now"));
    // The recovered row still denies another worker, and the sequence goes on from 33.
    assert!(matches!(
        sent(&acquire(&mut s2, B, 5_000))[..],
        [(B, LeaseMsg::Denied { .. })]
    ));
    assert_eq!(sent(&acquire(&mut s2, B, 12_000)), vec![(B, granted("l", 34))]);
}
