//! Unit tests of the lease store's state machine (`protocols/lease/lease_store.rs`), one rule each:
//! the insert-or-take-over statement, renewals, denials, the two kinds of release (by owner or
//! by anyone) and the two things a release can do to the row (expire it or delete it), tokens
//! from the row's counter or from a sequence, the expiry timer, and what the table keeps on
//! disk. Each feeds one input to the store and asserts on
//! the effects it emits. (The inline tests there cover the basic grant/renew/takeover
//! sequence, the renewal bug and releasing someone else's row; these do not repeat them.)

use coordlab_sim::kernel::collections::VecMap;
use coordlab_sim::kernel::ids::{FencingToken, NodeId};
use coordlab_sim::kernel::participant::{Effect, Participant};
use coordlab_sim::kernel::testing::{self, narration, persisted, timers_set};
use coordlab_sim::kernel::time::MS_US;
use coordlab_sim::protocols::lease::lease_msg::{LeaseMsg, ReleaseMode};
use coordlab_sim::protocols::lease::lease_store::{
    ExpiryTimer, Grant, GrantKind, LeaseRow, LeaseStore, ReleaseStyle, StoreConfig, StoreDurable, TokenSource,
};

const STORE: NodeId = NodeId(0);
const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const NAMES: [&str; 3] = ["store", "worker-A", "worker-B"];
const TTL_MS: u64 = 10_000;

type Fx = Vec<Effect<LeaseStore>>;

/// A store with correct rules whose table still has an earlier run's expired row for lease
/// `l` at fence_token 32.
fn store() -> testing::Harness<LeaseStore> {
    store_with(StoreConfig::default())
}

fn store_with(config: StoreConfig) -> testing::Harness<LeaseStore> {
    let first = [("l".to_string(), FencingToken(32))].into_iter().collect();
    let node = LeaseStore::recover(config, &LeaseStore::initial(first));
    testing::Harness::new(STORE, node, &NAMES)
}

/// A store whose release deletes the row, with tokens from the row or from a sequence.
fn deleting(tokens: TokenSource) -> testing::Harness<LeaseStore> {
    store_with(StoreConfig {
        release: ReleaseStyle::Delete,
        tokens,
        ..StoreConfig::default()
    })
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
fn a_lease_with_no_row_yet_starts_at_token_1_and_inserts_its_row() {
    let mut s = store();
    let fx = acquire_lease(&mut s, A, "other", 2_000);
    assert_eq!(sent(&fx), vec![(A, granted("other", 1))]);
    let row = LeaseRow {
        owner: Some(A),
        token: FencingToken(1),
        acquired_at_us: 2_000 * MS_US,
        expires_at_us: 12_000 * MS_US,
        released: false,
    };
    assert_eq!(s.node.row("other"), Some(&row));
    // The other lease's row and counter are untouched.
    assert_eq!(
        s.node.row("l").map(|r| (r.owner, r.token)),
        Some((None, FencingToken(32)))
    );
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
fn each_lease_name_has_its_own_row_and_token_counter() {
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
    assert_eq!(s.node.row("l").map(|r| r.owner), Some(Some(A)));
    assert_eq!(s.node.row("m").map(|r| r.owner), Some(Some(B)));
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
fn a_lease_is_free_for_takeover_a_microsecond_after_its_expiry_instant_and_not_at_it() {
    // The statement's WHERE is `lease.expires_at < now()`.
    let mut s = store();
    acquire(&mut s, A, 0);
    let at = |s: &mut testing::Harness<LeaseStore>, us: u64| {
        s.now_us = us;
        s.deliver(
            B,
            LeaseMsg::Acquire {
                lease: "l".into(),
                ttl_ms: TTL_MS,
            },
        )
    };
    assert!(matches!(
        sent(&at(&mut s, TTL_MS * MS_US))[..],
        [(B, LeaseMsg::Denied { .. })]
    ));
    let fx = at(&mut s, TTL_MS * MS_US + 1);
    assert_eq!(sent(&fx), vec![(B, granted("l", 34))]);
    assert_eq!(timers_set(&fx), vec![(expiry(34), TTL_MS * MS_US)]);
    let row = s.node.row("l").unwrap();
    assert_eq!((row.owner, row.token), (Some(B), FencingToken(34)));
    assert!(narration(&fx).contains("token 33 becomes 34"));
}

#[test]
fn a_release_by_expiring_keeps_the_row_and_its_counter_so_the_next_holder_gets_a_higher_token() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let fx = release(&mut s, A, ReleaseMode::CompareAndDelete);
    assert_eq!(sent(&fx), vec![(A, released(true))]);
    let on_disk = only_persisted(&fx);
    let row = on_disk.rows.get("l").expect("the row stays");
    assert_eq!(
        (row.owner, row.token, row.released),
        (Some(A), FencingToken(33), true)
    );
    assert_eq!(row.expires_at_us, 0, "expires_at = now()");
    assert!(!s.node.live_grants.contains_key("l"));
    assert!(narration(&fx).contains("setting expires_at = now()"));
    let fx = acquire(&mut s, B, 1_000);
    assert_eq!(sent(&fx), vec![(B, granted("l", 34))]);
    assert_eq!(
        s.node.durable.grants.last().map(|g| g.kind),
        Some(GrantKind::Takeover)
    );
    assert_eq!(s.node.durable.overlapping_grants, 0);
    assert!(!narration(&fx).contains("two workers now hold"));
}

#[test]
fn a_release_that_deletes_the_row_restarts_the_counter_at_1() {
    let mut s = deleting(TokenSource::Row);
    acquire(&mut s, A, 0);
    let fx = release(&mut s, A, ReleaseMode::CompareAndDelete);
    assert_eq!(sent(&fx), vec![(A, released(true))]);
    assert!(!only_persisted(&fx).rows.contains_key("l"));
    assert!(narration(&fx).contains("The next INSERT starts again at 1"));
    let fx = acquire(&mut s, B, 1_000);
    assert_eq!(sent(&fx), vec![(B, granted("l", 1))]);
    assert_eq!(s.node.durable.grants.last().map(|g| g.kind), Some(GrantKind::New));
    assert!(narration(&fx).contains("Token 33 was handed out for l before"));
}

#[test]
fn with_a_sequence_per_name_tokens_keep_growing_across_a_deleting_release() {
    let mut s = deleting(TokenSource::Sequence);
    assert_eq!(sent(&acquire(&mut s, A, 0)), vec![(A, granted("l", 33))]);
    release(&mut s, A, ReleaseMode::CompareAndDelete);
    assert!(s.node.row("l").is_none());
    let fx = acquire(&mut s, B, 1_000);
    assert_eq!(sent(&fx), vec![(B, granted("l", 34))]);
    assert_eq!(s.node.durable.grants.last().map(|g| g.kind), Some(GrantKind::New));
    assert_eq!(s.node.durable.sequences.get("l"), Some(&FencingToken(34)));
    // Every run of the statement draws a number, a renewal too: the sequence leaves a gap.
    acquire(&mut s, B, 2_000);
    assert_eq!(s.node.row("l").map(|r| r.token), Some(FencingToken(34)));
    assert_eq!(s.node.durable.sequences.get("l"), Some(&FencingToken(35)));
}

#[test]
fn the_acquisition_statement_is_shown_with_its_values_bound() {
    let mut s = store();
    acquire(&mut s, A, 0);
    let fx = acquire(&mut s, A, 3_000);
    let last = s.node.last_statement.as_ref().unwrap();
    let sql = last.sql.join("\n");
    for part in [
        "VALUES ('l', 'worker-A', 1, now(), now() + interval '10 s')",
        "ON CONFLICT (name) DO UPDATE",
        "CASE WHEN lease.owner = 'worker-A' THEN lease.fence_token ELSE lease.fence_token + 1 END",
        "WHERE lease.expires_at < now() OR lease.owner = 'worker-A'",
        "RETURNING fence_token",
    ] {
        assert!(sql.contains(part), "{part} in {sql}");
    }
    assert_eq!(last.result, "→ fence_token 33 (renewal)");
    assert!(
        narration(&fx).contains("RETURNING fence_token → 33"),
        "{}",
        narration(&fx)
    );
}

#[test]
fn the_owner_s_naive_release_releases_just_like_a_compare_and_delete() {
    for style in [ReleaseStyle::Expire, ReleaseStyle::Delete] {
        let mut s = store_with(StoreConfig {
            release: style,
            ..StoreConfig::default()
        });
        acquire(&mut s, A, 0);
        let fx = release(&mut s, A, ReleaseMode::NaiveDelete);
        assert_eq!(sent(&fx), vec![(A, released(true))], "{style:?}");
        assert!(!s.node.live_grants.contains_key("l"), "{style:?}");
        assert_eq!(persisted(&fx).len(), 1, "{style:?}");
        assert_eq!(s.node.row("l").is_none(), style == ReleaseStyle::Delete);
    }
}

#[test]
fn releasing_a_lease_with_no_row_changes_nothing_and_persists_nothing() {
    for mode in [ReleaseMode::CompareAndDelete, ReleaseMode::NaiveDelete] {
        for (style, tag) in [
            (ReleaseStyle::Expire, "UPDATE 0"),
            (ReleaseStyle::Delete, "DELETE 0"),
        ] {
            let config = StoreConfig {
                release: style,
                ..StoreConfig::default()
            };
            let node = LeaseStore::recover(config, &LeaseStore::initial(VecMap::new()));
            let mut s = testing::Harness::new(STORE, node, &NAMES);
            let fx = release(&mut s, A, mode);
            assert_eq!(sent(&fx), vec![(A, released(false))], "{mode:?}");
            assert!(persisted(&fx).is_empty(), "{mode:?}");
            assert!(narration(&fx).contains(tag), "{mode:?} {style:?}");
        }
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
    // The naive release expired B's row, so A takes it over.
    assert_eq!(
        s.node.durable.grants.last().map(|g| g.kind),
        Some(GrantKind::Takeover)
    );
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
    acquire(&mut s, B, TTL_MS + 1);
    s.now_us = 2 * TTL_MS * MS_US - 1;
    let fx = s.fire(expiry(33));
    assert!(narration(&fx).contains("worker-B holds it with token 34 since"));
    assert!(persisted(&fx).is_empty());
    assert_eq!(s.node.row("l").map(|r| r.token), Some(FencingToken(34)));

    release(&mut s, B, ReleaseMode::CompareAndDelete);
    let fx = s.fire(expiry(34));
    assert!(
        narration(&fx).contains("worker-B released it already"),
        "{}",
        narration(&fx)
    );
    assert!(persisted(&fx).is_empty());
    // A's timer, after B took the lease over and released it: B no longer holds it.
    let fx = s.fire(expiry(33));
    assert!(
        narration(&fx).contains("worker-B took it over with token 34 since, and has released it"),
        "{}",
        narration(&fx)
    );
    assert!(!narration(&fx).contains("holds it"));
}

#[test]
fn a_restart_recovers_the_table_its_counters_and_the_live_grants_from_disk() {
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
    // The recovered row still denies another worker, and its counter goes on from 33.
    assert!(matches!(
        sent(&acquire(&mut s2, B, 5_000))[..],
        [(B, LeaseMsg::Denied { .. })]
    ));
    assert_eq!(sent(&acquire(&mut s2, B, 12_001)), vec![(B, granted("l", 34))]);
}
