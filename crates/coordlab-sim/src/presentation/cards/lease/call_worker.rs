//! What a remote-call worker's card says of its lease ([`CallLock`]).

use crate::kernel::participant::ViewCtx;
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::lease::call_worker::{CallLock, CallPlan, Check};

impl LockCard for CallLock {
    const RELEASE_WORDS: &'static str = "releases the lease";

    fn asking(&self, _plan: &CallPlan, _phase: &Phase) -> (String, Summary) {
        ("asking for the lease".to_string(), card::asking("for the lease"))
    }

    fn decorate(&self, s: Summary, at: At<'_, Self>, view: &ViewCtx<'_>) -> Summary {
        let held = self.belief.is_some();
        let mut s = match at.phase {
            Phase::BackingOff => s.detail("the lease is held"),
            Phase::ReadingProgress if self.check == Check::Stamp => card::holder("stamping the row"),
            Phase::ReadingProgress if self.check == Check::Claim => card::holder("claiming the job"),
            Phase::Working { .. } if held => card::holder("waiting for the API"),
            Phase::Working { .. } => Summary::new("calling", Tone::Waiting).detail("holds no lease"),
            Phase::Writing { .. } if held => card::holder("recording"),
            Phase::Writing { .. } => Summary::new("recording", Tone::Quiet),
            Phase::Stopped => card::stopped(self.stop),
            _ => s,
        };
        if let Some(b) = self.belief {
            let now = view.local_now_us;
            s = s.badge("token", b.token).minor(if b.expires_local_us > now {
                format!("{} by own clock", card::left(b.expires_local_us - now))
            } else {
                "lease over by own clock".to_string()
            });
        }
        s
    }
}
