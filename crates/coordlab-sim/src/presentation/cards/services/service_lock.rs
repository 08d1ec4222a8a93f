//! The cards of the named lock services: the lock server ([`LockServer`]) and the resource it guards ([`GuardedResource`]).

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::time::format_duration;
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::services::service_lock::{Check, GuardedResource, LockServer};

impl Card for LockServer {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let now = view.local_now_us;
        let word = self.config.flavour.number_word();
        let last = format!("last {word} {}", self.durable.last_number);
        match &self.durable.holder {
            Some(h) => {
                // Run out by the server's clock and not yet lapsed: the instant of its timer,
                // or past the point where the run stops watching.
                let state = match h.expires_at_us.checked_sub(now) {
                    Some(left) if left > 0 => card::Lease::Left(left),
                    _ => card::Lease::Expired,
                };
                card::lease(state.word(), view.name(h.node), word, h.number, state)
            }
            None if now < self.durable.delay_until_us => Summary::new("lock-delay", Tone::Waiting)
                .detail(format!(
                    "refuses all for {}",
                    format_duration(self.durable.delay_until_us - now)
                ))
                .detail(last),
            None => Summary::new("free", Tone::Quiet).detail(last),
        }
    }
}

impl Card for GuardedResource {
    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        let d = &self.durable;
        let applied = d.writes.iter().filter(|w| w.accepted).count();
        let refused = d.writes.len() - applied;
        let s = match d.writes.last() {
            Some(w) if !w.accepted => Summary::new("refused", Tone::Failed),
            _ => Summary::new("accepting", Tone::Quiet),
        };
        let s = s.badge("writes", applied);
        let s = match self.check {
            Check::Highest => s.badge("highest", d.highest),
            Check::None => s.detail("checks nothing"),
        };
        if refused > 0 {
            s.detail(format!("writes refused: {refused}"))
        } else {
            s
        }
    }
}
