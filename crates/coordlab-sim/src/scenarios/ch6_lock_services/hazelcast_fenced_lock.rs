//! `hazelcast-fenced-lock` (curriculum §7, with §5–6): Hazelcast's FencedLock in the CP
//! subsystem. `lockAndGetFence()` returns a fence that only grows; the lock belongs to the
//! caller's CP session, kept alive by heartbeats. Client A takes fence 41, writes, and
//! freezes in a GC pause; its session expires, the CP group frees the lock, and B gets fence
//! 42. When A wakes, its write with 41 reaches a storage that has seen 42 and is refused.
//!
//! The CP group is drawn as one node: a Raft group whose decisions (grant, session expiry)
//! each take a majority round, modelled here as a single authority that never loses a
//! committed decision. Its Raft log and elections are shown in `consensus-lock` and the Raft
//! scenarios; this story is about what the fence does at the storage.

use super::service_world::{acquired, lock_lapsed, script_pause_of_a, wake_verdict, wrote_at_storage};
use super::service_world::{build, client, place_clients, ServiceCast, ServicePlan, ServiceProperty};
use super::service_world::{
    A_GRANT_BY_MS, A_START_MS, B_START_MS, CLOSE_CALL_MS, RETRY_MS, ROUND_TRIP_SLACK_MS,
};
use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::setup::Setup;
use crate::presentation::durations::seconds;
use crate::protocols::services::service_lock::{Check, Flavour, GuardedResource, ServerConfig};
use crate::scenarios::common::beat_either;
use crate::scenarios::lease_setup::{choice, holds_if, int, millis};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::EventKind;

pub const ID: &str = "hazelcast-fenced-lock";
const HEARTBEAT_MS: u64 = 5_000;
const STEP_MS: u64 = 5_000;
const STEPS: u32 = 4;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Take a lock whose lock() returns a fence",
        "See a paused holder's late write refused after its session expired",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "A's CP session expires during a pause and B locks with a higher fence. A's late write…",
        answers: &[
            "lands, since A still holds the lock",
            "blocks B",
            "is refused at the storage",
        ],
        correct: 2,
        why: "The storage compares fences and the older one loses.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§7",
        title: "Hazelcast FencedLock",
        summary: "A Raft-backed lock whose lock() returns a fence. A pauses, its CP session expires, B gets a higher fence, and A's late write is refused at the storage.",
        params: vec![
            choice(
                "storage",
                "Storage",
                "Whether the storage compares fences.",
                &[("checks-fence", "checks the fence"), ("ignores-fence", "ignores the fence")],
            ),
            millis("session_ttl_ms", "CP session TTL", "Hazelcast's default is 300 s; shorter here so the story fits.", "30000", (10_000, 300_000)),
            millis("pause_start_ms", "Pause starts at", "When A's GC pause begins.", "7000", (0, 60_000)),
            millis("pause_ms", "Pause length", "How long A stays frozen.", "45000", (0, 400_000)),
        ],
    }
}

/// Whether A writes after B's first write has reached the storage: it does whenever it wakes
/// with its session gone.
fn story(params: &Params) -> Option<bool> {
    let [ttl, start, pause] = ["session_ttl_ms", "pause_start_ms", "pause_ms"].map(|k| int::<u64>(params, k));
    // A freezes after its first heartbeat (the expiry below counts from it) and before the
    // second.
    if start < HEARTBEAT_MS + CLOSE_CALL_MS || start + CLOSE_CALL_MS > STEP_MS * 2 {
        return None;
    }
    let expiry = HEARTBEAT_MS + ttl;
    // The session ends by `A_GRANT_BY_MS` after that (the heartbeats count from A's grant).
    // Woken after that, A writes on: even when it wakes before B has written, a later step of
    // A's lands after B's first write (asserted below).
    let session_gone = expiry + A_GRANT_BY_MS;
    let wake = start + pause;
    wake_verdict(wake > session_gone + CLOSE_CALL_MS, wake, expiry)
}

/// A froze inside step 2. Its refused heartbeat reaches only the library, so on waking it
/// writes step 2 and then each later step a step apart; B, asking every `RETRY_MS`, holds the
/// lock a round trip after its next try after the session ends, and writes a step later. So
/// A's last write, `STEPS - 2` steps after it wakes, lands after B's first.
const _: () =
    assert!((STEPS as u64 - 2) * STEP_MS > RETRY_MS + 2 * ROUND_TRIP_SLACK_MS + STEP_MS + CLOSE_CALL_MS);

pub fn expectation(params: &Params) -> Expectation {
    let checks = params.get("storage").is_none_or(|v| v == "checks-fence");
    let mut outcome = vec![("b_got_the_lock".to_string(), json!(true))];
    let mut verdicts = Vec::new();
    if checks {
        verdicts.push(("no-stale-write".to_string(), holds_if(true)));
        outcome.push(("stale_writes_applied".to_string(), json!(0)));
        if story(params) == Some(true) {
            outcome.push(("stale_writes_refused".to_string(), json!(1)));
        }
    } else if let Some(late) = story(params) {
        verdicts.push(("no-stale-write".to_string(), holds_if(!late)));
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let checks = params.get("storage").is_none_or(|v| v == "checks-fence");
    let ttl: u64 = int(params, "session_ttl_ms");
    let (mut setup, cast) = build(ServicePlan {
        server: ServerConfig {
            flavour: Flavour::Hazelcast,
            lease_ms: ttl,
            lock_delay_ms: 0,
            horizon_ms: 900_000,
        },
        numbers_issued: 40,
        server_name: "cp-group",
        check: if checks { Check::Highest } else { Check::None },
        properties: vec![ServiceProperty::NoStaleWrite],
    });
    let job = |start| {
        let mut c = client(cast, Flavour::Hazelcast, start);
        c.renew_every_ms = HEARTBEAT_MS;
        c.steps = STEPS;
        c.step_ms = STEP_MS;
        c.sends_number = true;
        c.horizon_ms = 900_000;
        c
    };
    place_clients(&mut setup, cast, job(A_START_MS), job(B_START_MS));
    script_pause_of_a(&mut setup, params, cast);
    beats(&mut setup, checks, ttl, story(params), cast);
    setup
}

/// `late` is the forecast of `story`. `Some(true)`: the story happens as the beats tell it (A
/// frozen while holding fence 41 until past its session). `Some(false)`: A wakes with its
/// session open, and B locks after A lets go. `None`: only A's lock and its pause are told,
/// without the numbers and the takeover they may not have.
fn beats(setup: &mut Setup, checks: bool, ttl_ms: u64, late: Option<bool>, cast: ServiceCast) {
    let told = late == Some(true);
    beat_either(
        setup,
        "a-locks",
        told,
        [
            ("lockAndGetFence() gives A fence 41", "The CP group commits A's acquisition through Raft and returns fence 41. A's CP session is kept alive by a heartbeat every 5 s."),
            ("A takes the FencedLock", "The CP group commits A's acquisition through Raft, and lockAndGetFence() returns a fence. A's CP session is kept alive by a heartbeat every 5 s."),
        ],
        move |n, _| acquired(n, cast.a),
    );
    beat_either(
        setup,
        "a-freezes",
        told,
        [
            (
                "A freezes in a GC pause",
                "A stop-the-world pause: no heartbeats, no writes. A still believes it holds the lock.",
            ),
            (
                "A freezes in a GC pause",
                "A stop-the-world pause: no heartbeats and no writes while it lasts.",
            ),
        ],
        move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == cast.a),
    );
    if late == Some(false) {
        // A wakes before its session could have expired.
        setup.beat(
            "a-wakes-in-time",
            "A wakes with its session still open",
            "The pause was shorter than the session TTL: the CP group still counts A's session, its next heartbeat is accepted and the lock is still A's.",
            move |_, step| step.kind == EventKind::Resume && step.acted(cast.a),
        );
        setup.beat(
            "b-after-a",
            "B gets the lock once A lets go",
            "A finishes its steps and unlocks; only then does B's lockAndGetFence() return, with a higher fence. One holder at a time throughout.",
            move |n, _| acquired(n, cast.b),
        );
    }
    if !told {
        return;
    }
    setup.beat(
        "session-expires",
        "A's CP session expires",
        &format!("No heartbeat for the session TTL ({}): the CP group closes A's session and frees its lock, a decision a majority of the group commits.", seconds(ttl_ms)),
        move |n, step| lock_lapsed(n, step, cast),
    );
    setup.beat(
        "b-locks",
        "B gets fence 42 and writes",
        "B's lockAndGetFence() returns 42, higher than any fence before it. B writes with it.",
        move |n, _| wrote_at_storage(n, cast, cast.b),
    );
    beat_either(
        setup,
        "a-late-write",
        checks,
        [
            (
                "A's write with fence 41 is refused",
                "The storage has seen 42; 41 is lower, so it refuses. A learns it lost the lock and stops. The lock service admitted in its API that a lock can be lost; the storage did the rest.",
            ),
            (
                "A's write with fence 41 is applied",
                "The fence came with the lock, but the storage never compares it. A number nobody checks protects nothing.",
            ),
        ],
        move |n, _| {
            n.live::<GuardedResource>(cast.storage).is_some_and(|r| {
                let mut b_wrote = false;
                r.durable.writes.iter().any(|w| {
                    b_wrote |= w.writer == cast.b;
                    b_wrote && w.writer == cast.a
                })
            })
        },
    );
}
