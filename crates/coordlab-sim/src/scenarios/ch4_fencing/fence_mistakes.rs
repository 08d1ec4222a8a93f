//! `fence-mistakes` (curriculum §5, "What makes a token a valid fence" and "Carrying the
//! token afterwards"): the zombie story of `zombie-worker` — A takes the lease (token 33),
//! writes step 1, freezes for 36 s; at 30 s B takes over with 34 — told with a fence in every
//! write's predicate, but with the wrong thing as the fence:
//!
//! - `timestamp`: each worker's wall clock at its grant. A's clock is 45 s ahead, so A's
//!   number is the larger: the ledger refuses B, the real holder, and lets A's stale steps in.
//! - `random-id`: a random id per attempt. The numbers have no order; A's happens to be
//!   the larger, with the same result.
//! - `per-process-counter`: each process counts its own leases, so both send 1, and the
//!   ledger cannot tell them apart: A's stale step 2 lands on top of B's.
//! - `reread-token`: A keeps no copy of its token and re-reads the lease row before each
//!   write. Waking, it reads B's 34 and fences itself back in.
//! - `lease-counter`: the token the table returned, as `zombie-worker` fences: A's 33 is refused.

use crate::json;
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::Nodes;
use crate::protocols::job::Phase;
use crate::protocols::lease::fence_worker::{
    AcquireVia, FenceFrom, FenceWorker, FenceWorkerConfig, FenceWorkerPlan,
};
use crate::protocols::lease::fenced_resource::{FencedResource, LedgerIntro, ResourceDurable};
use crate::protocols::lease::placed_lease::{PlacedConfig, PlacedLease, TokenSource};
use crate::scenarios::common::{beat_either, WORKER_FAULTS};
use crate::scenarios::fence_world::{held_token, FenceCast, FenceProperty, FenceWorld};
use crate::scenarios::lease_setup::{choice, holds_if, OPENING_BALANCE};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::EventKind;

pub const ID: &str = "fence-mistakes";

/// How far ahead worker-A's clock runs with `fence=timestamp`: more than the 30 s lease.
const A_CLOCK_AHEAD_MS: i64 = 45_000;
/// The random ids the two workers drew (UUIDs in practice; 32 bits here).
const A_RANDOM_ID: u64 = 0xE3B0_C442;
const B_RANDOM_ID: u64 = 0x5F2A_9C17;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Recognise numbers that are not fences: timestamps, random ids, local counters, re-read tokens",
        "See only the lease store's counter refuse the zombie",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Which of these is a valid fencing token?",
        answers: &[
            "The worker's clock reading at acquire",
            "A counter the lease store raises in the same operation that grants the lease",
            "A random UUID",
        ],
        correct: 1,
        why: "Only a number issued by the granting authority, higher on each grant, orders the holders.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§5",
        title: "Fence mistakes",
        summary: "A timestamp, a random id, a per-process counter or a re-read token as the fence: each lets the zombie's write land. The lease counter refuses it.",
        params: vec![choice(
            "fence",
            "Fence",
            "What each write carries as its fencing token.",
            &[
                ("timestamp", "the writer's wall clock"),
                ("random-id", "a random id"),
                ("per-process-counter", "a per-process counter"),
                ("reread-token", "re-read from the lease table"),
                ("lease-counter", "the lease table's counter"),
            ],
        )],
    }
}

fn fence(params: &Params) -> &str {
    params.get("fence").map_or("timestamp", String::as_str)
}

pub fn expectation(params: &Params) -> Expectation {
    let variant = fence(params);
    let correct = variant == "lease-counter";
    // The wall clock and the random id refuse B, the real holder, and let A finish instead.
    let holder_refused = matches!(variant, "timestamp" | "random-id");
    let total = FenceWorkerPlan::standard().job_total();
    let mut outcome = vec![("max_concurrent_holders".to_string(), json!(2))];
    if correct || holder_refused {
        outcome.push(("balance".to_string(), json!(OPENING_BALANCE - total)));
    }
    Expectation {
        outcome,
        verdicts: vec![
            ("no-stale-write".to_string(), holds_if(correct)),
            ("no-double-debit".to_string(), holds_if(correct || holder_refused)),
        ],
    }
}

/// The fence a worker that would draw `random_id` puts in its writes.
fn fence_from(variant: &str, random_id: u64) -> FenceFrom {
    match variant {
        "timestamp" => FenceFrom::WallClock,
        "random-id" => FenceFrom::RandomId(random_id),
        "per-process-counter" => FenceFrom::ProcessCounter,
        "reread-token" => FenceFrom::Reread,
        _ => FenceFrom::Granted,
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let variant = fence(params).to_string();
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let cast = FenceCast::reserve(&mut setup, LedgerIntro::RemembersHighest, OPENING_BALANCE);
    let config = PlacedConfig::shared("account-42");
    let store = setup.add::<PlacedLease>(
        "lease-db",
        "lease-store",
        &[
            FaultKind::Pause,
            FaultKind::Crash,
            FaultKind::Restart,
            FaultKind::Network,
        ],
        config,
        PlacedLease::initial(32),
    );
    let workers = [
        (cast.a, "worker-A", (0, 100), A_RANDOM_ID),
        (cast.b, "worker-B", (500, 600), B_RANDOM_ID),
    ];
    for (id, name, start, random_id) in workers {
        let config = FenceWorkerConfig {
            plan: FenceWorkerPlan {
                start_after_ms: start,
                fence: fence_from(&variant, random_id),
                ..FenceWorkerPlan::standard()
            },
            store,
            via: AcquireVia::Atomic,
            ledger: cast.ledger,
            failover_to: None,
            source: TokenSource::LeaseTable,
        };
        FenceCast::place(&mut setup, id, name, &WORKER_FAULTS, config);
    }
    if variant == "timestamp" {
        let jump = Fault::ClockJump {
            node: cast.a,
            delta_ms: A_CLOCK_AHEAD_MS,
        };
        setup.script(0, jump);
    }
    setup.script(
        5_000 * MS_US,
        Fault::Pause {
            node: cast.a,
            duration_ms: 36_000,
        },
    );
    setup.set_world(FenceWorld::for_cast(
        cast,
        vec![store],
        OPENING_BALANCE,
        FenceWorkerPlan::standard().job_total(),
        vec![
            FenceProperty::NoStaleWrite,
            FenceProperty::NoDoubleDebit,
            FenceProperty::JobCompletes,
        ],
    ));
    beats(&mut setup, &variant, cast);
    setup
}

fn ledger<'a>(n: &Nodes<'a>, c: FenceCast) -> Option<&'a ResourceDurable> {
    n.live::<FencedResource>(c.ledger).map(|r| &r.durable)
}

fn wrote(n: &Nodes<'_>, c: FenceCast, w: NodeId, accepted: bool) -> bool {
    ledger(n, c).is_some_and(|r| r.writes.iter().any(|x| x.worker == w && x.accepted == accepted))
}

fn beats(setup: &mut Setup, variant: &str, c: FenceCast) {
    let fence_text = match variant {
        "timestamp" => {
            "Its fence is the time of the grant by its own clock, which runs 45 s ahead: about 45,000 ms."
        }
        "random-id" => "Its fence is the random id it drew for this attempt, 0xe3b0c442.",
        "per-process-counter" => "Its fence is its own count of leases taken since the process started: 1.",
        "reread-token" => {
            "It keeps no copy of 33: before each write it reads the lease row and uses the token found there."
        }
        _ => "It carries 33, the number the table returned, in every write.",
    };
    setup.beat(
        "a-acquires",
        "A takes the lease with token 33",
        &format!("worker-A takes account-42 from the lease table with token 33. {fence_text}"),
        move |n, _| held_token(n, c.a).is_some(),
    );
    setup.beat(
        "a-freezes",
        "A freezes in a GC pause",
        "A stop-the-world pause halts worker-A after step 1, for 36 s. It still believes it holds the lease.",
        move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == c.a),
    );
    let b_fence = match variant {
        "timestamp" => "B's clock is right, so its fence is about 30,500 ms: smaller than A's.",
        "random-id" => "B's random id is 0x5f2a9c17, smaller than A's: the order of random numbers says nothing about who came later.",
        "per-process-counter" => "B's process has taken one lease, so its fence is 1 too.",
        "reread-token" => "The lease row now carries 34.",
        _ => "B carries 34 in every write.",
    };
    setup.beat(
        "b-takes-over",
        "B takes over with token 34",
        &format!("At 30 s the lease lapses and worker-B's next poll takes it over with 34. {b_fence}"),
        move |n, _| held_token(n, c.b) == Some(34),
    );
    if matches!(variant, "timestamp" | "random-id") {
        setup.beat(
            "b-refused",
            "The ledger refuses B, the real holder",
            "The ledger has seen A's larger number from step 1, so B's write matches no row. B takes the refusal as proof of a newer holder and stops.",
            move |n, _| wrote(n, c, c.b, false),
        );
    } else {
        setup.beat(
            "b-writes",
            "B writes step 2",
            "The ledger applies B's step 2. The row now carries B's fence.",
            move |n, _| wrote(n, c, c.b, true),
        );
    }
    let why = match variant {
        "timestamp" => "A's number is the time by a clock 45 s fast: larger than B's, so it passes. A timestamp orders clocks, not holders.",
        "random-id" => "A's random id is larger than B's, so it passes. With other draws B's would have won: random numbers have no order to check.",
        "per-process-counter" => "Both processes counted to 1, and 1 <= 1 matches. A per-process count says nothing about the other process.",
        "reread-token" => "A re-reads the lease row, finds B's 34 and writes with it. The fence sees the newest number and lets A in.",
        _ => "The row carries 34 and A's write carries 33: no row matches.",
    };
    let correct = variant == "lease-counter";
    setup
        .beat(
            "a-wakes",
            "A wakes up, still sure it holds the lease",
            "The pause ends after 36 s. A carries on with step 2, unaware that its lease lapsed 11 s ago.",
            move |_, step| step.kind == EventKind::Resume && step.acted(c.a),
        )
        .ask(
            "A writes step 2 with its fence. What does the ledger do?",
            &["Refuses it", "Applies it"],
            if correct { 0 } else { 1 },
            why,
        );
    let mut before_waking = None;
    beat_either(
        setup,
        "a-write",
        correct,
        [
            (
                "A's write with 33 is refused",
                "WHERE last_token <= 33 matches no row: the ledger holds 34. A stops, and B finishes the job.",
            ),
            (
                "A's stale write lands",
                "The ledger applies step 2 from a worker whose lease lapsed 11 s ago. The fence was there; the number in it was not a fencing token.",
            ),
        ],
        move |n, _| {
            let count = ledger(n, c).map_or(0, |r| r.writes.iter().filter(|w| w.worker == c.a).count());
            let woke = n
                .live::<FenceWorker>(c.a)
                .is_some_and(|w| !matches!(w.phase, Phase::Working { step: 1 } | Phase::Writing { step: 1 }));
            count > *before_waking.get_or_insert(count) && woke
        },
    );
}
