//! `lease-placement` (curriculum §3, "Where the lease table lives"): two workers want the same
//! lease on account 42. Where the lease table lives decides whether the lease means anything:
//!
//! - `primary`: one table on the shared primary; the atomic statement lets one worker in
//!   (token 33) and gives the other zero rows until the lease lapses. One holder.
//! - `read-replica`: the workers read the row on a replica that replays the primary's changes
//!   2 s late, and claim on the primary when the replica says "expired". B reads before A's
//!   grant has reached the replica: both hold the lease (33 and 34). The ledger's fence
//!   stops A once B's 34 is there, but step 1 has been debited twice by then.
//! - `per-node-table`: each worker asks a table of its own. Each says yes, with 33 both: two
//!   holders, and a fence that cannot tell them apart. Every step is debited twice.
//! - `store-down`: the one shared table is down from the start. Nobody can get the lease, so
//!   nobody works: the store is in the availability path, and stopping is the safe failure.

use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease::fence_worker::{AcquireVia, FenceWorker, FenceWorkerConfig, FenceWorkerPlan};
use crate::protocols::lease::fenced_resource::LedgerIntro;
use crate::protocols::lease::placed_lease::{PlacedConfig, PlacedLease, TokenSource};
use crate::scenarios::common::CLOCKLESS_FAULTS;
use crate::scenarios::fence_world::{held_token, FenceCast, FenceProperty, FenceWorld};
use crate::scenarios::lease_setup::STORE_FAULTS;
use crate::scenarios::lease_setup::{choice, holds_if, int, millis, OPENING_BALANCE};
use crate::scenarios::property_library::step_applied_twice;
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::EventKind;

pub const ID: &str = "lease-placement";

const LEASE: &str = "account-42";
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See why every worker must ask the same primary",
        "See a lagging replica or a table per node produce two holders",
        "Notice that a store that is down stops the work",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Workers read the lease from a replica that lags the primary. What can happen?",
        answers: &["Nothing, reads are safe", "The replica blocks all writes", "Two workers each see the lease free and both take it"],
        correct: 2,
        why: "A lagging copy shows an old state, so a lease already granted looks free; there must be one authority.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§3",
        title: "Where the lease table lives",
        summary: "The shared primary gives one holder; a lagging read replica or a table per node gives two; a store that is down stops the work.",
        params: vec![
            choice(
                "store",
                "Lease table",
                "Where the workers' lease table lives.",
                &[
                    ("primary", "the shared primary"),
                    ("read-replica", "read on a lagging replica"),
                    ("per-node-table", "one table per node"),
                    ("store-down", "the shared store is down"),
                ],
            ),
            millis(
                "lag_ms",
                "Replica lag",
                "How late the replica replays the primary's changes (store=read-replica).",
                "2000",
                (0, 10_000),
            ),
        ],
    }
}

fn store(params: &Params) -> &str {
    params.get("store").map_or("primary", String::as_str)
}

pub fn expectation(params: &Params) -> Expectation {
    let mut outcome = Vec::new();
    let mut verdicts = Vec::new();
    let job = FenceWorkerPlan::standard().job_total();
    match store(params) {
        "primary" => {
            outcome.push(("max_concurrent_holders".into(), json!(1)));
            outcome.push(("balance".into(), json!(OPENING_BALANCE - job)));
            verdicts.push(("one-holder".into(), Verdict::Holds));
            verdicts.push(("one-grant".into(), Verdict::Holds));
            verdicts.push(("no-double-debit".into(), Verdict::Holds));
            verdicts.push(("job-completes".into(), Verdict::Holds));
        }
        "read-replica" => {
            if let Some(two) = stale_read(int(params, "lag_ms")) {
                outcome.push(("max_concurrent_holders".into(), json!(if two { 2 } else { 1 })));
                verdicts.push(("one-holder".into(), holds_if(!two)));
                verdicts.push(("one-grant".into(), holds_if(!two)));
                verdicts.push(("no-double-debit".into(), holds_if(!two)));
            }
        }
        "per-node-table" => {
            outcome.push(("max_concurrent_holders".into(), json!(2)));
            outcome.push(("balance".into(), json!(OPENING_BALANCE - 2 * job)));
            verdicts.push(("one-holder".into(), Verdict::Violated));
            verdicts.push(("one-grant".into(), Verdict::Violated));
            verdicts.push(("no-double-debit".into(), Verdict::Violated));
        }
        _ => {
            outcome.push(("max_concurrent_holders".into(), json!(0)));
            outcome.push(("balance".into(), json!(OPENING_BALANCE)));
            verdicts.push(("one-holder".into(), Verdict::Holds));
            verdicts.push(("no-double-debit".into(), Verdict::Holds));
            verdicts.push(("job-completes".into(), Verdict::Violated));
        }
    }
    Expectation { outcome, verdicts }
}

/// Whether B's read of the replica comes before A's claim has been replayed there (two
/// holders), after it (one), or `None` where the seed decides: B reads 500–600 ms after A's
/// job fires, and A's claim reaches the replica `lag_ms` after its grant.
fn stale_read(lag_ms: u64) -> Option<bool> {
    match lag_ms {
        0..=300 => Some(false),
        700.. => Some(true),
        _ => None,
    }
}

/// Adds a lease table that has issued 32 tokens.
fn table(setup: &mut Setup, name: &str, config: PlacedConfig) -> NodeId {
    let id = setup.reserve();
    place_table(setup, id, name, config);
    id
}

/// Puts a lease table that has issued 32 tokens at a reserved id.
fn place_table(setup: &mut Setup, id: NodeId, name: &str, config: PlacedConfig) {
    let fresh = PlacedLease::initial(32);
    setup.place::<PlacedLease>(id, name, "lease-store", &STORE_FAULTS, config, fresh);
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let variant = store(params).to_string();
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let cast = FenceCast::reserve(&mut setup, LedgerIntro::RemembersHighest, OPENING_BALANCE);
    let shared = |replicas: Vec<NodeId>| PlacedConfig {
        replicas,
        role_on_card: true,
        ..PlacedConfig::shared(LEASE)
    };
    // The tables, primary (or worker-A's own) first; the table each worker asks; how.
    let (stores, store_a, store_b, via) = match variant.as_str() {
        "per-node-table" => {
            let [on_a, on_b] = [("table-on-A", cast.a), ("table-on-B", cast.b)].map(|(name, owner)| {
                let config = PlacedConfig {
                    local_to: Some(owner),
                    ..shared(Vec::new())
                };
                table(&mut setup, name, config)
            });
            (vec![on_a, on_b], on_a, on_b, AcquireVia::Atomic)
        }
        "read-replica" => {
            // The primary ships to the replica, added after it.
            let primary = setup.reserve();
            let replica = PlacedConfig {
                replica: true,
                ..shared(Vec::new())
            };
            let replica = table(&mut setup, "lease-replica", replica);
            place_table(&mut setup, primary, "lease-db", shared(vec![replica]));
            let lag_us = int::<u64>(params, "lag_ms") * MS_US;
            setup.link(
                primary,
                replica,
                LinkConfig::reliable(lag_us.max(MS_US), lag_us.max(MS_US)),
            );
            let via = AcquireVia::ReadReplicaThenClaim { replica };
            (vec![primary, replica], primary, primary, via)
        }
        _ => {
            let db = table(&mut setup, "lease-db", shared(Vec::new()));
            (vec![db], db, db, AcquireVia::Atomic)
        }
    };
    let plan = FenceWorkerPlan {
        // Enough polls to outlast a 30 s lease; a store that never answers is tried 4 times.
        max_attempts: if variant == "store-down" { 4 } else { 10 },
        ..FenceWorkerPlan::standard()
    };
    let workers = [
        (cast.a, "worker-A", store_a, (0, 100)),
        (cast.b, "worker-B", store_b, (500, 600)),
    ];
    for (id, name, store, start) in workers {
        let config = FenceWorkerConfig {
            plan: FenceWorkerPlan {
                start_after_ms: start,
                ..plan.clone()
            },
            store,
            via,
            ledger: cast.ledger,
            failover_to: None,
            source: TokenSource::LeaseTable,
        };
        FenceCast::place(&mut setup, id, name, &CLOCKLESS_FAULTS, config);
    }
    if variant == "store-down" {
        setup.script(0, Fault::Crash { node: stores[0] });
    }
    setup.set_world(FenceWorld::for_cast(
        cast,
        stores,
        OPENING_BALANCE,
        plan.job_total(),
        vec![
            FenceProperty::OneHolder,
            FenceProperty::OneGrant,
            FenceProperty::NoDoubleDebit,
            FenceProperty::JobCompletes,
        ],
    ));
    beats(&mut setup, &variant, int(params, "lag_ms"), cast);
    setup
}

fn holds(n: &crate::kernel::world::Nodes<'_>, w: NodeId) -> bool {
    n.live::<FenceWorker>(w)
        .is_some_and(FenceWorker::believes_it_holds)
}

/// What happens when the first holder works alone: A finishes, its lease lapses at 30 s and
/// B's next poll takes the row over with nothing left to do.
fn alone_then_lapse(setup: &mut Setup, c: FenceCast) {
    setup.beat(
        "a-done",
        "A finishes the job alone: ₹60",
        "Four steps, four debits of ₹10, one holder throughout.",
        move |n, _| n.durable::<FenceWorker>(c.a).is_some_and(|d| d.finished),
    );
    setup.beat(
        "b-takes-over",
        "B takes the lapsed lease: token 34",
        "A never released; at 30 s its lease lapses and B's next poll takes the row over with 34. The ledger says all four steps are done, so B has nothing to do.",
        move |n, _| held_token(n, c.b) == Some(34),
    );
}

/// The story's beats; `lag_ms` is the replica's lag (`store=read-replica`).
fn beats(setup: &mut Setup, variant: &str, lag_ms: u64, c: FenceCast) {
    use crate::protocols::job::Phase;
    match variant {
        "primary" => {
            setup.beat(
                "a-acquires",
                "A takes the lease with token 33",
                "The one shared table on the primary lets worker-A take account-42 over from an earlier run's expired row: token 33, for 30 s.",
                move |n, _| holds(n, c.a),
            );
            setup.beat(
                "b-refused",
                "B gets zero rows and backs off",
                "worker-B runs the same statement on the same row. The row is A's and unexpired, so the WHERE matches nothing: B backs off and polls again in 5 s.",
                move |n, _| n.live::<FenceWorker>(c.b).is_some_and(|w| w.phase == Phase::BackingOff),
            );
            alone_then_lapse(setup, c);
        }
        "read-replica" => {
            setup.beat(
                "a-acquires",
                "A reads 'expired' and claims: token 33",
                "The replica shows an earlier run's expired row, so worker-A claims the lease on the primary: token 33.",
                move |n, _| holds(n, c.a),
            );
            let stale = stale_read(lag_ms);
            if stale == Some(false) {
                setup.beat(
                    "b-reads-held",
                    "B reads the replica: A holds it",
                    "Half a second later worker-B reads the same row on the replica. A's claim has already been replayed there, so B sees the lease taken and polls again in 5 s.",
                    move |n, _| n.live::<FenceWorker>(c.b).is_some_and(|w| w.phase == Phase::BackingOff),
                );
                alone_then_lapse(setup, c);
                return;
            }
            if stale.is_none() {
                // Whether A's claim or B's read reaches the replica first depends on the seed.
                return;
            }
            setup.beat(
                "b-reads-stale",
                "B reads the replica: still 'expired'",
                "Half a second later worker-B reads the same row on the replica. A's claim has not been replayed there yet, so the row still looks expired.",
                move |n, _| n.live::<FenceWorker>(c.b).is_some_and(|w| w.phase == Phase::Acquiring && !w.reading),
            );
            setup
                .beat(
                    "two-holders",
                    "Two holders: A with 33, B with 34",
                    "B's unconditional UPDATE on the primary overwrites A's row with token 34. Nobody tells A: both workers now run the job.",
                    move |n, _| holds(n, c.a) && holds(n, c.b),
                )
                .ask(
                    "Both run the job, and the ledger is fenced. What happens to the account?",
                    &["Nothing bad: the fence refuses A from the start", "Every step is debited twice", "A step is debited twice before the fence stops A"],
                    2,
                    "The ledger can only refuse 33 after it has seen 34. A's step 1 lands first, B's step 1 lands too, and only A's step 2 is refused.",
                );
            setup.beat(
                "double-debit",
                "Step 1 is debited twice",
                "The fence refuses a token only once it has seen a higher one. Both step 1 writes land before that: the lease has already failed.",
                move |n, _| step_applied_twice(n, c.ledger),
            );
        }
        "per-node-table" => {
            setup.beat(
                "a-acquires",
                "A's own table grants it: token 33",
                "worker-A asks the table on its own node. Nobody else writes there, so it says yes: token 33.",
                move |n, _| holds(n, c.a),
            );
            setup
                .beat(
                    "b-acquires",
                    "B's own table grants it too: token 33",
                    "worker-B asks the table on its node, which has never heard of A: yes, token 33. Two holders of account-42 with the same number.",
                    move |n, _| holds(n, c.a) && holds(n, c.b),
                )
                .ask(
                    "Both write with token 33 to a fenced ledger. What does the fence do?",
                    &[
                        "Refuses whichever writes second",
                        "Lets both through: 33 is not lower than 33",
                        "Asks the tables who really holds the lease",
                    ],
                    1,
                    "A fence refuses only lower tokens. Two tables that count separately hand out the same numbers, and the fence cannot tell the holders apart.",
                );
            setup.beat(
                "double-debit",
                "Both debit: each step twice",
                "Every write carries 33 and matches the row. The account is debited for the job twice over.",
                move |n, _| step_applied_twice(n, c.ledger),
            );
        }
        _ => {
            setup.beat(
                "store-down",
                "The lease store is down",
                "lease-db, the one table every worker shares, has crashed before either job fires.",
                move |_, step| step.kind == EventKind::Fault,
            );
            setup.beat(
                "no-answer",
                "Nobody gets an answer",
                "worker-A's request goes unanswered. Without a lease it must not start the job, so it waits and asks again.",
                move |n, _| n.live::<FenceWorker>(c.a).is_some_and(|w| w.phase == Phase::BackingOff),
            );
            setup.beat(
                "gave-up",
                "The job does not run: by design",
                "Both workers give up. The account is untouched: stopping is the failure the design chose over two writers.",
                move |n, _| {
                    [c.a, c.b]
                        .iter()
                        .all(|w| n.live::<FenceWorker>(*w).is_some_and(|f| f.phase == Phase::GaveUp))
                },
            );
        }
    }
}
