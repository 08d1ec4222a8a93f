//! The card of a job runner ([`JobRunner`]): its lock client's words around the job's phase.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::Summary;
use crate::presentation::cards::card;
use crate::protocols::job::{At, JobRunner, LockClient, Phase};
use crate::protocols::redis_locks::redis_job::JobDurable;

impl<L: LockClient> Card for JobRunner<L> {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let s = match &self.phase {
            Phase::Idle => card::idle(),
            Phase::Acquiring | Phase::Watching | Phase::Confirming => {
                self.lock.asking(&self.plan, &self.phase).1
            }
            Phase::Stamping if L::STAMPS => card::holder("stamping the row"),
            Phase::Stamping | Phase::ReadingProgress => card::holder("checking progress"),
            Phase::Checking { step } if L::CHECKS => card::holder(card::step(*step, "checking token")),
            Phase::Checking { step } | Phase::Working { step } => card::holder(card::step(*step, "working")),
            Phase::Rereading { step } => card::holder(card::step(*step, "re-reading token")),
            Phase::Writing { step } => card::holder(card::step(*step, "writing")),
            Phase::Releasing => card::releasing(),
            Phase::BackingOff => card::backing_off(),
            Phase::Done => card::done(),
            Phase::Stopped => card::stopped("write refused"),
            Phase::OutOfTime => card::stopped("validity over"),
            Phase::Lost => card::stopped("lock lost"),
            Phase::GaveUp => card::gave_up(L::GAVE_UP),
        };
        let at = At {
            plan: &self.plan,
            job: &self.job,
            phase: &self.phase,
        };
        self.lock.decorate(s, at, view)
    }

    fn durable_summary(_plan: &L::Plan, durable: &JobDurable, _view: &ViewCtx<'_>) -> Summary {
        L::durable_summary(durable)
    }
}
