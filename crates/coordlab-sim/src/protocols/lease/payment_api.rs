//! A remote payment API that takes its time: each call is worked on for a while, and only
//! then is the money sent and the answer given. Its first call stalls for `stall_ms`; later
//! calls take `usual_ms`. It knows no tokens; like the rail ([`super::payment_rail`]) it can
//! only recognise a repeat by an idempotency key, checked when it pays, in the same step.

use super::lease_msg::LeaseMsg;
use super::payment_rail::{Payment, RailDurable};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::presentation::narration::lease::payment_api::PaymentApiSaw;

/// How long the API works on a call before it pays and answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiTiming {
    /// The first call it gets.
    pub stall_ms: u64,
    /// Every later call.
    pub usual_ms: u64,
}

/// A call being worked on; lost if the API crashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub id: u32,
    pub from: NodeId,
    pub step: u32,
    pub amount: i64,
    pub key: Option<String>,
    /// When it answers, by the API's clock.
    pub answers_at_us: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiTimer(pub u32);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentApi {
    pub timing: ApiTiming,
    pub durable: RailDurable,
    pub calls: Vec<Call>,
    received: u32,
}

impl Participant for PaymentApi {
    type Msg = LeaseMsg;
    type Timer = ApiTimer;
    type Durable = RailDurable;
    type Config = ApiTiming;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(PaymentApiSaw::Up {
            usual_ms: self.timing.usual_ms,
        });
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let LeaseMsg::Pay {
            step,
            amount,
            idempotency_key: key,
        } = msg
        else {
            return;
        };
        self.received += 1;
        let ms = if self.received == 1 {
            self.timing.stall_ms
        } else {
            self.timing.usual_ms
        };
        ctx.note(PaymentApiSaw::Starts {
            who: ctx.name(from),
            answer_ms: ms,
        });
        let id = self.received;
        ctx.set_timer(ApiTimer(id), ms * MS_US);
        let answers_at_us = ctx.local_now_us + ms * MS_US;
        self.calls.push(Call {
            id,
            from,
            step,
            amount,
            key,
            answers_at_us,
        });
    }

    /// Pays (unless the key was paid before) and answers, in one step.
    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, ApiTimer(id): ApiTimer) {
        let Some(at) = self.calls.iter().position(|c| c.id == id) else {
            return;
        };
        let c = self.calls.remove(at);
        let who = ctx.name(c.from);
        let d = &mut self.durable;
        let replay = d.replays(c.key.as_ref());
        let twice = !replay && d.payments.iter().any(|p| p.applied && p.step == c.step);
        let amount = c.amount;
        ctx.note(match (c.key.as_deref(), replay) {
            (Some(key), true) => PaymentApiSaw::PaidBefore { key, who },
            (Some(key), false) => PaymentApiSaw::SentWithKey { amount, who, key },
            (None, _) if twice => PaymentApiSaw::SentTwice { amount, who },
            (None, _) => PaymentApiSaw::Sent { amount, who },
        });
        d.settle(
            ctx,
            Payment {
                from: c.from,
                step: c.step,
                amount: c.amount,
                key: c.key,
                applied: !replay,
            },
        );
    }

    fn recover(timing: &ApiTiming, _id: NodeId, durable: &RailDurable) -> Self {
        PaymentApi {
            timing: *timing,
            durable: durable.clone(),
            calls: Vec::new(),
            received: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{sent, timers_set, Harness};
    use crate::protocols::lease::payment_rail::PaymentRail;

    const A: NodeId = NodeId(0);
    const B: NodeId = NodeId(1);

    fn api() -> Harness<PaymentApi> {
        let timing = ApiTiming {
            stall_ms: 15_000,
            usual_ms: 1_000,
        };
        let api = PaymentApi::recover(&timing, NodeId(2), &PaymentRail::initial());
        Harness::new(NodeId(2), api, &["worker-A", "worker-B", "payment-api"])
    }

    fn pay(key: Option<&str>) -> LeaseMsg {
        LeaseMsg::Pay {
            step: 1,
            amount: 10,
            idempotency_key: key.map(str::to_string),
        }
    }

    /// The API's answer to [`pay`]: whether step 1's money moved (`false`: a replay).
    fn paid_step_1(applied: bool) -> LeaseMsg {
        LeaseMsg::PayResult { step: 1, applied }
    }

    #[test]
    fn the_first_call_stalls_and_pays_only_when_it_is_done() {
        let mut api = api();
        let fx = api.deliver(A, pay(None));
        assert_eq!(timers_set(&fx), vec![(ApiTimer(1), 15_000 * MS_US)]);
        assert!(sent::<_, LeaseMsg>(&fx).is_empty() && api.node.durable.payments.is_empty());
        let fx = api.deliver(B, pay(None));
        assert_eq!(timers_set(&fx), vec![(ApiTimer(2), 1_000 * MS_US)]);
        let fx = api.fire(ApiTimer(2));
        assert_eq!(sent(&fx), vec![(B, paid_step_1(true))]);
        // Without a key the stalled call pays again when it finishes.
        let fx = api.fire(ApiTimer(1));
        assert_eq!(sent(&fx), vec![(A, paid_step_1(true))]);
        assert_eq!(api.node.durable.payments.iter().filter(|p| p.applied).count(), 2);
    }

    #[test]
    fn a_key_paid_before_is_answered_as_a_replay_and_pays_nothing() {
        let mut api = api();
        api.deliver(A, pay(Some("payout-42#1")));
        api.deliver(B, pay(Some("payout-42#1")));
        api.fire(ApiTimer(2));
        let fx = api.fire(ApiTimer(1));
        assert_eq!(sent(&fx), vec![(A, paid_step_1(false))]);
        let applied: Vec<bool> = api.node.durable.payments.iter().map(|p| p.applied).collect();
        assert_eq!(applied, vec![true, false]);
    }
}
