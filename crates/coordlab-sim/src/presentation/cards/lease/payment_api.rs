//! The card of the slow payment API ([`PaymentApi`]): the calls it is working on.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::protocols::lease::payment_api::PaymentApi;
use crate::protocols::lease::payment_rail::Payment;

impl Card for PaymentApi {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let sent: Vec<&Payment> = self.durable.payments.iter().filter(|p| p.applied).collect();
        let total: i64 = sent.iter().map(|p| p.amount).sum();
        let s = match self.calls.first() {
            Some(c) => {
                Summary::new("working", Tone::Holds).detail(format!("on {}'s call", view.name(c.from)))
            }
            None => Summary::new("idle", Tone::Quiet),
        };
        s.badge("payouts", sent.len())
            .badge("total", format!("₹{total}"))
            .minor("knows no tokens")
    }
}
