//! `zombie-worker`'s story in beats: A acquires (33) → A freezes → the lease expires → B
//! takes over (34) → B writes → A wakes (a question: what does the ledger do?) → A's write
//! is refused or lands. Each fencing variant tells its own ending; `first-write-only` freezes
//! A before its first write, so its fenced step 1 is refused and its unfenced step 2 lands.

use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::Nodes;
use crate::presentation::durations::seconds;
use crate::protocols::job::Phase;
use crate::protocols::lease::lease_worker::LeaseWorker;
use crate::scenarios::lease_setup::LeasePair;
use crate::scenarios::property_library::{ledger_row, step_applied_twice};
use crate::trace::EventKind;

/// The token `worker` believes it holds, if any.
fn token(n: &Nodes<'_>, worker: NodeId) -> Option<u64> {
    n.live::<LeaseWorker>(worker)?.belief.map(|b| b.token.0)
}

/// How many of A's writes have reached the ledger.
fn writes_by_a(n: &Nodes<'_>, c: LeasePair) -> usize {
    ledger_row(n, c.sink).map_or(0, |r| r.writes.iter().filter(|w| w.worker == c.a).count())
}

/// The story's timing, read from the parameters: the TTL, when A freezes and for how long.
/// `steps_before` is how many steps A has written when it freezes; `None` where its freeze
/// falls so near a step's end that A's start jitter decides.
#[derive(Clone, Copy, Debug)]
pub(super) struct Timing {
    pub ttl_ms: u64,
    pub pause_start_ms: u64,
    pub pause_ms: u64,
    pub step_ms: u64,
    /// Whether the zombie story happens at all (A frozen past its TTL while B takes over).
    pub story: bool,
}

/// A's job fires within this long of the start, so a step boundary is this uncertain.
const A_START_JITTER_MS: u64 = 100;

impl Timing {
    fn steps_before(&self) -> Option<u64> {
        let early = self.pause_start_ms.saturating_sub(A_START_JITTER_MS) / self.step_ms;
        (early == self.pause_start_ms / self.step_ms).then_some(early)
    }

    /// Whole seconds, rounded: the story's figures are approximate by A's start jitter.
    fn secs(ms: u64) -> u64 {
        (ms + 500) / 1_000
    }
}

/// The beats where A's freeze and the takeover fall as the story tells them; otherwise only
/// what every run shows: A's grant and its freeze.
pub(super) fn beats(setup: &mut Setup, variant: &str, c: LeasePair, t: Timing) {
    let LeasePair { store, a, b, .. } = c;
    let ttl = seconds(t.ttl_ms);
    setup.beat(
        "a-acquires",
        "A takes the lease with token 33",
        &format!("The store grants account-42 to worker A for {ttl}, with fencing token 33. A starts the four-step job."),
        move |n, _| token(n, a).is_some(),
    );
    let done = match (t.story, t.steps_before()) {
        (true, Some(done)) => done,
        _ => {
            if t.pause_ms > 0 {
                setup.beat(
                    "a-freezes",
                    "A freezes in a GC pause",
                    "A stop-the-world pause halts A. It cannot renew, and it still believes it holds the lease.",
                    move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == a),
                );
            }
            return;
        }
    };
    let first_only = variant == "first-write-only";
    // Only step 1 carries the predicate with first-write-only: A is refused only if the step
    // it writes on waking is step 1.
    let refuses = match variant {
        "write-predicate" | "fence-on-takeover" | "retry-after-reject" => true,
        "first-write-only" => done == 0,
        _ => false,
    };
    // The step A writes on waking: it froze inside this step's work.
    let a_step = done + 1;
    let freezes = if done == 0 {
        "A stop-the-world pause halts A before its first write. It cannot renew, and it still believes it holds the lease.".to_string()
    } else {
        format!("A stop-the-world pause halts A after step {done}. It cannot renew, and it still believes it holds the lease.")
    };
    setup.beat(
        "a-freezes",
        "A freezes in a GC pause",
        &freezes,
        move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == a),
    );
    let (frozen_from_us, frozen_until_us) =
        (t.pause_start_ms * MS_US, (t.pause_start_ms + t.pause_ms) * MS_US);
    setup.beat(
        "expires",
        "The lease expires by the store's clock",
        &format!("{ttl} after the grant the store lets token 33 lapse. Nobody tells A: it is still frozen."),
        move |n, step| {
            step.kind == EventKind::Timer
                && step.acted(store)
                && (frozen_from_us..frozen_until_us).contains(&n.now_us)
        },
    );
    let progress = if done == 0 {
        "B reads that no step is done and starts from step 1.".to_string()
    } else {
        format!("B reads that {done} step(s) are done and starts step {a_step}.")
    };
    let takeover = match variant {
        "write-predicate" => format!("The store gives account-42 to B with token 34. {progress} Until B's first write lands, the ledger has only seen 33."),
        "fence-on-takeover" => "The store gives account-42 to B with token 34. Before asking how far the job got, B stamps the ledger row with 34.".to_string(),
        _ => format!("The store gives account-42 to B with token 34. {progress}"),
    };
    let takeover = takeover.as_str();
    setup.beat(
        "b-takes-over",
        "B takes over with token 34",
        takeover,
        move |n, _| token(n, b).is_some(),
    );
    if variant == "fence-on-takeover" {
        setup.beat(
            "b-stamps",
            "The ledger row now carries 34",
            "B's stamp has raised the row's token to 34, and B has seen the answer. Only now does it read the progress: no write with 33 can land after this.",
            move |n, _| {
                ledger_row(n, c.sink).is_some_and(|r| r.last_token.0 > 33)
                    && n.live::<LeaseWorker>(b).is_some_and(|w| w.phase == Phase::ReadingProgress)
            },
        );
    }
    let (b_title, b_text) = if first_only && a_step == 1 {
        (
            "B writes step 1".to_string(),
            "B debits step 1 with the token predicate, the one fenced write of its job. The row now carries 34.".to_string(),
        )
    } else {
        (
            format!("B writes step {a_step}"),
            format!("B debits step {a_step} with token 34 in the write. The ledger applies it."),
        )
    };
    setup.beat("b-writes", &b_title, &b_text, move |n, _| {
        ledger_row(n, c.sink).is_some_and(|r| r.writes.iter().any(|w| w.worker == b && w.accepted))
    });
    let why = match variant {
        "none" => "The write carries 33, but nothing compares it: the ledger never asks who holds the lease.",
        "app-check" => {
            "A compared tokens in its own code before it froze. The write itself has no condition."
        }
        "first-write-only" if refuses => {
            "Step 1 is the one write with the token predicate, and 33 < 34, so no row matches. The steps after it carry no check."
        }
        "first-write-only" => "Only step 1 carried the token predicate, and A wrote it before the pause: this step carries no check.",
        _ => "The token is in the write's WHERE clause, and 33 < 34, so no row matches.",
    };
    let wake_ms = t.pause_start_ms + t.pause_ms;
    let wakes = format!(
        "The pause ends. A finishes step {a_step} and sends its debit with token 33, the token of a lease that expired about {} s ago.",
        Timing::secs(wake_ms.saturating_sub(t.ttl_ms))
    );
    let question = format!("A wakes and writes step {a_step} with token 33. What does the ledger do?");
    let twice = format!("Applies it: step {a_step} is debited a second time");
    setup
        .beat(
            "a-wakes",
            "A wakes up, still sure it holds the lease",
            &wakes,
            move |_, step| step.kind == EventKind::Resume && step.acted(a),
        )
        .ask(
            &question,
            &[
                "Refuses it: the row already carries 34",
                &twice,
                "Asks the lease store whether A still holds the lease",
            ],
            if refuses { 0 } else { 1 },
            why,
        );
    let (title, text) = match variant {
        "app-check" => (
            format!(
                "A's write lands: its check is {} s old",
                Timing::secs(wake_ms.saturating_sub(done * t.step_ms))
            ),
            format!("A's check passed before the pause; the write checks nothing. The ledger applies step {a_step} a second time."),
        ),
        "first-write-only" if refuses => (
            "A's step 1 is refused".to_string(),
            "The predicate on step 1 stops 33. But A's job loop logs the step as failed and moves on to step 2.".to_string(),
        ),
        "none" | "first-write-only" => (
            format!("A's write lands: step {a_step} is debited twice"),
            format!("Nothing checks token 33, so the ledger applies A's step {a_step} on top of B's. One step, two debits."),
        ),
        "retry-after-reject" => (
            "A's write with token 33 is refused".to_string(),
            "The fence works: the row holds 34. But A takes the refusal for a passing error and will try again.".to_string(),
        ),
        _ => (
            "A's write with token 33 is refused".to_string(),
            "WHERE last_token <= 33 matches no row: the ledger holds 34. A aborts, and the account is safe.".to_string(),
        ),
    };
    // A's first write to reach the ledger after it woke, refused or applied.
    let mut before_waking = None;
    setup.beat("a-write", &title, &text, move |n, _| {
        let written = writes_by_a(n, c);
        written > *before_waking.get_or_insert(written)
    });
    if variant == "retry-after-reject" {
        setup.beat(
            "a-reacquires",
            "A gets the lease back with token 35",
            &format!("Once B has finished and let go, A's retry wins the lease again. It resumes at step {a_step} without asking what happened."),
            move |n, _| token(n, a).is_some_and(|t| t > 34),
        );
        setup.beat(
            "twice",
            "The job runs twice",
            "A's token 35 is the newest, so the fence lets every write through: B's steps are debited again.",
            move |n, _| {
                ledger_row(n, c.sink).is_some_and(|r| {
                    r.writes
                        .iter()
                        .any(|w| w.worker == a && w.accepted && w.token.0 > 34)
                }) && step_applied_twice(n, c.sink)
            },
        );
    } else if first_only && refuses {
        setup.beat(
            "a-step-2-lands",
            "A's step 2 lands: only step 1 was fenced",
            "Step 2's write has no predicate, so the ledger applies 33 on top of 34: B's step 2 is debited again. Blocked at step one, free at the next.",
            move |n, _| step_applied_twice(n, c.sink),
        );
    } else if refuses {
        setup.beat(
            "b-finishes",
            "B finishes the job: ₹60",
            "Four steps, four debits of ₹10: the stale write changed nothing.",
            move |n, _| n.durable::<LeaseWorker>(b).is_some_and(|d| d.finished),
        );
    }
}
