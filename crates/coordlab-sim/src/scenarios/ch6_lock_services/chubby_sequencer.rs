//! `chubby-sequencer` (curriculum §7, with §5): Google's Chubby, where fencing tokens began.
//! A lock comes with a sequencer (lock name, mode, generation number); a holder's session is
//! kept alive by KeepAlives, and when it dies without releasing, the cell refuses the lock to
//! everyone for a lock-delay (the paper allows up to a minute). The cell holds each KeepAlive
//! until the lease nears its end and answers it then with a new lease; the client sends the
//! next one at once. So a client that dies still gets its held KeepAlive answered: its session
//! lasts about one more lease.
//!
//! Client A takes the lock (generation 7) and sends a write that the network holds for
//! `write_delay_ms`; then A crashes. Its session lease (12 s, renewed once more by the held
//! KeepAlive) runs out about 23 s in, the lock-delay passes,
//! B takes the lock with generation 8 and writes. A's delayed write then arrives. Lock-delay
//! only covers writes that arrive within it; the storage's sequencer check (`check=yes`, the
//! storage remembering the highest generation, as Chubby's `CheckSequencer()` would tell it)
//! refuses the late write however late it is.

use super::service_world::{acquired, lock_lapsed};
use super::service_world::{build, client, place_clients, ServiceCast, ServicePlan, ServiceProperty};
use super::service_world::{
    A_GRANT_BY_MS, A_START_MS, B_START_MS, CLOSE_CALL_MS, RETRY_MS, ROUND_TRIP_SLACK_MS,
};
use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::Nodes;
use crate::presentation::durations::seconds;
use crate::protocols::services::service_client::ServiceClient;
use crate::protocols::services::service_lock::{
    Check, Flavour, GuardedResource, ServerConfig, KEEPALIVE_EARLY_MS,
};
use crate::scenarios::common::beat_either;
use crate::scenarios::lease_setup::{choice, holds_if, int, millis};
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "chubby-sequencer";
const LEASE_MS: u64 = 12_000;
const STEP_MS: u64 = 3_000;
const HOLD_FROM_MS: u64 = 1_000;
const CRASH_AT_MS: u64 = 3_500;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a dead holder's write still in flight after it dies",
        "Compare Chubby's lock-delay with the storage checking the sequencer",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "What stops a delayed write that arrives after lock-delay has ended?",
        answers: &[
            "Nothing",
            "The client's timeout",
            "The storage checking the sequencer",
        ],
        correct: 2,
        why: "Lock-delay only buys time; a check at the storage refuses the write whenever it arrives.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§7",
        title: "Chubby: sequencer and lock-delay",
        summary: "A's write is stuck in the network when A dies. Chubby's lock-delay keeps the lock free for a while; only the storage checking the sequencer stops a write that arrives later still.",
        params: vec![
            choice(
                "check",
                "Storage checks the sequencer",
                "Whether the storage refuses a generation lower than one it has seen.",
                &[("no", "no"), ("yes", "yes")],
            ),
            millis("lock_delay_ms", "Lock-delay", "How long the cell refuses the lock after a holder's session dies.", "60000", (0, 60_000)),
            millis("write_delay_ms", "A's write delayed by", "How long the network holds A's write.", "90000", (0, 300_000)),
        ],
    }
}

/// Whether A's late write lands after B's first write with no check: `Some(true)` if it
/// does in every seed, `Some(false)` if it arrives before B can write, `None` near the edge.
fn late_enough(params: &Params) -> Option<bool> {
    let delay: u64 = int(params, "lock_delay_ms");
    let arrives = HOLD_FROM_MS + int::<u64>(params, "write_delay_ms");
    if arrives < CRASH_AT_MS {
        return Some(false);
    }
    // A's held KeepAlive is answered just before its first lease ends, with one more lease.
    let expiry = 2 * LEASE_MS - KEEPALIVE_EARLY_MS;
    let b_first_write_min = expiry + delay + STEP_MS;
    // A's lease is timed from its grant, which may come as late as A_GRANT_BY_MS; once the
    // lock-delay is over, B's next ask (and its grant) comes within a retry interval.
    let b_first_write_max = expiry + A_GRANT_BY_MS + delay + RETRY_MS + ROUND_TRIP_SLACK_MS + STEP_MS;
    if arrives > b_first_write_max + CLOSE_CALL_MS {
        Some(true)
    } else if arrives + CLOSE_CALL_MS < b_first_write_min {
        Some(false)
    } else {
        None
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let mut outcome = vec![("b_got_the_lock".to_string(), json!(true))];
    let mut verdicts = Vec::new();
    let checks = params.get("check").is_some_and(|v| v == "yes");
    if checks {
        verdicts.push(("no-stale-write".to_string(), holds_if(true)));
        outcome.push(("stale_writes_applied".to_string(), json!(0)));
    } else if let Some(late) = late_enough(params) {
        verdicts.push(("no-stale-write".to_string(), holds_if(!late)));
        outcome.push(("stale_writes_applied".to_string(), json!(u32::from(late))));
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let checks = params.get("check").is_some_and(|v| v == "yes");
    let lock_delay_ms: u64 = int(params, "lock_delay_ms");
    let write_delay_ms: u64 = int(params, "write_delay_ms");
    let (mut setup, cast) = build(ServicePlan {
        server: ServerConfig {
            flavour: Flavour::Chubby,
            lease_ms: LEASE_MS,
            lock_delay_ms,
            horizon_ms: 400_000,
        },
        numbers_issued: 6,
        server_name: "chubby-cell",
        check: if checks { Check::Highest } else { Check::None },
        properties: vec![ServiceProperty::NoStaleWrite],
    });
    let job = |start| {
        let mut c = client(cast, Flavour::Chubby, start);
        c.steps = 2;
        c.step_ms = STEP_MS;
        c.sends_number = true;
        c.horizon_ms = 400_000;
        c
    };
    place_clients(&mut setup, cast, job(A_START_MS), job(B_START_MS));
    if write_delay_ms > 0 {
        setup.script(
            HOLD_FROM_MS * MS_US,
            Fault::HoldLink {
                from: cast.a,
                to: cast.storage,
            },
        );
        setup.script(
            (HOLD_FROM_MS + write_delay_ms) * MS_US,
            Fault::ReleaseLink {
                from: cast.a,
                to: cast.storage,
            },
        );
    }
    setup.script(CRASH_AT_MS * MS_US, Fault::Crash { node: cast.a });
    beats(&mut setup, params, cast);
    setup
}

/// The beats follow where A's write is: held past A's crash and past B's grant (the story
/// the scenario is named for), or landed earlier, when lock-delay outlasted it.
fn beats(setup: &mut Setup, params: &Params, cast: ServiceCast) {
    let checks = params.get("check").is_some_and(|v| v == "yes");
    let lock_delay_ms: u64 = int(params, "lock_delay_ms");
    let write_delay_ms: u64 = int(params, "write_delay_ms");
    let late = late_enough(params);
    let out_at_crash = HOLD_FROM_MS + write_delay_ms > CRASH_AT_MS;
    setup.beat(
        "a-locks",
        "A takes the lock: sequencer generation 7",
        "The cell grants the lock in A's session and hands A a sequencer: the lock's name, exclusive mode, generation 7. A's library sends a KeepAlive; the cell holds it until the 12 s lease nears its end, then answers with a new lease.",
        move |n, _| acquired(n, cast.a),
    );
    beat_either(
        setup,
        "a-writes",
        write_delay_ms > 0,
        [
            (
                "A's write is stuck in the network",
                "A sends its write with generation 7. The network holds it: a slow path, a retransmission queue.",
            ),
            ("A writes with generation 7", "A sends its write with generation 7; nothing holds it up."),
        ],
        move |n, _| n.live::<ServiceClient>(cast.a).is_some_and(|c| c.steps_written >= 1),
    );
    setup.beat(
        "a-dies",
        "A crashes without releasing",
        if out_at_crash {
            "A's process dies. The cell still answers the KeepAlive it holds, near the lease's end, granting one more lease; no next KeepAlive comes. A's write is still out there."
        } else {
            "A's process dies. The cell still answers the KeepAlive it holds, near the lease's end, granting one more lease; no next KeepAlive comes. A's write has already landed."
        },
        move |_, step| matches!(step.fault, Some(Fault::Crash { node }) if *node == cast.a),
    );
    let lapse = if lock_delay_ms > 0 {
        format!("The session's lease runs out. The holder did not release the lock, so the cell refuses it to everyone for the lock-delay of {}: time for A's stray messages to drain.", seconds(lock_delay_ms))
    } else {
        "The session's lease runs out. With no lock-delay the lock is free at once.".to_string()
    };
    setup.beat("session-ends", "A's session ends", &lapse, move |n, step| {
        lock_lapsed(n, step, cast)
    });
    let b_text = match late {
        Some(true) => "The cell grants B the lock with a new sequencer, generation 8. B writes with it. A's write with generation 7 is still on its way.",
        Some(false) => "The cell grants B the lock with a new sequencer, generation 8. A's write with generation 7 lands before B writes anything, so it overwrites nothing of B's.",
        None => "The cell grants B the lock with a new sequencer, generation 8. A's write with generation 7 arrives close to now: before or after B's first write, timing decides.",
    };
    let b_locks = setup.beat(
        "b-locks",
        "B takes the lock: generation 8",
        b_text,
        move |n, _| acquired(n, cast.b),
    );
    if late == Some(true) {
        b_locks.ask(
            "When A's write with generation 7 finally arrives, what happens?",
            &["It is applied", "It is refused"],
            u8::from(checks),
            if checks {
                "The storage compares generations: 7 is below the 8 it has seen."
            } else {
                "Nothing compares generations, and lock-delay is long over."
            },
        );
    }
    beat_either(
        setup,
        "a-write-arrives",
        checks,
        [
            (
                "A's late write is refused",
                "The storage has seen generation 8; A's write carries 7. Checking the sequencer, like Chubby's CheckSequencer(), needs no timing assumption at all.",
            ),
            (
                "A's late write arrives",
                "The storage does not look at the sequencer. Lock-delay guarded the lock for a while; this write came later than any delay can cover.",
            ),
        ],
        move |n, _| a_wrote_after_b(n, cast),
    );
}

/// Whether a write of A's reached the storage after one of B's.
fn a_wrote_after_b(n: &Nodes<'_>, cast: ServiceCast) -> bool {
    n.live::<GuardedResource>(cast.storage).is_some_and(|r| {
        r.durable
            .writes
            .iter()
            .skip_while(|w| w.writer != cast.b)
            .any(|w| w.writer == cast.a)
    })
}
