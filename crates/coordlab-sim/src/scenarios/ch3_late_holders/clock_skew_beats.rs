//! The beats of `clock-skew`. Which story a run tells follows from its forecast: two holders
//! (the clock step or an exaggerated drift keeps A working past the store's expiry, and the
//! fence catches A's late write or not), or one holder (A stops in time, by its own clock
//! or by its margin).

use super::clock_skew::{Story, REAL_DRIFT_PPM};
use crate::kernel::beats::Step;
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::presentation::durations::seconds;
use crate::protocols::job::Phase;
use crate::protocols::lease::fenced_resource::FencedResource;
use crate::protocols::lease::lease_store::LeaseStore;
use crate::protocols::lease::lease_worker::LeaseWorker;
use crate::scenarios::lease_setup::{LeasePair, OPENING_BALANCE};

/// The balance once every step is debited exactly once.
const DONE_ONCE: i64 = OPENING_BALANCE - 60;

fn worker<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a LeaseWorker> {
    n.live::<LeaseWorker>(id)
}

fn holds(n: &Nodes<'_>, id: NodeId) -> bool {
    worker(n, id).is_some_and(|w| w.belief.is_some())
}

fn writes(n: &Nodes<'_>, ledger: NodeId, id: NodeId, accepted: bool) -> u32 {
    n.live::<FencedResource>(ledger).map_or(0, |l| {
        l.durable
            .writes
            .iter()
            .filter(|w| w.worker == id && w.accepted == accepted)
            .count() as u32
    })
}

fn balance(n: &Nodes<'_>, ledger: NodeId) -> Option<i64> {
    n.live::<FencedResource>(ledger).map(|l| l.durable.balance)
}

/// The store's clock has passed the expiry of A's grant.
fn store_expired_a(n: &Nodes<'_>, cast: LeasePair) -> bool {
    let store_now = n.local_now_us.get(cast.store.index()).copied().unwrap_or(0);
    n.live::<LeaseStore>(cast.store).is_some_and(|s| {
        s.durable
            .rows
            .values()
            .any(|r| r.owner == Some(cast.a) && store_now >= r.expires_at_us)
    })
}

/// True once `count` has grown past its value when the beat started being checked.
fn grows(count: impl Fn(&Nodes<'_>) -> u32 + 'static) -> impl FnMut(&Nodes<'_>, &Step<'_>) -> bool + 'static {
    let mut base = None;
    move |n, _| {
        let now = count(n);
        now > *base.get_or_insert(now)
    }
}

/// "3 ms" or "6 s": how far a clock drifting `ppm` strays over the 30 s lease.
fn strays(ppm: i64) -> String {
    let us = ppm.unsigned_abs() * 30;
    if us < 1_000_000 {
        format!("{} ms", us.div_ceil(1_000))
    } else {
        seconds(us / 1_000)
    }
}

pub(super) fn beats(setup: &mut Setup, story: &Story, cast: LeasePair) {
    let a = cast.a;
    let d = story.drift_ppm;
    if d != 0 {
        let way = if d < 0 { "slow" } else { "fast" };
        let title = format!("A's clock runs {} ppm {way}: {} per lease", d.abs(), strays(d));
        let text = if d.abs() <= REAL_DRIFT_PPM {
            format!("Real quartz: worker-A's clock strays {} over its 30 s lease. Drift this small is not what breaks a lease.", strays(d))
        } else {
            format!("Far beyond real quartz (±{REAL_DRIFT_PPM} ppm): worker-A's clock strays {} over its 30 s lease, to show what rate alone would do.", strays(d))
        };
        setup.beat(
            "drift",
            &title,
            &text,
            move |_, s| matches!(s.fault, Some(Fault::ClockDrift { node, .. }) if *node == a),
        );
    }
    setup.beat(
        "granted",
        "A takes the lease: token 33 for 30 s",
        "worker-A will not renew. Before each 6 s step it asks its own clock whether the lease still holds; the store judges expiry by the store's clock.",
        move |n, _| holds(n, a),
    );
    let o = story.offset_ms;
    let safe = story.forecast.holders == Some(1);
    if o != 0 {
        let size = seconds(o.unsigned_abs());
        let (title, text) = if o < 0 {
            (
                format!("At 16 s NTP steps A's clock back {size}"),
                format!("NTP or a VM move sets worker-A's wall clock back {size}. A times its lease on it, so the lease looks {size} younger; a monotonic clock, which NTP never steps, would not."),
            )
        } else {
            (
                format!("At 16 s NTP steps A's clock forward {size}"),
                format!("A correction moves worker-A's clock {size} ahead at once. Every interval A measures across this moment now looks {size} longer, so A can only stop sooner than it would have, never later: at worst wasteful, never unsafe."),
            )
        };
        let beat = setup.beat(
            "clock-step",
            &title,
            &text,
            move |_, s| matches!(s.fault, Some(Fault::ClockJump { node, .. }) if *node == a),
        );
        if let (true, Some(m), true) = (o < 0, story.margin_ms, safe) {
            beat.ask(
                &format!("worker-A's clock now says {size} less time has passed than really has, and A keeps a {} margin. Will A still be working when the store expires its lease?", seconds(m)),
                &[
                    &format!("Yes: it thinks it has {size} more than it has"),
                    &format!("No: the margin is larger than the {size} error"),
                ],
                1,
                "A finishes its work a margin before the lease ends by its own clock; a smaller error only eats into the margin.",
            );
        }
    }
    if safe {
        one_holder(setup, story, cast);
    } else {
        two_holders(setup, story, cast);
    }
}

/// A stops in time; B takes over alone and finishes.
fn one_holder(setup: &mut Setup, story: &Story, cast: LeasePair) {
    let LeasePair {
        a, b, sink: ledger, ..
    } = cast;
    let (title, text) = match story.margin_ms {
        Some(m) => (
            format!("A stops: a step would cut into its {} margin", seconds(m)),
            format!("By its own clock a 6 s step would end within {} of the lease's end, so worker-A stops and leaves the rest to the next holder. The margin is larger than its clock's error.", seconds(m)),
        ),
        None if story.offset_ms == 0 => (
            "A's own clock says the lease is over: it stops".to_string(),
            "worker-A's clock agrees with the store's within milliseconds, so it stops before the next step.".to_string(),
        ),
        None => (
            "A's own clock says the lease is over: it stops".to_string(),
            format!(
                "By worker-A's own clock, {} {} the store's, the next step would end after the lease: it stops.",
                seconds(story.offset_ms.unsigned_abs()),
                if story.offset_ms > 0 { "ahead of" } else { "behind" }
            ),
        ),
    };
    setup.beat("a-stops", &title, &text, move |n, _| {
        worker(n, a).is_some_and(|w| w.phase == Phase::Stopped)
    });
    setup.beat(
        "takeover",
        "B takes over with token 34, alone",
        "The store's expiry has passed and B's poll gets the lease with token 34. It reads how far the job got and carries on from there.",
        move |n, _| holds(n, b),
    );
    setup.beat(
        "finished",
        "B finishes: every step debited once",
        "One holder at a time: the ledger took each of the six ₹10 steps exactly once.",
        move |n, _| worker(n, b).is_some_and(|w| w.job.finished) && balance(n, ledger) == Some(DONE_ONCE),
    );
}

/// A keeps working past the store's expiry; B takes over; A's late write is applied or
/// refused.
fn two_holders(setup: &mut Setup, story: &Story, cast: LeasePair) {
    let LeasePair {
        a, b, sink: ledger, ..
    } = cast;
    let why = if story.offset_ms < 0 {
        "its clock was set back"
    } else {
        "its clock runs slow"
    };
    setup.beat(
        "expired",
        "The store expires the lease; A thinks it has time",
        &format!("By the store's clock the 30 s are up. By worker-A's clock they are not, because {why}, so A carries on."),
        move |n, _| store_expired_a(n, cast) && holds(n, a),
    );
    let takeover = setup.beat(
        "takeover",
        "B takes over with token 34: two holders",
        "B's poll finds the lease expired and gets token 34, while worker-A still believes it holds the lease with 33.",
        move |n, _| holds(n, b) && holds(n, a),
    );
    match story.forecast.double_debit {
        Some(true) => {
            takeover.ask(
                "A's next write carries token 33 and reaches the ledger before B has written anything. What does the ledger do?",
                &["Refuses it: 34 is newer", "Holds it until B writes", "Applies it: the highest token it has seen is 33"],
                2,
                "The ledger compares with the highest token it has seen, and 34 has not reached it yet.",
            );
            setup.beat(
                "stale-applied",
                "A's stale write is applied",
                "The ledger takes worker-A's token-33 write: it has not seen 34. B read the job's progress before this write landed.",
                grows(move |n| writes(n, ledger, a, true)),
            );
            setup.beat(
                "twice",
                "B does the step again: debited twice",
                "B writes the same step with token 34 and the ledger applies it too. The clock step cost ₹10, fence and all.",
                move |n, _| balance(n, ledger).is_some_and(|b| b < DONE_ONCE),
            );
        }
        Some(false) => {
            setup.beat(
                "b-writes",
                "B writes with token 34",
                "B's first write raises the highest token the ledger has seen to 34.",
                grows(move |n| writes(n, ledger, b, true)),
            );
            setup.beat(
                "refused",
                "A's late write is refused: 33 < 34",
                "The ledger has seen 34, so the predicate refuses worker-A's write and A aborts. The fence caught what the clock got wrong.",
                grows(move |n| writes(n, ledger, a, false)),
            );
        }
        None => {
            setup.beat(
                "done",
                "The job completes",
                "Count the debits: whether A's late write landed depends on when it reached the ledger.",
                move |n, _| {
                    [a, b]
                        .iter()
                        .any(|w| worker(n, *w).is_some_and(|w| w.job.finished))
                },
            );
        }
    }
}
