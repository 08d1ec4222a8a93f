//! `lease-stampede` (§4, §9): waiters of a held lease retry in lockstep bursts unless jittered.

use crate::scenarios::lease_setup::prelude::*;

pub const ID: &str = "lease-stampede";
const LEASE: &str = "job:nightly-sweep";
pub const COURSE: CourseNotes = CourseNotes {
    objectives: &[
        "See waiters retry in lockstep when a lease drops",
        "Spread retries out with jitter to waste fewer requests",
    ],
    question: CheckQuestion {
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

pub fn info() -> Listing {
    Listing {
        sections: "§4, §9",
        title: "Lease stampede",
        summary: "Several waiters poll a held lease. When it drops, without jitter they all hit the store in the same instant, round after round; with jitter their requests arrive spread out and fewer are wasted.",
        params: vec![
            off_on(
                "jitter",
                "Retry jitter",
                "Whether each waiter adds a random delay to its attempts.",
                "off — everyone starts at 1 s and retries every 2 s exactly",
                "on — up to 2 s of random extra wait per attempt",
            ),
            count("waiters", "Waiters", "How many workers poll for the lease while it is held.", "5", (2, 8)),
        ],
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let once = [("overlapping_grants", 0), ("max_concurrent_holders", 1)];
    let waiters = int::<u32>(params, "waiters");
    let peak = chosen(params, "jitter", "off").then_some(("peak_requests_per_bucket", waiters));
    let holds = ["no-overlapping-grants", "tokens-increase", "job-completes"];
    expect(once.into_iter().chain(peak), holds.map(|p| (p, Holds)))
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let jitter_ms = if chosen(params, "jitter", "on") { 2_000 } else { 0 };
    let waiters = int::<u32>(params, "waiters");
    let holder = WorkerPlan {
        ttl_ms: 9_000,
        heartbeat_ms: 3_000,
        retry_ms: 2_000,
        step_ms: 2_500,
        steps: 1,
        release_in_finally: true,
        ..WorkerPlan::leased(LEASE)
    };
    let waiter = WorkerPlan {
        start_after_ms: (1_000, 1_000 + jitter_ms),
        retry_jitter_ms: jitter_ms,
        ..holder.clone()
    };
    let crowd = (1..=waiters).map(|i| worker(format!("waiter-{i}"), waiter.clone()));
    let (mut setup, cast) = build(LeasePlan {
        workers: [worker("holder", holder)].into_iter().chain(crowd).collect(),
        properties: vec![NoOverlappingGrants, TokensIncrease, JobCompletes],
        // A jitter-free burst, a few ms wide, starts on a multiple of 100 ms: it fills one bucket (the peak).
        histogram_bucket_ms: Some(100),
        ..LeasePlan::default()
    });
    let (store, holder) = (cast.store(), cast.workers[0]);
    setup.beat(
        "holder",
        "The holder takes the lease",
        "Its job takes 2.5 s under a 9 s lease. The other copies of the job fire too, and find the lease held.",
        move |n, _| !grants(n, store).is_empty(),
    );
    if jitter_ms == 0 {
        setup
            .beat(
                "burst",
                &format!("All {waiters} waiters ask in the same instant"),
                "Their jobs fired together at 1 s: every request reaches the store within a few milliseconds, and every one is refused.",
                move |n, _| acquire_requests(n, store) > waiters as usize,
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
        "The first request after the release wins the row with the next token and finds nothing left to do; any arriving with it are refused.",
        move |n, _| grants(n, store).iter().any(|g| g.owner != holder),
    );
    setup.beat(
        "all",
        "Every waiter took a turn, for a job already done",
        if jitter_ms > 0 {
            "Spread out by jitter, the requests rarely collide: fewer are refused, and fewer are sent at all."
        } else {
            "Round after round the waiters hit the store together. Compare the request histogram with jitter on."
        },
        move |n, _| holders(n, store) > waiters as usize,
    );
    setup
}
