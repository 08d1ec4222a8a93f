//! The words participants' cards share (see [`Summary`]): one vocabulary for a worker doing a
//! job under a lock, for a store holding one, and for a node that is down, so that "holder"
//! or "backing off" means the same on every card of every chapter.
//!
//! Limits a card keeps so it reads from the back of a room: the word at most 12 characters
//! and two words, a badge's label 10 and its value 8, a detail 30 (the card-summaries test
//! holds every scenario to them).

use crate::kernel::time::format_duration;
use crate::kernel::view::{Summary, Tone};

/// The longest badge value a card draws.
pub const BADGE_VALUE_MAX: usize = 8;

/// `14.5 s left` — a countdown as a detail.
pub fn left(us: u64) -> String {
    format!("{} left", format_duration(us))
}

/// A name (a holder, a primary) or another figure as a large badge when it fits; a longer
/// one (`transfer-1`) goes among the details instead, whole.
pub fn fit_badge(s: Summary, label: &str, value: &str) -> Summary {
    if value.chars().count() <= BADGE_VALUE_MAX {
        s.badge(label, value)
    } else {
        s.detail(format!("{label} {value}"))
    }
}

/// Not started: its job has not fired yet.
pub fn idle() -> Summary {
    Summary::new("idle", Tone::Quiet).detail("waiting for the job")
}

/// Reaching for the lock or lease; `doing` says how (`asking for the lease`).
pub fn asking(doing: impl Into<String>) -> Summary {
    Summary::new("asking", Tone::Asking).detail(doing)
}

/// Queued behind someone else; `on` says on what (`watching n-3`).
pub fn waiting(on: impl Into<String>) -> Summary {
    Summary::new("waiting", Tone::Waiting).detail(on)
}

/// Told no, and will ask again.
pub fn backing_off() -> Summary {
    Summary::new("backing off", Tone::Waiting)
}

/// Holds the lock or lease, as far as it knows, and works: `doing` is the step
/// (`step 2: writing`). A token, if it has one, is the caller's badge.
pub fn holder(doing: impl Into<String>) -> Summary {
    Summary::new("holder", Tone::Holds).detail(doing)
}

/// `step 2: writing`.
pub fn step(step: u32, doing: &str) -> String {
    format!("step {step}: {doing}")
}

/// Giving the lock back.
pub fn releasing() -> Summary {
    Summary::new("releasing", Tone::Quiet)
}

pub fn done() -> Summary {
    Summary::new("done", Tone::Done)
}

/// Stopped short of finishing; `why` says what stopped it (`write refused`).
pub fn stopped(why: &str) -> Summary {
    Summary::new("stopped", Tone::Failed).detail(why)
}

/// Stopped trying; `why` says why (`no answer from store`).
pub fn gave_up(why: &str) -> Summary {
    Summary::new("gave up", Tone::Failed).detail(why)
}

/// A node that is down, with what it kept on disk as the first detail.
pub fn down(kept: impl Into<String>) -> Summary {
    Summary::new("down", Tone::Failed).detail(kept)
}

/// A worker that is down: whether its job is known to be done (`job done`, `job not done`).
pub fn down_with_job(finished: bool) -> Summary {
    down_with_job_as(finished, ["job done", "job not done"])
}

/// A worker that is down, saying in its own words whether its job is known to be done:
/// `[done, not_done]`.
pub fn down_with_job_as(finished: bool, [done, not_done]: [&str; 2]) -> Summary {
    down(if finished { done } else { not_done })
}

/// Where a lease record stands by the store's own clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lease {
    /// In force, with this much left.
    Left(u64),
    Expired,
    /// Let go by its holder; the record (and its counter) stays.
    Released,
}

impl Lease {
    /// The store's word for a lone lease record: `held`, `expired`, `free`.
    pub fn word(self) -> Summary {
        match self {
            Lease::Left(_) => Summary::new("held", Tone::Holds),
            Lease::Expired => Summary::new("expired", Tone::Failed),
            Lease::Released => Summary::new("free", Tone::Quiet),
        }
    }
}

/// A lease record on a store's card: while it is in force, its holder and `token_label`
/// (the store's word for its number) as badges and the time left as a minor detail; once it
/// has run out or been let go, whose it was.
pub fn lease(
    s: Summary,
    holder: &str,
    token_label: &str,
    token: impl std::fmt::Display,
    state: Lease,
) -> Summary {
    match state {
        Lease::Left(us) => fit_badge(s, "holder", holder)
            .badge(token_label, token)
            .minor(left(us)),
        Lease::Expired => s
            .badge(token_label, token)
            .detail(format!("{holder}'s lease expired")),
        Lease::Released => s
            .badge(token_label, token)
            .detail(format!("released by {holder}")),
    }
}

/// A count with its total: `2/5`.
pub fn of(n: impl std::fmt::Display, total: impl std::fmt::Display) -> String {
    format!("{n}/{total}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_name_becomes_a_detail_not_a_clipped_badge() {
        let s = fit_badge(Summary::new("held", Tone::Holds), "holder", "worker-A");
        assert_eq!(s.badges[0].value, "worker-A");
        let s = fit_badge(Summary::new("held", Tone::Holds), "holder", "replica-A");
        assert!(s.badges.is_empty());
        assert_eq!(s.details[0].text, "holder replica-A");
    }

    #[test]
    fn countdowns_read_as_people_write_them() {
        assert_eq!(left(14_500_000), "14.5 s left");
        assert_eq!(left(250_000), "250 ms left");
    }
}
