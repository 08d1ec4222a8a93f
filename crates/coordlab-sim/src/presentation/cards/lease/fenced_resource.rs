//! The card of the fenced resource ([`FencedResource`]): its highest token and its writes.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::lease::fenced_resource::{FencedResource, LedgerIntro, ResourceDurable, WriteRecord};

impl Card for FencedResource {
    fn durable_summary(_intro: &LedgerIntro, d: &ResourceDurable, _view: &ViewCtx<'_>) -> Summary {
        card::fit_badge(
            card::down("the row on disk").badge("balance", format!("₹{}", d.balance)),
            "highest",
            &d.last_token.to_string(),
        )
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let d = &self.durable;
        let last = d.writes.last();
        let s = match last {
            Some(w) if !w.accepted => Summary::new("refused", Tone::Failed),
            _ => Summary::new("accepting", Tone::Quiet),
        };
        let mut s = s.badge("balance", format!("₹{}", d.balance));
        s = match d.last_token.0 {
            0 => s.detail("no token seen yet"),
            _ => card::fit_badge(s, "highest", &d.last_token.to_string()),
        };
        if let Some(w) = last {
            let who = view.name(w.worker);
            s = s.detail(match (w.accepted, w.carries_no_token(), w.checked) {
                (false, _, _) => format!("refused {who} #{}", w.token),
                (true, true, _) => format!("applied {who}, no token"),
                (true, false, false) if w.token < w.highest_before => {
                    format!("stale #{} landed", w.token)
                }
                (true, false, false) => format!("{who} #{} unchecked", w.token),
                (true, false, true) => format!("applied {who} #{}", w.token),
            });
        }
        let refused = d.writes.iter().filter(|w| !w.accepted).count();
        if refused > 0 {
            s = s.minor(format!("writes refused: {refused}"));
        }
        s.minor(format!("steps done: {}", d.steps_done))
    }
}

impl WriteRecord {
    /// The token as a table shows it: `no token`, `33`, or `33 (unchecked)`.
    pub fn token_text(&self) -> String {
        match (self.checked, self.carries_no_token()) {
            (_, true) => "no token".to_string(),
            (false, false) => format!("{} (unchecked)", self.token),
            (true, false) => self.token.to_string(),
        }
    }
}
