//! What a lease worker's card says of its lease ([`LeaseLock`]).

use crate::kernel::participant::ViewCtx;
use crate::kernel::view::Summary;
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::lease::lease_worker::{Coordination, LeaseLock, WorkerConfig};

impl LockCard for LeaseLock {
    const RELEASE_WORDS: &'static str = "lets go of the lease";

    fn asking(&self, plan: &WorkerConfig, _phase: &Phase) -> (String, Summary) {
        let card = card::asking(match plan.plan.coordination() {
            Coordination::UniqueInsert => "inserting the job's key",
            Coordination::ConditionalClaim => "claiming the job row",
            _ => "for the lease",
        });
        ("asking for the lease".to_string(), card)
    }

    fn decorate(&self, s: Summary, at: At<'_, Self>, view: &ViewCtx<'_>) -> Summary {
        self.card(s, at, view.local_now_us)
    }
}
