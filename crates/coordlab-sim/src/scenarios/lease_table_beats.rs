//! Story beats of the lease-table scenarios (`lease-lifecycle` here; `wrong-release`,
//! `unfenceable-resource` and `lease-stampede` in their own files), and the helpers they share:
//! each predicate reads the lease table and the ledger as the store and the ledger persisted
//! them, never step numbers.

use super::common::beat_either;
use super::lease_setup::LeasePair;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::protocols::lease::fenced_resource::{FencedResource, WriteRecord};
use crate::protocols::lease::lease_store::{
    Grant, GrantKind, LeaseRow, LeaseStore, ReleaseStyle, TokenSource,
};

/// Every grant the store has made, in order.
pub(super) fn grants<'a>(n: &Nodes<'a>, store: NodeId) -> &'a [Grant] {
    n.durable::<LeaseStore>(store).map_or(&[], |d| &d.grants)
}

/// How many acquire requests have reached the store.
pub(super) fn acquire_requests(n: &Nodes<'_>, store: NodeId) -> usize {
    n.live::<LeaseStore>(store)
        .map_or(0, |s| s.acquire_requests_us.len())
}

/// How many different workers the store has granted the lease to.
pub(super) fn holders(n: &Nodes<'_>, store: NodeId) -> usize {
    let mut owners: Vec<NodeId> = grants(n, store).iter().map(|g| g.owner).collect();
    owners.sort_by_key(|o| o.0);
    owners.dedup();
    owners.len()
}

/// Whether `who` has been granted the lease (of `kind`, if given).
pub(super) fn granted_to(n: &Nodes<'_>, store: NodeId, who: NodeId, kind: Option<GrantKind>) -> bool {
    grants(n, store)
        .iter()
        .any(|g| g.owner == who && kind.is_none_or(|k| g.kind == k))
}

/// The lease's row, if it has one.
pub(super) fn row<'a>(n: &Nodes<'a>, store: NodeId, lease: &str) -> Option<&'a LeaseRow> {
    n.durable::<LeaseStore>(store)?.rows.get(lease)
}

/// Whether the lease's row has been released: deleted, or expired by its owner.
pub(super) fn released(n: &Nodes<'_>, store: NodeId, lease: &str) -> bool {
    row(n, store, lease).is_none_or(|r| r.released)
}

/// The ledger's writes, accepted and refused.
pub(super) fn writes<'a>(n: &Nodes<'a>, ledger: NodeId) -> &'a [WriteRecord] {
    n.durable::<FencedResource>(ledger).map_or(&[], |d| &d.writes)
}

/// Whether the ledger has refused a write by `who`.
pub(super) fn refused(n: &Nodes<'_>, ledger: NodeId, who: NodeId) -> bool {
    writes(n, ledger).iter().any(|w| w.worker == who && !w.accepted)
}

/// The last statement the store ran mentions `who` and returned `result`.
pub(super) fn last_statement(n: &Nodes<'_>, store: NodeId, who: &str, result: &str) -> bool {
    n.live::<LeaseStore>(store)
        .and_then(|s| s.last_statement.as_ref())
        .is_some_and(|s| {
            s.sql.iter().any(|l| l.contains(&format!("'{who}'"))) && s.result.starts_with(result)
        })
}

const LEASE: &str = "account-42";

/// `lease-lifecycle`: the row's life, told per renewal rule and release.
pub(super) fn lifecycle(
    setup: &mut Setup,
    cast: LeasePair,
    increments: bool,
    rules: (ReleaseStyle, TokenSource),
) {
    let LeasePair {
        store,
        a,
        b,
        sink: ledger,
    } = cast;
    let sequence = rules.1 == TokenSource::Sequence;
    setup.beat(
        "inserted",
        "A's insert creates the row: token 1",
        if sequence {
            "No row for account-42 yet, so the INSERT succeeds with nextval as its fence_token: 1."
        } else {
            "No row for account-42 yet, so the INSERT succeeds and the row's fence_token starts at 1."
        },
        move |n, _| !grants(n, store).is_empty(),
    );
    if increments {
        setup
            .beat(
                "bumped",
                "A's renewal returns token 2",
                "This statement has no CASE, so a renewal adds 1 like a takeover. A's step 1 is still under way with token 1.",
                move |n, _| {
                    let g = grants(n, store);
                    g.iter().any(|r| r.owner == a && r.kind == GrantKind::Renewal && Some(r.token) > g.first().map(|f| f.token))
                },
            )
            .ask(
                "A's heartbeat mark raises the ledger's last_token to 2. Then A's step 1 arrives with token 1. What does the ledger do?",
                &["Refuses it: 2 <= 1 is false", "Applies it: it is A's own lease", "Waits for A's next renewal"],
                0,
                "The ledger only compares numbers: it cannot tell A's older token from a stranger's.",
            );
        setup.beat(
            "self-fenced",
            "A's own write is refused",
            "UPDATE 0: A's renewal fenced out A's own write. A aborts and releases.",
            move |n, _| refused(n, ledger, a),
        );
        // Two endings. With a DELETE release, A's DELETE took the counter with it: B's fresh
        // row starts at 1 again, below the 2 A's heartbeat left on the ledger, so B is refused
        // whatever its renewal does. Otherwise each holder's renewal fences out its own write.
        let [b_too, never] = if rules.0 == ReleaseStyle::Delete {
            [
                (
                    "B takes over and is refused by A's old mark",
                    "A's DELETE threw the row and its counter away, so B's fresh row starts again at token 1, below the 2 that A's renewal left on the ledger. B's write is refused before its own renewal can matter.",
                ),
                (
                    "Every holder is fenced out: the job never ends",
                    "A comes back and bounces off the 2 on the ledger once more. A renewal must keep the token, and a release must keep the counter.",
                ),
            ]
        } else {
            [
                (
                    "B takes over and fences itself out too",
                    "B's first renewal raises its token above the write it has in flight, just as A's did.",
                ),
                (
                    "Every holder fences itself out: the job never ends",
                    "A comes back and bounces off its own renewal a second time. A renewal must keep the token.",
                ),
            ]
        };
        setup.beat("b-too", b_too.0, b_too.1, move |n, _| refused(n, ledger, b));
        setup.beat("never", never.0, never.1, move |n, _| {
            writes(n, ledger).iter().filter(|w| !w.accepted).count() >= 3
        });
        return;
    }
    setup.beat(
        "renewed",
        "A renews and keeps token 1",
        "Same statement, same owner: the CASE keeps fence_token and only expires_at moves.",
        move |n, _| granted_to(n, store, a, Some(GrantKind::Renewal)),
    );
    let crash = setup.beat(
        "crash",
        "A crashes mid-job",
        "Its heartbeats stop. Nobody tells the store: the row simply runs out by the store's clock.",
        move |n, _| !n.is_live(a),
    );
    if !sequence {
        crash.ask(
            "A held token 1. When B takes the expired row over, what token does the statement return?",
            &["1", "2", "0"],
            1,
            "A change of holder takes the CASE's ELSE branch: fence_token + 1.",
        );
    }
    beat_either(
        setup,
        "takeover",
        sequence,
        [
            (
                "B takes over the expired row: token 5",
                "lease.expires_at < now() lets B's update through, with the number nextval drew. Every run of the statement drew one, renewals and refusals too.",
            ),
            (
                "B takes over the expired row: token 2",
                "lease.expires_at < now() lets B's update through, and the CASE adds 1 to the row's counter.",
            ),
        ],
        move |n, _| granted_to(n, store, b, Some(GrantKind::Takeover)),
    );
    let (text, answers, correct, why): (&str, &[&str], u8, &str) = match rules {
        (ReleaseStyle::Expire, _) => (
            "UPDATE lease SET expires_at = now() … AND owner = 'worker-B': the row stays, with fence_token 2.",
            &["1", "2", "3"],
            2,
            "The row is still there, expired, with fence_token 2: A takes it over and the CASE adds 1.",
        ),
        (_, TokenSource::Row) => (
            "DELETE FROM lease … AND owner = 'worker-B': the row goes, and its fence_token 2 with it.",
            &["1", "2", "3"],
            0,
            "No row, so the INSERT's VALUES give 1: the counter was deleted with the row.",
        ),
        (_, TokenSource::Sequence) => (
            "DELETE FROM lease … AND owner = 'worker-B': the row goes, but the sequence keeps its count.",
            &["1", "5", "A number above 6"],
            2,
            "nextval never goes back: A's insert draws the sequence's next value, 7.",
        ),
    };
    setup
        .beat("released", "B finishes step 2 and releases", text, move |n, _| {
            granted_to(n, store, b, None) && released(n, store, LEASE)
        })
        .ask(
            "A restarts and runs the statement again. What token does it get?",
            answers,
            correct,
            why,
        );
    let (title, text) = match rules {
        (ReleaseStyle::Expire, _) => (
            "A takes over the kept row: token 3",
            "The counter survived the release, so each new holder's token is higher than every earlier one.",
        ),
        (_, TokenSource::Row) => (
            "A's insert restarts at 1, below the ledger's 2",
            "tokens-increase breaks: the ledger has seen 2 and would refuse any write A made with 1. Keep the counter: expire the row, or use a sequence.",
        ),
        (_, TokenSource::Sequence) => (
            "A's insert gets 7 from the sequence",
            "The row was deleted, but the sequence cannot go back: a delete no longer resets the fence.",
        ),
    };
    setup.beat("again", title, text, move |n, _| {
        grants(n, store)
            .iter()
            .skip_while(|g| g.owner != b)
            .any(|g| g.owner == a)
    });
}
