//! What a lock service (Redisson on Redis, a Chubby cell, Hazelcast's CP subsystem) and the
//! storage its holders write to saw, and the sentences they read as.

use crate::presentation::durations::seconds;
use crate::protocols::services::service_lock::Flavour;

/// One thing a lock server saw; `who` is the client it concerns.
pub enum LockServerSaw<'a> {
    /// The holder's lease ran out; `delay_ms` is the lock-delay that follows, 0 for none.
    Lapsed {
        flavour: Flavour,
        who: &'a str,
        number: u64,
        delay_ms: u64,
    },
    /// Chubby answers the KeepAlive it held, with a new lease.
    KeepAliveAnswered {
        who: &'a str,
        lease_ms: u64,
    },
    Granted {
        flavour: Flavour,
        who: &'a str,
        number: u64,
        lease_ms: u64,
    },
    InLockDelay {
        who: &'a str,
        left_ms: u64,
    },
    RenewalRefused {
        who: &'a str,
        number: u64,
        flavour: Flavour,
    },
    /// A release; `published` when the unlock script woke subscribed waiters.
    Released {
        who: &'a str,
        published: bool,
    },
}

/// How the storage judged one write; `word` is what the service calls its numbers.
pub enum GuardedResourceSaw<'a> {
    Lower {
        word: &'a str,
        highest: u64,
        who: &'a str,
        number: u64,
    },
    Highest {
        word: &'a str,
        number: u64,
        who: &'a str,
        step: u32,
    },
    NoNumber {
        who: &'a str,
        step: u32,
    },
    /// Applied unchecked; `stale` when a later grant's holder has already written.
    Unchecked {
        who: &'a str,
        step: u32,
        stale: bool,
    },
}

impl From<LockServerSaw<'_>> for String {
    fn from(saw: LockServerSaw<'_>) -> String {
        use LockServerSaw::*;
        match saw {
            Lapsed {
                flavour,
                who,
                number,
                delay_ms,
            } => {
                let word = flavour.number_word();
                match (flavour, delay_ms > 0) {
                    (Flavour::Redisson, _) => format!(
                        "The key's TTL runs out: Redis deletes the lock of {who}. No renewal came in time; Redis cannot tell a frozen process from a dead one."
                    ),
                    (Flavour::Chubby, true) => format!(
                        "{who}'s session lease runs out without a KeepAlive. The cell frees the lock ({word} {number}) but, because the holder did not release it, refuses it to everyone for the lock-delay of {}.",
                        seconds(delay_ms)
                    ),
                    (Flavour::Chubby, false) => format!(
                        "{who}'s session lease runs out without a KeepAlive. The cell frees the lock ({word} {number}); with no lock-delay, the next client may take it at once."
                    ),
                    (Flavour::Hazelcast, _) => format!(
                        "No heartbeat from {who} for the session TTL: the CP group closes its CP session, and with it the lock it held (fence {number}). A majority of the group agrees on this before it takes effect."
                    ),
                }
            }
            KeepAliveAnswered { who, lease_ms } => format!(
                "The cell has held {who}'s KeepAlive since it came in. With the lease about to end it replies, granting a new {} lease; {who}'s library sends the next KeepAlive at once.",
                seconds(lease_ms)
            ),
            Granted {
                flavour,
                who,
                number,
                lease_ms,
            } => {
                let lease = seconds(lease_ms);
                match flavour {
                    Flavour::Redisson => format!(
                        "Redis stores the lock for {who} with a {lease} TTL (Redisson's lockWatchdogTimeout). Redisson hands back no token: {who} gets only \"you have it\"."
                    ),
                    Flavour::Chubby => format!(
                        "The cell grants the lock to {who}, tied to its session (lease {lease}), and hands out a sequencer: lock name, exclusive mode, generation {number}."
                    ),
                    Flavour::Hazelcast => format!(
                        "The CP group commits the acquisition through Raft (a majority of its members log it) and lockAndGetFence() returns fence {number} to {who}, tied to its CP session (TTL {lease})."
                    ),
                }
            }
            InLockDelay { who, left_ms } => format!(
                "The lock is free but inside its lock-delay: the cell refuses {who}, and will refuse everyone for another {}.",
                seconds(left_ms)
            ),
            RenewalRefused {
                who,
                number,
                flavour,
            } => format!(
                "{who} asks to renew #{number}, but that grant is gone: the {} is refused.",
                flavour.renewal_word()
            ),
            Released {
                who,
                published: false,
            } => format!("{who} releases the lock; it is free at once."),
            Released {
                who,
                published: true,
            } => format!(
                "{who} releases the lock: the unlock script deletes the key and PUBLISHes on the lock's channel, waking every subscribed waiter at once."
            ),
        }
    }
}

impl From<GuardedResourceSaw<'_>> for String {
    fn from(saw: GuardedResourceSaw<'_>) -> String {
        use GuardedResourceSaw::*;
        match saw {
            Lower {
                word,
                highest,
                who,
                number,
            } => format!(
                "The storage has already seen {word} {highest}; {who}'s write carries {number}, which is lower. Refused: this holder's lock has passed to someone else."
            ),
            Highest {
                word,
                number,
                who,
                step,
            } => format!(
                "The storage has seen no {word} above {number}: it applies {who}'s step {step} and remembers {number}."
            ),
            NoNumber { who, step } => format!(
                "{who}'s write carries no number to check; the storage applies step {step}."
            ),
            Unchecked {
                who,
                step,
                stale: true,
            } => format!(
                "The storage applies {who}'s step {step}. It checks nothing, so it cannot know this writer's lock passed to someone else who has already written."
            ),
            Unchecked {
                who,
                step,
                stale: false,
            } => format!("The storage applies {who}'s step {step}; it checks nothing."),
        }
    }
}
