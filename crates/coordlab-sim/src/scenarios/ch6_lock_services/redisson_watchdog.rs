//! `redisson-watchdog` (curriculum §7, with §4): client A takes a Redisson `RLock` on Redis
//! with no lease time of its own, so Redisson's watchdog keeps the key alive: 30 s TTL
//! (`lockWatchdogTimeout`), renewed every 10 s from a separate thread while the process runs.
//! A's job is four steps of 5 s, each ending in a write to the storage; client B waits for
//! the lock.
//!
//! `pause=none`: A finishes, unlocks, and B runs. `stuck-thread`: A's job thread blocks after
//! step 1 but the process and its watchdog live on, so the lock is renewed for ever and B
//! starves (a liveness failure: the watchdog cannot tell a stuck job from a slow one).
//! `full-gc`: a stop-the-world pause stops the watchdog with everything else; the key
//! expires, B takes the lock, and A wakes and writes without any token: two writers (safety).

use super::service_world::{acquired, lock_lapsed, script_pause_of_a, wake_verdict, wrote_at_storage};
use super::service_world::{build, client, place_clients, ServiceCast, ServicePlan, ServiceProperty};
use super::service_world::{A_GRANT_BY_MS, A_START_MS, B_START_MS, CLOSE_CALL_MS, ROUND_TRIP_SLACK_MS};
use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::setup::Setup;
use crate::kernel::time::SEC_US;
use crate::presentation::durations::seconds;
use crate::properties::Verdict;
use crate::protocols::job::Phase;
use crate::protocols::services::service_client::ServiceClient;
use crate::protocols::services::service_lock::{Check, Flavour, GuardedResource, LockServer, ServerConfig};
use crate::scenarios::lease_setup::{choice, holds_if, int, millis};
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "redisson-watchdog";
const STEP_MS: u64 = 5_000;
const STEPS: u32 = 4;
const HORIZON_MS: u64 = 180_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a watchdog renew a lease while the process lives",
        "Notice a stuck thread keeps the lock for ever",
        "See a GC pause stop the watchdog and let two holders write",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "The holder's thread is stuck, but the process is alive. What does the watchdog do?",
        answers: &[
            "Keeps renewing it, so nobody else gets it",
            "Releases the lock",
            "Raises an error",
        ],
        correct: 0,
        why: "The watchdog checks that the process lives, not that the work moves.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§7",
        title: "Redisson's watchdog",
        summary: "A watchdog renews the lock while the process lives. A stuck thread keeps it renewed for ever; a full GC pause stops the watchdog too, and the paused holder writes after B took over.",
        params: vec![
            choice(
                "pause",
                "What goes wrong",
                "What happens to A during its job.",
                &[
                    ("full-gc", "full GC — the whole JVM stops"),
                    ("stuck-thread", "stuck thread — the job hangs, the process runs"),
                    ("none", "nothing"),
                ],
            ),
            millis("watchdog_timeout_ms", "Watchdog timeout", "The lock's TTL; renewed every third of it.", "30000", (3_000, 120_000)),
            millis("pause_start_ms", "Pause starts at", "When A's GC pause begins.", "12000", (0, 60_000)),
            millis("pause_ms", "Pause length", "How long the full GC stops A.", "45000", (0, 300_000)),
        ],
    }
}

fn variant(params: &Params) -> &str {
    params.get("pause").map_or("full-gc", String::as_str)
}

/// Whether the full-GC story happens: A freezes while it still has steps to write, and wakes
/// after the key expired and B has written.
fn gc_story(params: &Params) -> Option<bool> {
    let [timeout, start, pause] =
        ["watchdog_timeout_ms", "pause_start_ms", "pause_ms"].map(|k| int::<u64>(params, k));
    let renew = timeout / 3;
    // Too early, A may not have asked for the lock yet; too late, it may have written its
    // last step.
    if start + CLOSE_CALL_MS >= STEP_MS * u64::from(STEPS) || start < A_START_MS.1 {
        return None;
    }
    // The last renewal before the pause, a little after a multiple of `renew` (renewals are
    // timed from A's grant).
    let last_renewal = start / renew * renew;
    if start - last_renewal < A_GRANT_BY_MS {
        return None;
    }
    let expiry = last_renewal + timeout;
    // The key expires by `A_GRANT_BY_MS` after that (the renewals count from A's grant). B
    // was told the key's remaining TTL, so it asks again when that runs out, a round trip
    // after it was told; a round trip later it holds the lock, and a step later it writes.
    let b_first_write = expiry + A_GRANT_BY_MS + 2 * ROUND_TRIP_SLACK_MS + STEP_MS;
    // It holds the lock, at the least, until its last step is written.
    let b_done_at_earliest = expiry + STEP_MS * u64::from(STEPS);
    let wake = start + pause;
    let late = wake > b_first_write + CLOSE_CALL_MS && wake + CLOSE_CALL_MS < b_done_at_earliest;
    wake_verdict(late, wake, expiry)
}

pub fn expectation(params: &Params) -> Expectation {
    let mut outcome = Vec::new();
    let mut verdicts = Vec::new();
    match variant(params) {
        "stuck-thread" => {
            outcome.push(("b_got_the_lock".to_string(), json!(false)));
            verdicts.push(("every-client-acquires".to_string(), Verdict::Violated));
            verdicts.push(("no-stale-write".to_string(), Verdict::Holds));
        }
        "none" => {
            outcome.push(("b_got_the_lock".to_string(), json!(true)));
            outcome.push(("stale_writes_applied".to_string(), json!(0)));
            verdicts.push(("every-client-acquires".to_string(), Verdict::Holds));
            verdicts.push(("no-stale-write".to_string(), Verdict::Holds));
        }
        _ => {
            if let Some(two_writers) = gc_story(params) {
                verdicts.push(("no-stale-write".to_string(), holds_if(!two_writers)));
                if two_writers {
                    outcome.push(("max_concurrent_holders".to_string(), json!(2)));
                }
            }
        }
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let v = variant(params).to_string();
    let timeout: u64 = int(params, "watchdog_timeout_ms");
    let (mut setup, cast) = build(ServicePlan {
        server: ServerConfig {
            flavour: Flavour::Redisson,
            lease_ms: timeout,
            lock_delay_ms: 0,
            horizon_ms: HORIZON_MS,
        },
        numbers_issued: 0,
        server_name: "redis",
        check: Check::None,
        properties: vec![
            ServiceProperty::NoStaleWrite,
            ServiceProperty::EveryClientAcquires,
        ],
    });
    let job = |start| {
        let mut c = client(cast, Flavour::Redisson, start);
        c.renew_every_ms = timeout / 3;
        c.steps = STEPS;
        c.step_ms = STEP_MS;
        c.horizon_ms = HORIZON_MS;
        c
    };
    let mut a = job(A_START_MS);
    if v == "stuck-thread" {
        a.stuck_after_step = Some(1);
    }
    let b = job(B_START_MS);
    place_clients(&mut setup, cast, a, b);
    if v == "full-gc" {
        script_pause_of_a(&mut setup, params, cast);
    }
    beats(&mut setup, &v, timeout, int(params, "pause_start_ms"), cast);
    setup
}

fn renewals(n: &crate::kernel::world::Nodes<'_>, cast: ServiceCast) -> u32 {
    n.live::<LockServer>(cast.server)
        .map_or(0, |s| s.durable.renewals)
}

/// Its job thread is blocked while it holds.
fn stuck(n: &crate::kernel::world::Nodes<'_>, id: crate::kernel::ids::NodeId) -> bool {
    n.live::<ServiceClient>(id).is_some_and(|c| c.stuck)
}

/// Its job is over: done, or abandoned after a refused write.
fn over(n: &crate::kernel::world::Nodes<'_>, id: crate::kernel::ids::NodeId) -> bool {
    n.live::<ServiceClient>(id)
        .is_some_and(|c| matches!(c.phase, Phase::Done | Phase::Stopped))
}

fn stale_applied(n: &crate::kernel::world::Nodes<'_>, cast: ServiceCast) -> bool {
    n.live::<GuardedResource>(cast.storage)
        .is_some_and(|r| super::service_world::stale_writes(&r.durable.writes).0 > 0)
}

fn beats(setup: &mut Setup, variant: &str, timeout_ms: u64, pause_start_ms: u64, cast: ServiceCast) {
    let (ttl, every) = (seconds(timeout_ms), seconds(timeout_ms / 3));
    setup.beat(
        "a-locks",
        "A takes the lock; the watchdog starts",
        &format!("lock() with no lease time: Redis keeps the key for {ttl}, and Redisson's watchdog thread will push that back every {every} while A's process runs."),
        move |n, _| acquired(n, cast.a),
    );
    // A GC pause that starts before A's first renewal leaves nothing to renew: told then
    // without this beat, which would otherwise wait for another client's renewal.
    let paused = !matches!(variant, "none" | "stuck-thread");
    if !paused || pause_start_ms > timeout_ms / 3 + A_GRANT_BY_MS {
        setup.beat(
            "renewed",
            "The watchdog renews the lock",
            &format!("{every} in, the watchdog resets the TTL to {ttl}. It checks one thing only: that the process holding the lock is still running."),
            move |n, _| n.live::<ServiceClient>(cast.a).is_some_and(|c| c.renewals >= 1),
        );
    }
    match variant {
        "stuck-thread" => {
            setup.beat(
                "stuck",
                "A's job thread is stuck",
                "A's job blocks on a call that never returns. The JVM is fine, so the watchdog thread carries on.",
                move |n, _| stuck(n, cast.a),
            );
            setup.beat(
                "renewing-for-ever",
                "The lock is renewed with no work behind it",
                "Renewal after renewal: to Redis, A is a healthy holder. A lock that is never released is exactly what the watchdog cannot tell apart from a long job.",
                move |n, _| renewals(n, cast) >= 6,
            );
            setup.beat(
                "b-starves",
                "B is still waiting, three minutes on",
                "Each time the key's TTL would have run out B asks again, and finds it renewed by A's keep-alive; no unlock message ever comes. Only a timeout inside A's job, or killing A, would free the lock.",
                move |n, _| n.now_us >= 170 * SEC_US && !acquired(n, cast.b),
            );
        }
        "none" => {
            setup.beat(
                "a-unlocks",
                "A finishes and unlocks",
                "Four steps written; unlock() deletes the key and stops the watchdog.",
                move |n, _| over(n, cast.a),
            );
            setup.beat(
                "b-locks",
                "B takes the lock",
                "unlock() published on the lock's channel, so B, subscribed while it waited, tries at once and takes the lock; its own watchdog starts.",
                move |n, _| acquired(n, cast.b),
            );
            setup.beat(
                "b-done",
                "B finishes: one writer at a time",
                "The writes at the storage never interleave. With no pause the watchdog did exactly its job: keep the lock for as long as the work took.",
                move |n, _| over(n, cast.b),
            );
        }
        _ => {
            setup.beat(
                "a-freezes",
                "A full GC stops the whole JVM",
                "A stop-the-world pause freezes every thread in A's process, the watchdog included. No renewal goes out.",
                move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == cast.a),
            );
            setup.beat(
                "expires",
                "The key's TTL runs out",
                &format!("{ttl} after the key's TTL was last set (the grant, or the last renewal) Redis deletes the key. To Redis a frozen process and a dead one look the same."),
                move |n, step| lock_lapsed(n, step, cast),
            );
            setup.beat(
                "b-locks",
                "B takes the lock and writes",
                "B waited out the key's remaining TTL (no unlock was published) and tries again: it gets the lock and starts its job. Redisson gave neither client a token, so the storage cannot tell them apart.",
                move |n, _| wrote_at_storage(n, cast, cast.b),
            )
            .ask(
                "When A wakes, what stops its next write?",
                &[
                    "The watchdog: it notices the lock is gone",
                    "Nothing: the write goes out before anyone checks",
                    "Redis: it refuses A's write",
                ],
                1,
                "The job thread writes as soon as the pause ends. The watchdog's renewal is refused too late, and Redis never sees the write at all.",
            );
            setup.beat(
                "a-writes",
                "A wakes and writes: two writers",
                "The pause ends and A's job thread carries on with the step it was in. The storage applies it on top of B's writes. The watchdog protected the lock's lifetime, never the data.",
                move |n, _| stale_applied(n, cast),
            );
        }
    }
}
