//! What a Redis worker's card says of its lock key ([`RedisLock`]).

use crate::kernel::participant::ViewCtx;
use crate::kernel::view::Summary;
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::redis_locks::redis_worker::{RedisLock, WorkerPlan};

impl LockCard for RedisLock {
    const RELEASE_WORDS: &'static str = "gives the lock back";

    fn asking(&self, _plan: &WorkerPlan, phase: &Phase) -> (String, Summary) {
        match phase {
            Phase::Confirming => ("waiting for WAIT".to_string(), card::asking("waiting for WAIT")),
            _ => ("asking for the lock".to_string(), card::asking("for the lock")),
        }
    }

    fn decorate(&self, s: Summary, _at: At<'_, Self>, view: &ViewCtx<'_>) -> Summary {
        let s = match &self.held {
            Some(h) => card::fit_badge(s.badge("token", h.token), "lock", &h.value),
            None => s,
        };
        s.minor(format!("talks to {}", view.name(self.primary)))
    }
}
