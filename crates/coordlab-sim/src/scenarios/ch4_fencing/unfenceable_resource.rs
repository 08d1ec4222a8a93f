//! `unfenceable-resource` (curriculum §5, "When the resource cannot be fenced"): the zombie
//! story again, but each step of the job is a payment instruction to a rail that has no
//! idea what a fencing token is. Worker A takes the lease (token 33, 30 s TTL) and freezes
//! in a 40 s pause before its first instruction goes out. The lease expires, B takes over
//! with token 34 and pays steps 1–4. At 41 s A wakes, still sure it holds the lease, and
//! sends its step-1 instruction.
//!
//! A token cannot help here: the rail would not know what to compare it with. What can help
//! is an idempotency key derived deterministically from the job and the step (`payout-42#1`),
//! so the rail recognises A's instruction as a replay of B's. Without it, the rail sends the
//! money a second time.

use crate::kernel::time::MS_US;
use crate::kernel::world::Nodes;
use crate::protocols::lease::payment_rail::{Payment, PaymentRail};
use crate::scenarios::common::beat_either;
use crate::scenarios::lease_setup::prelude::*;
use crate::trace::EventKind;

pub const ID: &str = "unfenceable-resource";
/// B polls every 10 s: its fourth request, at about 30.5 s, is the first after the expiry.
const RETRY_MS: u64 = 10_000;
/// A freezes before its first instruction (due at about 4 s) and before its first renewal
/// (about 10 s), and wakes after B has paid steps 1 and 2 (about 34.6 s and 38.6 s).
const PAUSE_AT_MS: u64 = 1_000;
const PAUSE_MS: u64 = 40_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: CourseNotes = CourseNotes {
    objectives: &[
        "Recognise a resource that cannot check a token",
        "Use a deterministic idempotency key so a replay is recognised",
    ],
    question: CheckQuestion {
        prompt: "The payment rail knows nothing about tokens. What stops a zombie's duplicate payment?",
        answers: &[
            "A longer lease",
            "The same idempotency key on both attempts, so the rail treats the second as a replay",
            "Retrying faster",
        ],
        correct: 1,
        why:
            "If the key is derived from the work itself, both attempts carry it and the rail pays only once.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§5",
        title: "A resource that cannot be fenced",
        summary: "A zombie worker's payment instruction reaches a rail that knows no tokens. Only a deterministic idempotency key lets the rail tell a replay from a second payment.",
        params: vec![off_on(
            "idempotency_key",
            "Idempotency key",
            "Whether each payment instruction carries a key derived from the job and the step.",
            "off — each instruction is just an amount",
            "on — key job#step, e.g. payout-42#1",
        )],
    }
}

fn keyed(params: &Params) -> bool {
    chosen(params, "idempotency_key", "on")
}

pub fn expectation(params: &Params) -> Expectation {
    let keyed = keyed(params);
    // B pays all four steps; A's one instruction (step 1) is either a replay or a fifth
    // payment. Both workers believe they hold the lease from B's takeover until A's renewal
    // comes back empty.
    let (sent, replays) = if keyed { (4, 1) } else { (5, 0) };
    let outcome = [
        ("max_concurrent_holders", json!(2)),
        ("payments_sent", json!(sent)),
        ("replays_recognised", json!(replays)),
        ("paid_total", json!(AMOUNT_PER_STEP * sent)),
        ("finished_by", json!(["worker-B"])),
    ];
    let verdicts = [
        ("no-double-payment", holds_if(keyed)),
        ("tokens-increase", Holds),
        ("job-completes", Holds),
    ];
    expect(outcome, verdicts)
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    // Four steps of 4 s, each a ₹10 payment instruction under a 30 s lease renewed every 10 s.
    let a = WorkerPlan {
        sink: Sink::Rail {
            idempotency_key: keyed(params),
        },
        retry_ms: RETRY_MS,
        // The rail has nothing to check a token against.
        fencing: Fencing::None,
        ..WorkerPlan::leased("payout-42")
    };
    let (mut setup, cast) = build(LeasePlan {
        store: Some(StorePlan::with_tokens_issued(32)),
        workers: worker_pair(a, (500, 600)),
        properties: vec![NoDoublePayment, TokensIncrease, JobCompletes],
        ..LeasePlan::default()
    });
    let cast = cast.pair();
    let pause = Fault::Pause {
        node: cast.a,
        duration_ms: PAUSE_MS,
    };
    setup.script(PAUSE_AT_MS * MS_US, pause);
    beats(&mut setup, keyed(params), cast);
    setup
}

/// The rail's payments so far.
fn payments<'a>(n: &Nodes<'a>, rail: NodeId) -> &'a [Payment] {
    n.durable::<PaymentRail>(rail).map_or(&[], |d| &d.payments)
}

/// The story, with and without the key.
fn beats(setup: &mut Setup, keyed: bool, cast: LeasePair) {
    let LeasePair {
        store,
        a,
        b,
        sink: rail,
    } = cast;
    setup.beat(
        "a-holds",
        "A takes the lease: token 33",
        "A's statement takes over the row an earlier run left at 32. A now owns payout-42 for 30 s.",
        move |n, _| !grants(n, store).is_empty(),
    );
    setup.beat(
        "a-freezes",
        "A freezes before its first payment",
        "A stop-the-world pause of 40 s: no instruction, no renewal. A's lease runs out while it sleeps.",
        move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == a),
    );
    setup.beat(
        "b-takes-over",
        "The lease expires; B takes over: token 34",
        "B's retry finds the row expired by the store's clock and takes it over with the next token.",
        move |n, _| granted_to(n, store, b, None),
    );
    setup.beat(
        "b-pays",
        "B pays step 1",
        if keyed {
            "The instruction carries the key payout-42#1, and the rail remembers it."
        } else {
            "The instruction is just an amount: the rail knows nothing of leases or tokens."
        },
        move |n, _| payments(n, rail).iter().any(|p| p.from == b && p.applied),
    );
    let (correct, why) = if keyed {
        (
            2,
            "A's key, payout-42#1, is the one B's step 1 already used: the rail pays nothing.",
        )
    } else {
        (
            1,
            "The rail has no token to compare, and no key: every instruction is a new payment.",
        )
    };
    setup
        .beat(
            "a-wakes",
            "A wakes, sure it still holds the lease",
            "Its pause is over. Nothing told A the lease moved on, so it sends its step-1 instruction.",
            move |_, step| step.kind == EventKind::Resume && step.acted(a),
        )
        .ask(
            "A's step-1 instruction reaches the rail. What does the rail do?",
            &[
                "Refuses it: token 33 < 34",
                "Pays step 1 a second time",
                "Recognises a replay and pays nothing",
            ],
            correct,
            why,
        );
    beat_either(
        setup,
        "a-lands",
        keyed,
        [
            (
                "The rail recognises the replay",
                "Same job, same step, same key: one payment. Where a token cannot be checked, a deterministic key can.",
            ),
            (
                "The rail pays step 1 twice",
                "₹10 went out a second time. A resource that cannot check a token needs an idempotency key.",
            ),
        ],
        move |n, _| payments(n, rail).iter().any(|p| p.from == a),
    );
}
