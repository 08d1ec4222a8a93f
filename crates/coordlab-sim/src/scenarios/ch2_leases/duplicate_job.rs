//! `duplicate-job` (curriculum §1 and §3): the service runs as two replicas for redundancy,
//! and the nightly 2am job is scheduled on both. Each copy's timer fires with a little
//! jitter, and the job debits ₹30 from account 42 once.
//!
//! With no lock both copies run it and the account is debited twice (₹100 → ₹40). With a
//! lease, whichever copy reaches the store first inserts the row and runs the job; the other
//! is told the lease is held and backs off for good (no retry), so the debit happens once
//! (₹100 → ₹70). The job takes far longer than the spread of start times, so the second
//! copy always asks while the first still holds the lease — whichever copy wins.
//!
//! A lease only stops the runs from overlapping. A copy that fires late, after the first has
//! finished and let go (`--actions '2@pause:2:5000'` freezes replica-B for 5 s), finds the
//! lease free and runs the job again. `lease-and-run-key` adds the real fix: the debit's
//! transaction also inserts the run's key (the job and its date) into `job_run`, in the
//! ledger's own database, whose unique constraint lets one insert per run commit. The key and
//! the debit commit together or not at all, so a copy may safely come back later: each copy
//! that finds the lease held asks again every 10 s, and a late copy's transaction finds the
//! key and rolls back. A holder that crashes before its commit leaves neither, and the other
//! copy runs the job once when the lease expires.

use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::properties::Verdict;
use crate::protocols::job::Phase;
use crate::protocols::lease::fenced_resource::{FencedResource, ResourceDurable};
use crate::protocols::lease::lease_store::LeaseStore;
use crate::protocols::lease::lease_worker::{Coordination, Fencing, LeaseWorker, WorkerPlan};
use crate::scenarios::lease_setup::{
    build, choice, chosen, holds_if, worker, LeasePair, LeasePlan, OPENING_BALANCE,
};
use crate::scenarios::lease_world::LeaseProperty::*;
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "duplicate-job";
const DEBIT: i64 = 30;
/// The run's key: the job and the date it runs for.
const RUN_KEY: &str = "nightly-debit:2025-03-14";
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See two replicas run the same scheduled job twice",
        "Watch a lease turn the second copy away while the first holds it",
        "Understand why a key committed with the work makes it run exactly once",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "The first copy finished and released the lease; then the second copy fires. Without an idempotency key, what happens?",
        answers: &["The lease stops it", "The store rejects the second copy's acquire", "The job runs a second time"],
        correct: 2,
        why: "A lease only separates runs that overlap; a run that starts after release is free to repeat the work.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§1, §3",
        title: "Duplicate 2am job",
        summary: "Two replicas of a service both run the nightly job that debits ₹30. With nothing in between, the account is debited twice; with a lease, the copy that asks second is turned away — but only while the first holds it. A copy that fires after the first let go runs the job again, unless each run's debit also commits a key of its own: then a crash before the commit leaves the run to the other copy, and the job is done exactly once.",
        params: vec![choice(
            "lock",
            "Coordination",
            "What the two copies of the job do before starting work.",
            &[
                ("none", "none — each copy just runs the job"),
                ("lease", "lease — insert the lease row first; if it exists, back off"),
                (
                    "lease-and-run-key",
                    "lease and run key — the debit's transaction inserts the run's key; a conflict rolls it back",
                ),
            ],
        )],
    }
}

fn uses_lease(params: &Params) -> bool {
    !chosen(params, "lock", "none")
}

fn with_key(params: &Params) -> bool {
    chosen(params, "lock", "lease-and-run-key")
}

pub fn expectation(params: &Params) -> Expectation {
    let lease = uses_lease(params);
    let runs = if lease { 1 } else { 2 };
    let mut outcome = vec![
        ("balance".to_string(), json!(OPENING_BALANCE - DEBIT * runs)),
        ("max_concurrent_holders".to_string(), json!(runs)),
    ];
    if with_key(params) {
        // The copy that found the lease held comes back once it is free; its transaction
        // finds the key and rolls back.
        outcome.push(("conflicts".to_string(), json!(1)));
    }
    Expectation {
        outcome,
        verdicts: vec![
            ("no-double-debit".to_string(), holds_if(lease)),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let plan = WorkerPlan {
        coordination: if uses_lease(params) {
            Coordination::Lease
        } else {
            Coordination::None
        },
        // Each copy's 2am timer fires somewhere in this window (ms).
        start_after_ms: (0, 300),
        // Denied means another copy is running the job. Without a run key a copy backs off for
        // good: coming back later would run the job again. With one it comes back every 10 s
        // until the run is done: the key makes that safe, and a crashed holder's run is not lost.
        retry_ms: if with_key(params) { 10_000 } else { 0 },
        // One step, much longer than the start jitter, so the copies always overlap.
        steps: 1,
        step_ms: 2_000,
        amount_per_step: DEBIT,
        // Fencing is the subject of a later chapter; here the lease alone decides.
        fencing: Fencing::None,
        check_progress: false,
        run_key: with_key(params).then(|| RUN_KEY.to_string()),
        ..WorkerPlan::leased("job:nightly-debit")
    };
    let (mut setup, cast) = build(LeasePlan {
        workers: vec![worker("replica-A", plan.clone()), worker("replica-B", plan)],
        properties: vec![NoDoubleDebit, JobCompletes],
        explain_double_runs: true,
        ..LeasePlan::default()
    });
    beats(&mut setup, params, cast.pair());
    setup
}

fn replica<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a LeaseWorker> {
    n.live::<LeaseWorker>(id)
}

fn debits(n: &Nodes<'_>, c: LeasePair) -> usize {
    n.live::<FencedResource>(c.sink)
        .map_or(0, |r| r.durable.writes.iter().filter(|w| w.accepted).count())
}

/// A replica that finished the job and has let go of the lease.
fn finished_and_let_go(n: &Nodes<'_>, c: LeasePair) -> bool {
    [c.a, c.b]
        .iter()
        .any(|&r| replica(n, r).is_some_and(|w| w.job.finished && w.phase == Phase::Done))
}

fn beats(setup: &mut Setup, params: &Params, c: LeasePair) {
    setup.beat(
        "fire",
        "2am: the job fires on both replicas",
        "Each replica's timer fires within the same few hundred milliseconds.",
        // A replica that crashed before its timer fired counts as fired: the story goes on.
        move |n, _| {
            [c.a, c.b]
                .iter()
                .all(|&r| replica(n, r).is_none_or(|w| w.phase != Phase::Idle))
        },
    );
    if !uses_lease(params) {
        setup
            .beat(
                "first-debit",
                "One copy debits ₹30",
                "Nothing stops either copy: the first one to finish debits the account.",
                move |n, _| debits(n, c) == 1,
            )
            .ask(
                "The other copy is still running the same job. What happens when it finishes?",
                &[
                    "It sees the debit and skips",
                    "It debits ₹30 again",
                    "The ledger refuses it",
                ],
                1,
                "Neither copy checks anything before or while it works, so both write.",
            );
        setup.beat(
            "second-debit",
            "The other copy debits again: ₹40",
            "The job ran twice and the account lost ₹60 instead of ₹30.",
            move |n, _| debits(n, c) == 2,
        );
        return;
    }
    let with_key = with_key(params);
    let (answers, why): (&[&str], &str) = if with_key {
        (
            &["It gets its own lease and runs too", "It finds the lease held and asks again later", "It gives up for tonight"],
            "The row exists and has not expired, so its insert changes nothing. It comes back every 10 s: with the run key in the debit's transaction, a second attempt can never debit twice.",
        )
    } else {
        (
            &["It gets its own lease and runs too", "It finds the lease held and backs off", "It waits, then runs the job after the first"],
            "The row exists and has not expired, so its insert changes nothing; with no retry configured it gives up for tonight.",
        )
    };
    setup
        .beat(
            "lease",
            "One replica gets the lease",
            "Its INSERT of the lease row arrives first, so it holds the lease and starts the job.",
            // With a run key, also once the store has granted it: the holder may have crashed
            // right after, and the story goes on with the other copy.
            move |n, _| {
                [c.a, c.b]
                    .iter()
                    .any(|&r| replica(n, r).is_some_and(|w| w.belief.is_some()))
                    || (with_key
                        && n.durable::<LeaseStore>(c.store)
                            .is_some_and(|s| !s.grants.is_empty()))
            },
        )
        .ask(
            "The other replica asks for the same lease a moment later. What does it do?",
            answers,
            1,
            why,
        );
    if with_key {
        beats_with_key(setup, c);
        return;
    }
    setup.beat(
        "backs-off",
        "The other replica backs off",
        "The lease is held: the job is running right now, so this copy does nothing.",
        move |n, _| {
            [c.a, c.b]
                .iter()
                .any(|&r| replica(n, r).is_some_and(|w| w.phase == Phase::GaveUp))
        },
    );
    setup.beat(
        "debit",
        "The job debits ₹30 once",
        "Only the lease holder runs the job: the account goes from ₹100 to ₹70.",
        move |n, _| debits(n, c) == 1,
    );
    setup.beat(
        "released",
        "The lease is released and forgets the run",
        "A lease only keeps runs from overlapping. A replica firing now would find it free and debit again.",
        move |n, _| finished_and_let_go(n, c),
    );
}

fn ledger<'a>(n: &Nodes<'a>, c: LeasePair) -> Option<&'a ResourceDurable> {
    n.durable::<FencedResource>(c.sink)
}

/// `lease-and-run-key`: the run key commits with the debit, the other copy keeps asking, and
/// its late transaction rolls back. The beats hold whichever copy commits, so a run where the
/// holder crashes (an action) before or after its commit tells the same story.
fn beats_with_key(setup: &mut Setup, c: LeasePair) {
    setup.beat(
        "asks-again",
        "The other replica backs off, to ask again",
        "The lease is held, so this copy waits 10 s and asks again, until the run is done.",
        move |n, _| {
            [c.a, c.b]
                .iter()
                .any(|&r| replica(n, r).is_some_and(|w| w.phase == Phase::BackingOff))
        },
    );
    setup.beat(
        "debit",
        "The debit and the run key commit together",
        "One transaction inserts nightly-debit:2025-03-14 into job_run and debits ₹30: ₹100 → ₹70. A holder that crashes before its COMMIT leaves neither, and the other copy's next attempt runs the job instead.",
        move |n, _| debits(n, c) == 1,
    );
    setup.beat(
        "key-stays",
        "The lease goes; the run key stays",
        "Released or expired, the lease only kept the copies apart in time. The job_run row remembers that tonight's run happened.",
        // By the store's row, not the replicas' belief: a replica lets go in its mind a
        // message before the store does.
        move |n, _| {
            let store_now = n.local_now_us[c.store.index()];
            ledger(n, c).is_some_and(|l| !l.runs.is_empty())
                && n.live::<LeaseStore>(c.store).is_some_and(|s| {
                    s.durable.rows.values().all(|r| r.released || r.expires_at_us <= store_now)
                })
        },
    );
    setup.beat(
        "rolled-back",
        "A second attempt finds the key and rolls back",
        "The other replica got the lease and did the work, but its INSERT into job_run conflicts, so its whole transaction rolls back: still ₹70, one debit.",
        move |n, _| ledger(n, c).is_some_and(|l| l.run_conflicts > 0),
    );
}
