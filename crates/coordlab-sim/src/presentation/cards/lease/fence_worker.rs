//! What a fencing worker's card says of its lease ([`FenceLock`]).

use crate::kernel::participant::ViewCtx;
use crate::kernel::view::Summary;
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::lease::fence_worker::{FenceLock, FencePlan};

impl LockCard for FenceLock {
    fn asking(&self, _plan: &FencePlan, phase: &Phase) -> (String, Summary) {
        let doing = match phase {
            Phase::Watching => "watching the node ahead",
            _ if self.reading => "reading the replica",
            _ => return ("asking for the lease".to_string(), card::asking("for the lease")),
        };
        (doing.to_string(), card::asking(doing))
    }

    fn decorate(&self, mut s: Summary, at: At<'_, Self>, _view: &ViewCtx<'_>) -> Summary {
        if let (Some(t), true) = (self.granted, at.phase.in_job()) {
            s = s.badge("token", t);
            if self.fence != t {
                // What it writes with is not what it was granted: the mistake under study.
                s = card::fit_badge(s, "fence", &self.fence.to_string());
            }
        }
        if at.job.attempt > 1 && matches!(at.phase, Phase::Acquiring | Phase::BackingOff) {
            s = s.minor(format!("attempt {}", at.job.attempt));
        }
        s
    }
}
