//! The card of a debit worker ([`DebitWorker`]): where its debit stands.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::amounts::rupees;
use crate::presentation::cards::card;
use crate::protocols::database::debit_worker::{DebitPlan, DebitStrategy, DebitWorker, Phase, WorkerDurable};

impl Card for DebitWorker {
    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        // Under `SELECT … FOR UPDATE` the row is its own from the read's answer to the commit.
        let locked = self.plan.strategy == DebitStrategy::RowLock;
        let tone = if locked { Tone::Holds } else { Tone::Quiet };
        let mut s = match &self.phase {
            Phase::Idle => card::idle(),
            Phase::Reading => Summary::new("reading", Tone::Quiet).detail(if locked {
                "SELECT … FOR UPDATE"
            } else {
                "SELECT the balance"
            }),
            Phase::Computing { read_balance, .. } => Summary::new("working", tone)
                .badge("read", rupees(*read_balance))
                .detail("computing the new balance"),
            Phase::Writing { new_balance } => Summary::new("writing", tone)
                .badge("read", rupees(new_balance + self.plan.amount))
                .badge("writes", rupees(*new_balance)),
            Phase::Committing { new_balance } => Summary::new("committing", tone)
                .badge("read", rupees(new_balance + self.plan.amount))
                .badge("writes", rupees(*new_balance)),
            Phase::Done => card::done(),
            Phase::GaveUp => card::gave_up("row changed every try"),
        };
        if locked
            && matches!(
                self.phase,
                Phase::Computing { .. } | Phase::Writing { .. } | Phase::Committing { .. }
            )
        {
            s = s.detail("holds the row lock");
        }
        if self.attempts > 1 {
            s = s.badge("attempt", self.attempts);
        }
        s
    }

    fn durable_summary(_plan: &DebitPlan, durable: &WorkerDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down_with_job_as(durable.done, ["debit done", "debit not done"])
    }
}

impl DebitWorker {
    /// What it is doing, in a few words (the state column of the transactions table).
    pub fn phase_text(&self) -> String {
        match &self.phase {
            Phase::Idle => "waiting for the job".to_string(),
            Phase::Reading => "reading the row".to_string(),
            Phase::Computing { read_balance, .. } => {
                format!("read {}, computing", rupees(*read_balance))
            }
            Phase::Writing { new_balance } => format!("writing {}", rupees(*new_balance)),
            Phase::Committing { new_balance } => format!("committing {}", rupees(*new_balance)),
            Phase::Done => "done".to_string(),
            Phase::GaveUp => "gave up".to_string(),
        }
    }
}
