//! What a fencing worker's card says of its lease ([`FenceLock`]).

use crate::kernel::participant::ViewCtx;
use crate::kernel::view::Summary;
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::lease::fence_worker::{FenceFrom, FenceLock, FencePlan, FenceWorker};

impl LockCard for FenceLock {
    const RELEASE_WORDS: &'static str = "lets the lease lapse";
    const GAVE_UP: &'static str = "no lease";

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

impl FenceWorker {
    /// What it is doing and holds, in one line (the workers table).
    pub fn status_text(&self) -> String {
        let phase = match self.phase {
            Phase::GaveUp => "gave up: no lease".to_string(),
            _ => self.doing(),
        };
        match (self.granted, self.believes_it_holds()) {
            (Some(t), true) if t == self.fence || self.plan.fence == FenceFrom::Reread => {
                format!("{phase} · holds #{t}")
            }
            (Some(t), true) => format!("{phase} · holds #{t} · fence {}", self.fence),
            _ => phase,
        }
    }
}
