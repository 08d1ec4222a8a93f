//! What a lock-service client's card says of its lock ([`ServiceLock`]).

use crate::kernel::participant::ViewCtx;
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::redis_locks::redis_job::JobDurable;
use crate::protocols::services::service_client::{waiting, ServiceLock, ServicePlan};

impl LockCard for ServiceLock {
    const RELEASE_WORDS: &'static str = "unlocks";

    fn asking(&self, _plan: &ServicePlan, _phase: &Phase) -> (String, Summary) {
        ("waiting for the lock".into(), card::waiting("for the lock"))
    }

    /// Its card is its own: the runner's phases read as waiting, holding, stuck, stopped or done.
    fn decorate(&self, _s: Summary, at: At<'_, Self>, _view: &ViewCtx<'_>) -> Summary {
        let flavour = at.plan.client.flavour;
        let written = format!(
            "steps written: {}",
            card::of(self.steps_written, at.plan.client.steps)
        );
        let s = match (at.phase, self.number) {
            (phase, _) if waiting(phase) => card::waiting("for the lock"),
            (_, Some(n)) if self.stuck => Summary::new("stuck", Tone::Holds)
                .badge(flavour.number_word(), n)
                .detail("job thread blocked")
                .detail(written),
            (Phase::Working { .. } | Phase::Writing { .. }, Some(n)) => {
                card::holder(written).badge(flavour.number_word(), n)
            }
            // A refused write took its number away: it learnt it had lost the lock.
            (Phase::Stopped, _) => card::stopped("write refused").detail(written),
            (Phase::Done, _) => card::done().detail(written),
            _ => card::holder(written),
        };
        if self.believes(at.phase) {
            let renewal = flavour.renewal_word();
            s.detail(if self.renewing {
                format!("{renewal} on")
            } else {
                format!("{renewal} stopped")
            })
        } else {
            s
        }
    }

    fn durable_summary(_durable: &JobDurable) -> Summary {
        card::down("keeps nothing on disk")
    }
}
