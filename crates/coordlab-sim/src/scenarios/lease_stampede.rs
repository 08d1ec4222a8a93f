//! `lease-stampede` (curriculum §4, "stampedes", and §9, "add jitter to retries"): a holder
//! has the lease for a 2.5 s job while N waiters, whose copies of the job fired too, poll the
//! store every 2 s. The holder finishes and releases; from then on each waiter in turn gets
//! the lease, finds the job already done, and lets go.
//!
//! With `jitter=off` every waiter fires at exactly 1 s and waits exactly 2 s after each
//! refusal, so their requests reach the store in bursts a few milliseconds wide (only the
//! network latency differs per message): N requests at once, one winner, the rest refused
//! and back again together, round after round. With `jitter=on` each waiter adds a random
//! delay of up to 2 s to its first attempt and to every retry: the requests arrive spread
//! out, and because they rarely collide, fewer are refused and fewer are sent at all.
//!
//! The inspector's histogram counts acquire requests per 100 ms; `peak_requests_per_bucket`
//! is its tallest bar, exactly N with jitter off. With jitter on it was lower in each of the
//! 500 seeds the tests try, for four or more waiters; with two or three, two random delays now
//! and then land in the same 100 ms by chance, so the scenario declares no peak for jitter on.

use super::lease_setup::{build, choice, chosen, int, worker, LeaseCast, LeasePlan};
use super::lease_table_beats::{grants, released};
use super::lease_world::LeaseProperty::*;
use super::{Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::json;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::properties::Verdict;
use crate::protocols::lease_store::LeaseStore;
use crate::protocols::lease_worker::WorkerPlan;

pub const ID: &str = "lease-stampede";
/// The curriculum chapter this scenario belongs to; the course walks chapters in order.
pub const CHAPTER: u8 = 3;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: super::CourseNotes = super::CourseNotes {
    objectives: &[
        "See waiters retry in lockstep when a lease drops",
        "Spread retries out with jitter to waste fewer requests",
    ],
    question: super::CheckQuestion {
        prompt: "Why add jitter to the waiters' retries?",
        answers: &[
            "To make the lease last longer",
            "So they do not all hit the store at the same instant",
            "To give each waiter a token",
        ],
        correct: 1,
        why: "Without jitter the waiters stay in step and every release starts a burst of wasted requests.",
    },
};
const TTL_MS: u64 = 9_000;
/// The holder's job: one step, done and released well between the waiters' first and
/// second polls.
const JOB_MS: u64 = 2_500;
/// When the waiters' jobs fire, without jitter.
const WAITERS_START_MS: u64 = 1_000;
const RETRY_MS: u64 = 2_000;
/// With jitter on: up to this much random extra wait, on the first attempt and every retry.
const JITTER_MS: u64 = 2_000;
/// Width of the histogram's buckets. A jitter-free burst (a few ms wide, drifting by at most
/// 8 ms per round) always falls inside one bucket, because rounds start on multiples of it.
const BUCKET_MS: u64 = 100;
const MAX_WAITERS: i64 = 8;

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: CHAPTER,
        sections: "§4, §9",
        title: "Lease stampede",
        summary: "Several waiters poll a held lease. When it drops, without jitter they all hit the store in the same instant, round after round; with jitter their requests arrive spread out and fewer are wasted.",
        params: vec![
            choice(
                "jitter",
                "Retry jitter",
                "Whether each waiter adds a random delay to its attempts.",
                &[
                    ("off", "off — everyone starts at 1 s and retries every 2 s exactly"),
                    ("on", "on — up to 2 s of random extra wait per attempt"),
                ],
            ),
            ParamSpec {
                variant_defaults: &[],
                key: "waiters",
                label: "Waiters",
                help: "How many workers poll for the lease while it is held.",
                default: "5",
                kind: ParamKind::Int {
                    min: 2,
                    max: MAX_WAITERS,
                    unit: "",
                },
            },
        ],
    }
}

fn jitter(params: &Params) -> bool {
    chosen(params, "jitter", "on")
}

fn waiters(params: &Params) -> u32 {
    int::<u32>(params, "waiters").clamp(2, MAX_WAITERS as u32)
}

pub fn expectation(params: &Params) -> Expectation {
    let mut outcome = vec![
        ("overlapping_grants".to_string(), json!(0)),
        ("max_concurrent_holders".to_string(), json!(1)),
    ];
    if !jitter(params) {
        // Every waiter's first poll lands in the same bucket while the lease is held, and
        // nothing else shares a bucket with a burst.
        outcome.push(("peak_requests_per_bucket".to_string(), json!(waiters(params))));
    }
    Expectation {
        outcome,
        verdicts: vec![
            ("no-overlapping-grants".to_string(), Verdict::Holds),
            ("tokens-increase".to_string(), Verdict::Holds),
            ("job-completes".to_string(), Verdict::Holds),
        ],
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let holder = WorkerPlan {
        ttl_ms: TTL_MS,
        heartbeat_ms: TTL_MS / 3,
        retry_ms: RETRY_MS,
        steps: 1,
        step_ms: JOB_MS,
        release_in_finally: true,
        // A waiter that gets the lease first asks how far the job got.
        check_progress: true,
        ..WorkerPlan::leased("job:nightly-sweep")
    };
    let jitter_ms = if jitter(params) { JITTER_MS } else { 0 };
    let waiter = WorkerPlan {
        start_after_ms: (WAITERS_START_MS, WAITERS_START_MS + jitter_ms),
        retry_jitter_ms: jitter_ms,
        ..holder.clone()
    };
    let mut workers = vec![worker("holder", holder)];
    workers.extend((1..=waiters(params)).map(|i| worker(format!("waiter-{i}"), waiter.clone())));
    let (mut setup, cast) = build(LeasePlan {
        workers,
        properties: vec![NoOverlappingGrants, TokensIncrease, JobCompletes],
        histogram_bucket_ms: Some(BUCKET_MS),
        ..LeasePlan::default()
    });
    beats(&mut setup, &cast, jitter(params), waiters(params));
    setup
}

/// The story, with and without jitter. Nodes: the store, the holder, then the waiters.
fn beats(setup: &mut Setup, cast: &LeaseCast, jitter: bool, waiters: u32) {
    let store = cast.store();
    let holder = cast.workers[0];
    const LEASE: &str = "job:nightly-sweep";
    setup.beat(
        "holder",
        "The holder takes the lease",
        "Its job takes 2.5 s under a 9 s lease. The other copies of the job fire too, and find the lease held.",
        move |n, _| !grants(n, store).is_empty(),
    );
    if !jitter {
        let requests = 1 + waiters as usize;
        setup
            .beat(
                "burst",
                &format!("All {waiters} waiters ask in the same instant"),
                "Their jobs fired together at 1 s: every request reaches the store within a few milliseconds, and every one is refused.",
                move |n, _| n.live::<LeaseStore>(store).is_some_and(|s| s.acquire_requests_us.len() >= requests),
            )
            .ask(
                "Each refused waiter retries exactly 2 s later, and the holder lets go at about 2.5 s. What happens at 3 s?",
                &["They arrive one by one", "They all arrive together again: one wins", "Nobody retries"],
                1,
                "Same start, same fixed wait: the burst repeats, and only one request in it can win.",
            );
    }
    setup.beat(
        "released",
        "The holder finishes and releases",
        "Its release sets expires_at = now(): the row stays, free for the next holder, with its counter.",
        move |n, _| released(n, store, LEASE),
    );
    setup.beat(
        "next",
        "A waiter takes over and finds the job done",
        if jitter {
            "The first waiter to ask after the release takes the row over with the next token, and has nothing left to do."
        } else {
            "One request of the burst wins the row with the next token; the others are refused together, again."
        },
        move |n, _| grants(n, store).iter().any(|g| g.owner != holder),
    );
    setup.beat(
        "all",
        "Every waiter took a turn, for a job already done",
        if jitter {
            "Spread out by jitter, the requests rarely collide: fewer are refused, and fewer are sent at all."
        } else {
            "Round after round the waiters hit the store together. Compare the request histogram with jitter on."
        },
        move |n, _| {
            let mut owners: Vec<NodeId> = grants(n, store).iter().map(|g| g.owner).collect();
            owners.sort_by_key(|o| o.0);
            owners.dedup();
            owners.len() > waiters as usize
        },
    );
}
