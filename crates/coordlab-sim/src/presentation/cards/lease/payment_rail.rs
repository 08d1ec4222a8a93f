//! The card of the payment rail ([`PaymentRail`]): whether it took the last payment or refused a replay.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::protocols::lease::payment_rail::PaymentRail;

impl Card for PaymentRail {
    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        let payments = &self.durable.payments;
        let sent = payments.iter().filter(|p| p.applied).count();
        let replays = payments.len() - sent;
        // It checks nothing but an idempotency key, when an instruction carries one.
        let s = match payments.last() {
            Some(p) if !p.applied => Summary::new("refused", Tone::Failed).detail("a replay: no money moved"),
            _ => Summary::new("accepting", Tone::Quiet),
        };
        let s = s
            .badge("payments", sent)
            .badge("total", format!("₹{}", self.paid_total()));
        let s = if replays > 0 {
            s.detail(format!("replays refused: {replays}"))
        } else {
            s
        };
        s.minor("knows no tokens")
    }
}
