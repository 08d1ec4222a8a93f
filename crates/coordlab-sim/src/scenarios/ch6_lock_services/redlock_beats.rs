//! The story of each `redlock` fault in beats, told by the clients', masters' and ledger's
//! state and by the scripted fault as it strikes.

use super::redlock::{RedlockCast, RedlockFault};
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::protocols::redis_locks::redlock_client::{Phase, RedlockClient};
use crate::scenarios::property_library::ledger_row;

fn client<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a RedlockClient> {
    n.live::<RedlockClient>(id)
}

fn believes(n: &Nodes<'_>, id: NodeId) -> bool {
    client(n, id).is_some_and(|c| c.believes_it_holds())
}

fn both_hold(n: &Nodes<'_>, c: RedlockCast) -> bool {
    believes(n, c.clients[0]) && believes(n, c.clients[1])
}

/// Some step of the job was debited by both clients.
fn debited_twice(n: &Nodes<'_>, c: RedlockCast) -> bool {
    ledger_row(n, c.ledger).is_some_and(|row| {
        row.writes.iter().any(|a| {
            a.accepted
                && a.worker == c.clients[0]
                && row
                    .writes
                    .iter()
                    .any(|b| b.accepted && b.worker == c.clients[1] && b.step == a.step)
        })
    })
}

/// The first beat of the variants where A cannot reach redis-4 and redis-5.
fn a_bare_majority(setup: &mut Setup, c: RedlockCast) {
    setup.beat(
        "a-three",
        "A locks redis-1, 2 and 3: a bare majority",
        "A cannot reach redis-4 or redis-5. Three OKs out of five are enough, with validity = TTL − time spent asking − drift.",
        move |n, _| believes(n, c.clients[0]),
    );
}

fn two_holders(setup: &mut Setup, c: RedlockCast, text: &'static str) {
    setup.beat(
        "two-holders",
        "Two clients each hold a majority",
        text,
        move |n, _| both_hold(n, c),
    );
}

fn double_debit(setup: &mut Setup, c: RedlockCast) {
    setup.beat(
        "double-debit",
        "Both debit the same step",
        "Redlock hands out no fencing token, so the ledger has nothing to check: the account is debited twice.",
        move |n, _| debited_twice(n, c),
    );
}

pub fn beats(setup: &mut Setup, fault: RedlockFault, c: RedlockCast) {
    match fault {
        RedlockFault::ClockJump => {
            a_bare_majority(setup, c);
            setup
                .beat(
                    "jump",
                    "redis-3's clock jumps 15 s ahead",
                    "Nothing crashed, but by redis-3's clock A's 10 s key is already past its expiry.",
                    move |_, s| matches!(s.fault, Some(Fault::ClockJump { .. })),
                )
                .ask(
                    "B now asks all five masters for the lock. What does redis-3 answer?",
                    &["nil: A holds it", "An error", "OK: by its clock A's key has expired"],
                    2,
                    "Expiry is judged by each master's own clock; redis-3's says A's key is gone, so SET NX succeeds.",
                );
            two_holders(
                setup,
                c,
                "B gets redis-3, 4 and 5: three OKs. A still counts on redis-1, 2 and 3, and both are working.",
            );
            double_debit(setup, c);
        }
        RedlockFault::RestartWithoutPersistence => {
            a_bare_majority(setup, c);
            setup
                .beat(
                    "restart",
                    "redis-3 restarts with no data",
                    "It was down for 0.1 s. Without persistence it comes back empty: A's key there is gone.",
                    move |_, s| matches!(s.fault, Some(Fault::Restart { .. })),
                )
                .ask(
                    "B now asks all five masters. How many OKs can it get?",
                    &["2: redis-4 and redis-5", "3: redis-3 forgot A's key", "None: A holds a majority"],
                    1,
                    "redis-3 restarted empty, so with redis-4 and redis-5 B has three OKs: a majority of its own.",
                );
            two_holders(
                setup,
                c,
                "B holds redis-3, 4 and 5; A still counts redis-3 among its three. One master has voted twice.",
            );
            double_debit(setup, c);
        }
        RedlockFault::DelayedRestart => {
            a_bare_majority(setup, c);
            setup
                .beat(
                    "crash",
                    "redis-3 crashes and stays down",
                    "It will come back empty, but only after longer than the TTL.",
                    move |_, s| matches!(s.fault, Some(Fault::Crash { .. })),
                )
                .ask(
                    "While redis-3 is down, can B get a majority?",
                    &["No: only redis-4 and redis-5 can say OK", "Yes: redis-3, 4 and 5", "Yes: A's keys have expired"],
                    0,
                    "A's keys on redis-1 and redis-2 are still alive and redis-3 does not answer: B has at most two OKs.",
                );
            setup.beat(
                "b-short",
                "B gets 2 of 5 and unlocks",
                "Short of a majority, B releases the keys it did get and tries again later.",
                move |n, _| client(n, c.clients[1]).is_some_and(|c| c.phase == Phase::BackingOff),
            );
            setup.beat(
                "a-done",
                "A finishes alone",
                "A's four debits land and it releases its keys. No one else held the lock meanwhile.",
                move |n, _| client(n, c.clients[0]).is_some_and(|c| c.phase == Phase::Done),
            );
            setup.beat(
                "b-turn",
                "B takes the lock in turn",
                "Delaying the restart past the TTL is what keeps this safe: by the time redis-3 is back empty, A's keys have expired anyway.",
                move |n, _| believes(n, c.clients[1]),
            );
        }
        RedlockFault::PauseBeforeCheck => {
            setup.beat(
                "asks",
                "A asks all five masters",
                "A notes its clock and sends SET NX PX to each; it needs three OKs.",
                move |n, _| client(n, c.clients[0]).is_some_and(|c| c.phase == Phase::Acquiring),
            );
            setup
                .beat(
                    "freeze",
                    "A freezes before any answer arrives",
                    "A stop-the-world pause of 12 s, longer than the 10 s TTL. The five OKs wait in its inbox.",
                    move |_, s| matches!(s.fault, Some(Fault::Pause { node, .. }) if *node == c.clients[0]),
                )
                .ask(
                    "A wakes 12 s later to five OKs. What does it do?",
                    &["Rejects the lock: no validity is left", "Works: it has a majority", "Waits for B to finish"],
                    0,
                    "Validity = TTL − time spent asking − drift is negative, so A unlocks all five and treats the lock as never held.",
                );
            setup.beat(
                "b-holds",
                "A's keys expire; B takes the lock",
                "Each master drops A's key by its own clock, and B gets five OKs.",
                move |n, _| believes(n, c.clients[1]),
            );
            setup.beat(
                "a-rejects",
                "A rejects its own lock",
                "The clock check catches a pause that happened while acquiring: one holder throughout.",
                move |n, _| client(n, c.clients[0]).is_some_and(|c| c.rejected_for_time > 0),
            );
        }
        RedlockFault::PauseAfterCheck => {
            setup.beat(
                "a-holds",
                "A holds all five masters",
                "Five OKs, validity 9.8 s by its clock. A checks the time before each step and starts step 1.",
                move |n, _| believes(n, c.clients[0]),
            );
            setup
                .beat(
                    "freeze",
                    "A freezes in the middle of step 1",
                    "A 12 s stop-the-world pause, after its check and longer than the 10 s TTL.",
                    move |_, s| matches!(s.fault, Some(Fault::Pause { node, .. }) if *node == c.clients[0]),
                )
                .ask(
                    "A is frozen for 12 s; its keys expire after 10 s. What happens when it wakes?",
                    &["It finishes step 1 under a lapsed lock", "It checks its clock and stops", "The ledger refuses its write"],
                    0,
                    "A checks before each step, not during one: it sends step 1's debit, and there is no token to refuse it by.",
                );
            two_holders(
                setup,
                c,
                "A's keys expired and B got five OKs. A, frozen, still believes the lock is its own.",
            );
            double_debit(setup, c);
            setup.beat(
                "a-stops",
                "A's check stops it at step 2",
                "Too late: the clock check runs between steps, and step 1 was already debited twice.",
                move |n, _| client(n, c.clients[0]).is_some_and(|c| c.phase == Phase::OutOfTime),
            );
        }
    }
}
