//! `lock-across-call` (curriculum §2, §5 and §9: "try not to hold a lock across a network call"):
//! worker A takes a 10 s lease on payout-42 (token 33), sized for a payment API that usually
//! answers in 1 s, and calls it to pay out ₹10. This call stalls for 15 s. A does not renew,
//! so the lease expires mid-call; B takes it with token 34, finds no payout recorded and
//! makes the same call. The API pays twice, and A, back from its call, records the payout
//! with its stale token as if it still held the lease.
//!
//! `outside-lock` holds the lease only while A claims the job row (pending → running), then
//! lets go and calls: B finds the row taken and does nothing. `idempotent-fenced` keeps the
//! call inside the lease but gives it a key derived from the job, so the API pays once, and
//! fences the record (with the new holder's stamp on takeover), so A's late record is refused.

use super::call_world::CallWorld;
use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::Nodes;
use crate::properties::Verdict;
use crate::protocols::job::AMOUNT_PER_STEP;
use crate::protocols::lease::call_worker::{CallPlan, CallWorker, Placement};
use crate::protocols::lease::fenced_resource::LedgerIntro;
use crate::protocols::lease::job_table::{JobDurable, JobTable};
use crate::protocols::lease::payment_api::{ApiTiming, PaymentApi};
use crate::protocols::lease::payment_rail::{Payment, PaymentRail};
use crate::protocols::redis_locks::redis_job;
use crate::scenarios::common::{HolderCount, WORKER_FAULTS};
use crate::scenarios::lease_setup::{
    add_store, choice, holds_if, int, millis, StorePlan, OPENING_BALANCE, SINK_FAULTS, STORE_FAULTS,
};
use crate::scenarios::lease_table_beats::{granted_to, grants, refused, writes};
use crate::scenarios::lease_world::{accepted, rejected, LeaseProperty::*, LeaseWorld};
use crate::scenarios::property_library::add_ledger;
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "lock-across-call";
const LEASE: &str = "payout-42";
const TTL_MS: u64 = 10_000;
/// A call this long surely lets A record the payout before its lease runs out (the call starts
/// a round trip or two after the grant, and the record takes one more).
const IN_TIME_BY_MS: u64 = TTL_MS - 500;
/// A call this long surely comes back after B's call was paid (by about 11.7 s).
const AFTER_B_FROM_MS: u64 = 12_000;
const USUAL_MS: u64 = 1_000;
/// B asks at about 0.5 s, 5.5 s and 10.5 s: the third is the first after A's lease expires.
const RETRY_MS: u64 = 5_000;

/// Who `lock-across-call`'s setup added.
#[derive(Clone, Copy)]
struct CallCast {
    store: NodeId,
    a: NodeId,
    b: NodeId,
    ledger: NodeId,
    api: NodeId,
    /// With `outside-lock` only.
    jobs: Option<NodeId>,
}
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a slow network call outlive the lease that guards it",
        "Hold the lock only to claim the work, not across the call",
        "Make the call safe to repeat with an idempotency key",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "A holds a 10 s lease across a payment call that takes 15 s. What can happen?",
        answers: &[
            "B takes the lease and pays again",
            "The call is cancelled at 10 s",
            "The lease waits for the call",
        ],
        correct: 0,
        why: "The lease does not know about the call; when it expires someone else starts the same work.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§2, §5, §9",
        title: "A lock held across a network call",
        summary: "A calls a slow payment API while holding a 10 s lease. The call outlives the lease, B makes the same call, and the API pays twice. The remedies: hold the lock only for a short claim, or make the call idempotent and the record fenced.",
        params: vec![
            choice(
                "call",
                "The call",
                "Where the slow call sits relative to the lease, and what it carries.",
                &[
                    ("inside-lock", "inside the lock — lease, call, record, release"),
                    ("outside-lock", "outside the lock — lease, claim the job row, release; then call"),
                    ("idempotent-fenced", "inside, with an idempotency key and a fenced record"),
                ],
            ),
            millis(
                "call_ms",
                "A's call takes",
                "How long the API takes with A's call (it usually answers in 1 s). Up to about 9500 A records the payout within its 10 s lease; from 12000 B has paid out before A's answer comes.",
                "15000",
                (500, 60_000),
            ),
        ],
    }
}

/// The story the timing tells: A's answer comes back while its lease holds, or only after
/// B's call was paid. In between, it depends on the seed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timing {
    InTime,
    AfterB,
    Between,
}

fn timing(params: &Params) -> Timing {
    match int::<u64>(params, "call_ms") {
        ms if ms <= TTL_MS => Timing::InTime,
        // B's call is paid by about 11.7 s.
        ms if ms >= AFTER_B_FROM_MS => Timing::AfterB,
        _ => Timing::Between,
    }
}

fn variant(params: &Params) -> &str {
    params.get("call").map_or("inside-lock", String::as_str)
}

pub fn expectation(params: &Params) -> Expectation {
    let out = |pairs: &[(&str, serde_json::Value)]| -> Vec<(String, serde_json::Value)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    };
    let safe = |ok: bool| {
        ["no-double-payment", "fence-monotonic", "no-double-debit"]
            .map(|p| (p.to_string(), holds_if(ok)))
            .to_vec()
    };
    let (a, b) = ("worker-A", "worker-B");
    let (mut outcome, mut verdicts) = match (variant(params), timing(params)) {
        ("outside-lock", _) => (
            out(&[
                ("payments_sent", json!(1)),
                ("conflicts", json!(1)),
                ("finished_by", json!([a])),
                ("max_concurrent_holders", json!(1)),
            ]),
            safe(true),
        ),
        ("idempotent-fenced", Timing::AfterB) => (
            out(&[
                ("payments_sent", json!(1)),
                ("replays_recognised", json!(1)),
                ("accepted_writes", json!([accepted(b, 34, 1)])),
                ("rejected_writes", json!([rejected(a, 33, 1, 34)])),
                ("finished_by", json!([b])),
                ("max_concurrent_holders", json!(2)),
            ]),
            safe(true),
        ),
        ("idempotent-fenced", _) => (out(&[("payments_sent", json!(1))]), safe(true)),
        (_, Timing::AfterB) => (
            out(&[
                ("payments_sent", json!(2)),
                ("paid_total", json!(2 * AMOUNT_PER_STEP)),
                ("balance", json!(OPENING_BALANCE - 2 * AMOUNT_PER_STEP)),
                ("finished_by", json!([a, b])),
                ("max_concurrent_holders", json!(2)),
            ]),
            safe(false),
        ),
        (_, Timing::InTime) => (
            out(&[
                ("payments_sent", json!(1)),
                ("finished_by", json!([a, b])),
                ("max_concurrent_holders", json!(1)),
            ]),
            safe(true),
        ),
        _ => (Vec::new(), Vec::new()),
    };
    if !outcome.is_empty() {
        let paid = outcome
            .iter()
            .any(|(k, v)| k == "payments_sent" && v == &json!(1));
        if paid {
            outcome.push(("balance".into(), json!(OPENING_BALANCE - AMOUNT_PER_STEP)));
        }
    }
    verdicts.push(("tokens-increase".into(), Verdict::Holds));
    verdicts.push(("job-completes".into(), Verdict::Holds));
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let v = variant(params);
    let outside = v == "outside-lock";
    let placement = if outside {
        Placement::ClaimThenCall
    } else {
        Placement::AcrossCall
    };
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let store = add_store(&mut setup, &StorePlan::with_tokens_issued(32), LEASE);
    // The workers come first, but they name the ledger, the API and the job table: their ids
    // are reserved here and the workers placed once those exist.
    let [a, b] = [setup.reserve(), setup.reserve()];
    let ledger = add_ledger(&mut setup, LedgerIntro::RemembersHighest, OPENING_BALANCE);
    let timing = ApiTiming {
        stall_ms: int(params, "call_ms"),
        usual_ms: USUAL_MS,
    };
    let api = setup.add::<PaymentApi>(
        "payment-api",
        "rail",
        &SINK_FAULTS,
        timing,
        PaymentRail::initial(),
    );
    let jobs =
        outside.then(|| setup.add::<JobTable>("job-db", "job-table", &STORE_FAULTS, (), JobTable::initial()));
    for (id, name, start_after_ms) in [(a, "worker-A", (0, 100)), (b, "worker-B", (500, 600))] {
        let plan = CallPlan {
            job: CallPlan::job(LEASE, TTL_MS, RETRY_MS, AMOUNT_PER_STEP, ledger),
            start_after_ms,
            placement,
            idempotency_key: v == "idempotent-fenced",
            fenced: v == "idempotent-fenced",
            store,
            api,
            jobs,
        };
        let fresh = redis_job::JobDurable::default();
        setup.place::<CallWorker>(id, name, "worker", &WORKER_FAULTS, plan, fresh);
    }
    let cast = CallCast {
        store,
        a,
        b,
        ledger,
        api,
        jobs,
    };
    setup.set_world(CallWorld {
        inner: LeaseWorld {
            store: Some(store),
            workers: Vec::new(),
            resource: Some(ledger),
            rail: None,
            jobs,
            lease: LEASE.to_string(),
            opening_balance: OPENING_BALANCE,
            job_total: AMOUNT_PER_STEP,
            properties: vec![FenceMonotonic, TokensIncrease, NoDoubleDebit],
            histogram_bucket_ms: None,
            report_conflicts: false,
            holders: HolderCount::default(),
            writes_seen: 0,
            notes: Vec::new(),
            explain_double_runs: false,
            explainer: Default::default(),
        },
        workers: vec![a, b],
        api,
        holders: HolderCount::default(),
    });
    beats(&mut setup, v, timing.stall_ms, cast);
    setup
}

/// The API's payouts so far, and the calls it is working on.
fn payouts<'a>(n: &Nodes<'a>, c: CallCast) -> &'a [Payment] {
    n.durable::<PaymentApi>(c.api).map_or(&[], |d| &d.payments)
}

fn calling(n: &Nodes<'_>, c: CallCast, who: NodeId) -> bool {
    n.live::<PaymentApi>(c.api)
        .is_some_and(|a| a.calls.iter().any(|c| c.from == who))
        || payouts(n, c).iter().any(|p| p.from == who)
}

fn recorded(n: &Nodes<'_>, c: CallCast, who: NodeId) -> bool {
    writes(n, c.ledger).iter().any(|w| w.worker == who && w.accepted)
}

fn job_row<'a>(n: &Nodes<'a>, c: CallCast) -> Option<&'a JobDurable> {
    n.durable::<JobTable>(c.jobs?)
}

fn beats(setup: &mut Setup, variant: &str, call_ms: u64, c: CallCast) {
    setup.beat(
        "a-holds",
        "A takes the lease: token 33, for 10 s",
        "Ten seconds is plenty for a payout the API usually makes in 1 s. A does not renew.",
        move |n, _| !grants(n, c.store).is_empty(),
    );
    let call = crate::presentation::durations::seconds(call_ms);
    if variant == "outside-lock" {
        return outside_beats(setup, &call, c);
    }
    let keyed = variant == "idempotent-fenced";
    setup.beat(
        "a-calls",
        "A calls the API, holding the lease",
        &format!("This call stalls: the answer takes {call}. A waits, and its lease runs on."),
        move |n, _| calling(n, c, c.a),
    );
    // Near the lease's end (A's call starts a few tens of ms after its grant, B polls half a
    // second after the expiry) which comes first is too close to tell in advance.
    if call_ms > IN_TIME_BY_MS && call_ms < AFTER_B_FROM_MS {
        setup.beat(
            "a-answer-near-expiry",
            "A's answer comes back about when its lease ends",
            &format!("The call took {call}, about as long as the 10 s lease. Whether A records the payout before the store expires its lease, or B takes the lease first, is a matter of milliseconds."),
            move |n, _| recorded(n, c, c.a) || granted_to(n, c.store, c.b, None),
        );
        return;
    }
    if call_ms <= IN_TIME_BY_MS {
        setup.beat(
            "a-records",
            "A's answer comes back in time",
            "A records the payout and lets go. B, asking later, finds it recorded and does nothing.",
            move |n, _| recorded(n, c, c.a),
        )
        .ask(
            &format!("A's call took {call}, within its 10 s lease. Does B pay out too?"),
            &["Yes, B calls the API as well", "No, B finds the payout recorded"],
            1,
            "B reads the ledger after A's record: the job is done. Trouble starts only when the call outlives the lease.",
        );
        return;
    }
    setup.beat(
        "b-takes-over",
        "Mid-call, the lease expires: B gets token 34",
        "A is still waiting for the API. By the store's clock its lease is over, and B's retry takes it.",
        move |n, _| granted_to(n, c.store, c.b, None),
    );
    let b_calls = if keyed {
        "B stamps the ledger row with 34, finds no payout recorded and calls with the same key, payout-42#1."
    } else {
        "No payout is recorded yet, so B asks the API to pay out too. Nothing in the call says it is the same job."
    };
    let b = setup.beat("b-calls", "B makes the same call", b_calls, move |n, _| {
        calling(n, c, c.b)
    });
    if !keyed {
        b.ask(
            "A's call is still in progress at the API. What happens to it?",
            &[
                "The API pays it out as well",
                "The API drops it: A's lease is over",
                "It waits until B's call is done",
            ],
            0,
            "The API knows nothing of the lease. Two payout calls are two payouts.",
        );
    }
    let (key, title, text) = if keyed {
        (
            "api-pays-once",
            "The API pays once: A's call is a replay",
            "B's call paid and recorded key payout-42#1. A's call ends with the same key: nothing is sent, and A gets the earlier result. (This API checks the key as it pays; some refuse a repeat that arrives mid-call.)",
        )
    } else {
        (
            "api-pays-twice",
            "The API pays out a second time",
            "A's stalled call finishes: another ₹10 goes out for payout-42. The lease was sized for the usual answer, not the slowest.",
        )
    };
    setup.beat(key, title, text, move |n, _| {
        let p = payouts(n, c);
        if keyed {
            p.iter().any(|p| !p.applied)
        } else {
            p.iter().filter(|p| p.applied).count() >= 2
        }
    });
    if keyed {
        setup
            .beat(
                "a-refused",
                "A's late record is refused",
                "Its WHERE clause asks for last_token <= 33, and the row has 34. UPDATE 0: A stops. One payout, one record.",
                move |n, _| refused(n, c.ledger, c.a),
            )
            .ask(
                "Without the key, but with the fenced record: how many payouts?",
                &["Two", "One"],
                0,
                "The fence guards the ledger, not the API: the API would pay both calls. The key is what makes it pay once.",
            );
    } else {
        setup.beat(
            "a-records",
            "A records the payout with stale token 33",
            "A still thinks it holds the lease. Nothing checks its token, so the ledger records the payout a second time.",
            move |n, _| recorded(n, c, c.a),
        );
    }
}

fn outside_beats(setup: &mut Setup, call: &str, c: CallCast) {
    setup.beat(
        "a-claims",
        "A claims the job row, then lets go",
        "Under the lease A commits one short change, pending → running, and releases a few milliseconds after taking it.",
        move |n, _| job_row(n, c).is_some_and(|j| j.claimed_by.values().any(|w| *w == c.a)),
    );
    setup.beat(
        "a-calls",
        "A calls the API, holding no lease",
        &format!("This call stalls for {call}. No lease runs out while A waits: it holds none."),
        move |n, _| calling(n, c, c.a),
    );
    setup
        .beat(
            "b-skips",
            "B takes the lease and finds the job taken",
            "B gets token 34, but the job row is no longer pending: it lets go and does nothing.",
            move |n, _| job_row(n, c).is_some_and(|j| j.conflicts > 0),
        )
        .ask(
            "While A's call is in flight, B holds the lease. What does B do?",
            &["Calls the API too", "Sees the job row taken and does nothing", "Waits for A's call to end"],
            1,
            "The lease guarded only the claim (one conditional UPDATE, which would be safe even alone). The job row says the job is A's, however slow the API is.",
        );
    setup.beat(
        "api-pays-once",
        "The API pays out once",
        "A's call finishes. Only A ever called: the job row, not a lease, said whose job it was.",
        move |n, _| payouts(n, c).iter().any(|p| p.applied),
    );
    setup.beat(
        "a-records",
        "A records the payout",
        "No token needed: only the row's owner records. Had A crashed mid-call, the row would stay running until a sweeper retried it, with an idempotency key.",
        move |n, _| recorded(n, c, c.a),
    );
}
