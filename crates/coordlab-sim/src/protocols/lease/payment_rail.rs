//! A payment rail: an external system that knows nothing of fencing tokens. It can only
//! recognise a replay by an idempotency key, if the sender supplies one.

use super::lease_msg::LeaseMsg;
use crate::kernel::collections::VecSet;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, NoTimer, Participant};
use crate::presentation::narration::lease::payment_rail::RailSaw;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payment {
    pub from: NodeId,
    pub step: u32,
    pub amount: i64,
    pub key: Option<String>,
    pub applied: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RailDurable {
    pub seen_keys: VecSet<String>,
    pub payments: Vec<Payment>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentRail {
    pub durable: RailDurable,
}

impl RailDurable {
    /// Whether `key` was paid before (a replay); remembers it either way.
    pub fn replays(&mut self, key: Option<&String>) -> bool {
        key.is_some_and(|k| !self.seen_keys.insert(k.clone()))
    }

    /// Logs `payment`, writes the log down and answers its sender, in one step: the rail
    /// and the API pay the same way.
    pub fn settle<P: Participant<Durable = RailDurable>>(&mut self, ctx: &mut Ctx<'_, P>, payment: Payment) {
        let (to, step, applied) = (payment.from, payment.step, payment.applied);
        self.payments.push(payment);
        ctx.persist(self.clone());
        ctx.send(to, LeaseMsg::PayResult { step, applied });
    }
}

impl PaymentRail {
    /// A rail that has paid nothing yet.
    pub fn initial() -> RailDurable {
        RailDurable::default()
    }

    pub fn paid_total(&self) -> i64 {
        self.durable
            .payments
            .iter()
            .filter(|p| p.applied)
            .map(|p| p.amount)
            .sum()
    }
}

impl Participant for PaymentRail {
    type Msg = LeaseMsg;
    type Timer = NoTimer;
    type Durable = RailDurable;
    type Config = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(RailSaw::Up);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let who = ctx.name(from);
        if msg == LeaseMsg::ReadProgress {
            // The job's own payment log: the highest step it has an instruction for.
            let steps_done = self.durable.payments.iter().map(|p| p.step).max().unwrap_or(0);
            ctx.note(RailSaw::Progress { steps_done, who });
            ctx.send(from, LeaseMsg::Progress { steps_done });
            return;
        }
        let LeaseMsg::Pay {
            step,
            amount,
            idempotency_key,
        } = msg
        else {
            return;
        };
        let replay = self.durable.replays(idempotency_key.as_ref());
        ctx.note(match (idempotency_key.as_deref(), replay) {
            (Some(key), true) => RailSaw::Replay { key, who },
            (Some(key), false) => RailSaw::SentWithKey { amount, key },
            (None, _) => RailSaw::Sent { amount },
        });
        self.durable.settle(
            ctx,
            Payment {
                from,
                step,
                amount,
                key: idempotency_key,
                applied: !replay,
            },
        );
    }

    fn recover(_config: &(), _id: NodeId, durable: &RailDurable) -> Self {
        PaymentRail {
            durable: durable.clone(),
        }
    }
}
