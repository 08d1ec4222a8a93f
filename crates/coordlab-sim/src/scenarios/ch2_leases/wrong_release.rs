//! `wrong-release` (curriculum §4, "releasing the wrong lock", and §3's release step): a
//! two-step job on account 42 under a 10 s lease that nobody renews, because the job usually
//! takes a few seconds.
//!
//! Worker A takes the lease (token 1) and gets stuck: its first step takes 16 s. At 10 s the
//! lease expires by the store's clock; worker B, polling every 10 s, takes it over at about
//! 11 s (token 2) and writes step 1 at about 15 s. A's step 1 arrives at about 16 s with
//! token 1 and the ledger refuses it (every write carries the token in its predicate). A
//! aborts, and its `finally` block releases the lease — the row that is B's now.
//!
//! The token counter lives on the lease row, and a release deletes the row. With
//! `release=naive-delete` A's delete removes B's row, and B's counter with it. Worker C's job
//! fires at 16.5 s, finds no row, and its insert starts again at token 1 while B's grant
//! still has 5 s to run: two holders, and the newer one has the lower number. C does step 2
//! quickly (1 s), but the ledger has seen B's 2 and refuses C's 1; C aborts, and its own
//! finally block deletes its row. B's step 2 arrives later with token 2 and lands. The account
//! ends right, but only because the fence happened to side with B: numbers no longer follow
//! the order of the grants. With `release=compare-and-delete` A's delete matches nothing, C
//! is told B holds the lease and waits, B finishes and deletes its own row, and C later
//! inserts afresh (token 1 again) and finds the job complete.
//!
//! The speeds differ on purpose: A is stuck, B's steps take 4 s, C's 1 s. That makes C's
//! first write land before B's next one for every seed.

use crate::json;
use crate::kernel::setup::Setup;
use crate::properties::Verdict;
use crate::protocols::lease::lease_msg::ReleaseMode;
use crate::protocols::lease::lease_store::ReleaseStyle;
use crate::protocols::lease::lease_worker::WorkerPlan;
use crate::scenarios::lease_setup::{
    balance_after, build, choice, holds_if, worker, LeaseCast, LeasePair, LeasePlan, StorePlan,
};
use crate::scenarios::lease_table_beats::{granted_to, grants, last_statement, refused, row, writes};
use crate::scenarios::lease_world::LeaseProperty::*;
use crate::scenarios::lease_world::{accepted, rejected};
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "wrong-release";
const STEPS: u32 = 2;

/// Who does what and how fast, per worker.
struct Role {
    name: &'static str,
    start_after_ms: (u64, u64),
    step_ms: u64,
}

const ROLES: [Role; 3] = [
    // A: stuck in its first step for longer than its lease.
    Role {
        name: "worker-A",
        start_after_ms: (0, 100),
        step_ms: 16_000,
    },
    // B: asks at ~1 s (held), again at ~11 s (expired: takeover), writes step 1 at ~15 s.
    Role {
        name: "worker-B",
        start_after_ms: (1_000, 1_100),
        step_ms: 4_000,
    },
    // C: fires just after A's release at ~16 s; quick steps.
    Role {
        name: "worker-C",
        start_after_ms: (16_500, 16_600),
        step_ms: 1_000,
    },
];
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a late worker's finally block delete someone else's lease",
        "Make release safe by checking the owner in the same statement",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "A's lease expired and B holds it. A's finally block runs DELETE without an owner check. Who loses the lock?",
        answers: &[
            "A",
            "B",
            "Nobody: the store refuses",
        ],
        correct: 1,
        why: "The row now belongs to B, so an unchecked delete frees B's lease and lets a third worker in.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§3–4",
        title: "Releasing the wrong lease",
        summary: "A's lease expires while it is stuck; B takes over. When A gives up, its finally block deletes the lease row — B's row, unless the delete checks the owner. Then C walks in, and its insert starts the token counter again at 1.",
        params: vec![choice(
            "release",
            "Release",
            "The statement a worker uses to let go of the lease.",
            &[
                ("naive-delete", "naive delete — DELETE FROM lease WHERE name = :name"),
                ("compare-and-delete", "compare and delete — … AND owner = :me, in one statement"),
            ],
        )],
    }
}

fn mode(params: &Params) -> ReleaseMode {
    match params.get("release").map(String::as_str) {
        Some("compare-and-delete") => ReleaseMode::CompareAndDelete,
        _ => ReleaseMode::NaiveDelete,
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let (a, b, c) = ("worker-A", "worker-B", "worker-C");
    let naive = mode(params) == ReleaseMode::NaiveDelete;
    let mut outcome = vec![
        ("balance".to_string(), json!(balance_after(STEPS))),
        ("overlapping_grants".to_string(), json!(u32::from(naive))),
        ("max_concurrent_holders".to_string(), json!(2)),
    ];
    if naive {
        outcome.extend([
            (
                "accepted_writes".to_string(),
                json!([accepted(b, 2, 1), accepted(b, 2, 2)]),
            ),
            (
                "rejected_writes".to_string(),
                json!([rejected(a, 1, 1, 2), rejected(c, 1, 2, 2)]),
            ),
            ("finished_by".to_string(), json!([b])),
        ]);
    } else {
        outcome.extend([
            (
                "accepted_writes".to_string(),
                json!([accepted(b, 2, 1), accepted(b, 2, 2)]),
            ),
            ("rejected_writes".to_string(), json!([rejected(a, 1, 1, 2)])),
            ("finished_by".to_string(), json!([b, c])),
        ]);
    }
    Expectation {
        outcome,
        verdicts: vec![
            ("no-overlapping-grants".to_string(), holds_if(!naive)),
            ("fence-monotonic".to_string(), Verdict::Holds),
            ("no-double-debit".to_string(), Verdict::Holds),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let plan = |role: &Role| WorkerPlan {
        ttl_ms: 10_000,
        // The job normally takes a few seconds against a 10 s lease: nobody renews.
        heartbeat_ms: 0,
        start_after_ms: role.start_after_ms,
        retry_ms: 10_000,
        steps: STEPS,
        step_ms: role.step_ms,
        release: Some(mode(params)),
        release_in_finally: true,
        ..WorkerPlan::leased("account-42")
    };
    let (mut setup, cast) = build(LeasePlan {
        // The curriculum's release: delete the row (and, with it, its token counter).
        store: Some(StorePlan {
            release: ReleaseStyle::Delete,
            ..StorePlan::default()
        }),
        workers: ROLES.iter().map(|role| worker(role.name, plan(role))).collect(),
        properties: vec![NoOverlappingGrants, FenceMonotonic, NoDoubleDebit, JobCompletes],
        ..LeasePlan::default()
    });
    beats(&mut setup, mode(params), &cast);
    setup
}

/// The story, per release statement.
fn beats(setup: &mut Setup, mode: ReleaseMode, cast: &LeaseCast) {
    let LeasePair {
        store,
        a,
        b,
        sink: ledger,
    } = cast.pair();
    let c = cast.workers[2];
    const LEASE: &str = "account-42";
    let naive = mode == ReleaseMode::NaiveDelete;
    setup.beat(
        "a-holds",
        "A takes the lease: token 1",
        "No row yet: A's INSERT creates it with fence_token 1. Then A gets stuck in step 1.",
        move |n, _| !grants(n, store).is_empty(),
    );
    setup.beat(
        "b-takes-over",
        "A's lease runs out; B takes over: token 2",
        "By the store's clock A's row has expired, so B's statement takes it over and the CASE adds 1.",
        move |n, _| granted_to(n, store, b, None),
    );
    let (prompt, correct, why) = if naive {
        (
            "A's finally block runs DELETE FROM lease WHERE name = 'account-42'. What does it delete?",
            1,
            "The statement names the lease, not the owner, so it deletes whatever row is there: B's.",
        )
    } else {
        (
            "A's finally block runs DELETE FROM lease WHERE name = 'account-42' AND owner = 'worker-A'. What does it delete?",
            0,
            "The row's owner is B, so the WHERE matches nothing: DELETE 0.",
        )
    };
    setup
        .beat(
            "a-refused",
            "A's late write is refused",
            "A's step 1 carries 1 and the ledger has seen 2: UPDATE 0. A aborts, and its finally block releases the lease.",
            move |n, _| refused(n, ledger, a),
        )
        .ask(prompt, &["Nothing: the row is B's", "B's row, and its counter with it"], correct, why);
    if naive {
        setup.beat(
            "deleted",
            "A's release deletes B's row",
            "B still believes it holds the lease, and the counter that gave it 2 is gone with the row.",
            move |n, _| row(n, store, LEASE).is_none(),
        );
        setup
            .beat(
                "c-inserts",
                "C's insert starts again at token 1",
                "No row, so the INSERT gives 1 while B's grant still runs: two holders, and the newer one has the lower number.",
                move |n, _| granted_to(n, store, c, None),
            )
            .ask(
                "C writes step 2 with token 1. The ledger has seen B's 2. What happens?",
                &["It lands: C is the newest holder", "The ledger asks the lease store", "It is refused: 2 <= 1 is false"],
                2,
                "The fence compares numbers only; it cannot know that C's grant came after B's.",
            );
        setup.beat(
            "c-refused",
            "The fence refuses C, the newer holder",
            "Deleting the row restarted the counter, so the numbers no longer follow the order of the grants.",
            move |n, _| refused(n, ledger, c),
        );
        setup.beat(
            "b-finishes",
            "B's step 2 lands: right only by luck",
            "The account ends at ₹80 because the fence happened to side with B. Check the owner on release, and keep the counter.",
            move |n, _| writes(n, ledger).iter().any(|w| w.worker == b && w.step == 2 && w.accepted),
        );
    } else {
        setup.beat(
            "a-no-match",
            "A's release matches no row",
            "AND owner = 'worker-A' matches nothing: DELETE 0. B's row and its lease survive.",
            move |n, _| last_statement(n, store, "worker-A", "→ DELETE 0"),
        );
        setup.beat(
            "c-waits",
            "C is told B holds the lease",
            "C's statement returns zero rows: B's grant has time left. C backs off and asks again later.",
            move |n, _| last_statement(n, store, "worker-C", "→ 0 rows"),
        );
        setup.beat(
            "b-releases",
            "B finishes and deletes its own row",
            "Both steps are done. B's release names B as owner, so it matches: DELETE 1.",
            move |n, _| {
                writes(n, ledger)
                    .iter()
                    .any(|w| w.worker == b && w.step == 2 && w.accepted)
                    && row(n, store, LEASE).is_none()
            },
        );
        setup.beat(
            "c-done",
            "C takes the lease and finds the job done",
            "One holder at a time. C's insert starts at 1 again, since B deleted the row, but C has nothing left to write.",
            move |n, _| granted_to(n, store, c, None),
        );
    }
}
