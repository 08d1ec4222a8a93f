//! What a Redlock client's card says of its majority ([`RedlockLock`]).

use crate::kernel::participant::ViewCtx;
use crate::kernel::time::format_duration;
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::redis_locks::redlock_client::{RedlockLock, RedlockPlan};

impl LockCard for RedlockLock {
    const RELEASE_WORDS: &'static str = "unlocks";

    fn asking(&self, plan: &RedlockPlan, _phase: &Phase) -> (String, Summary) {
        let masters = plan.masters.len();
        (
            format!("asking: {} of {masters} answered", self.replies.len()),
            Summary::new("asking", Tone::Asking)
                .badge("answered", card::of(self.replies.len(), masters))
                .detail("on all masters"),
        )
    }

    fn decorate(&self, s: Summary, at: At<'_, Self>, view: &ViewCtx<'_>) -> Summary {
        let plan = at.plan;
        match &self.held {
            Some(l) => {
                let left = l.deadline_local_us.saturating_sub(view.local_now_us);
                s.badge("masters", card::of(l.masters.len(), plan.masters.len()))
                    .minor(format!("{} valid by own clock", format_duration(left)))
            }
            None => s,
        }
    }
}
