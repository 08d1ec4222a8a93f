//! The card of a scheduled-job worker on advisory locks ([`JobWorker`]).

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::database::advisory_worker::{JobDurable, JobPlan, JobWorker, Phase, RunResult};

impl Card for JobWorker {
    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        let s = match (self.phase, self.running()) {
            (Phase::Idle, _) => match self.conn {
                Some(_) => Summary::new("idle", Tone::Quiet).detail("connection in pool"),
                None => card::idle(),
            },
            (Phase::Beginning | Phase::Locking, Some(job)) => card::asking(job),
            (Phase::Working, Some(job)) => card::holder(job),
            (Phase::Ending, _) => card::releasing(),
            (Phase::Skipping, _) => Summary::new("skipping", Tone::Failed),
            (Phase::RollingBack, _) => Summary::new("rolling back", Tone::Failed),
            _ => card::idle(),
        };
        let done = self.results.iter().filter(|(_, r)| *r == RunResult::Done).count();
        s.badge("runs done", done)
    }

    fn durable_summary(_plan: &JobPlan, durable: &JobDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down(format!("runs ended: {}", durable.results.len()))
    }
}
