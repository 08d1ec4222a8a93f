//! The card half of the lease worker's lock client.

use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::job::{At, Phase};
use crate::protocols::lease::lease_worker::plan::Coordination;
use crate::protocols::lease::lease_worker::{LeaseLock, LeaseWorker, StopReason};

mod lease;

impl LeaseLock {
    /// The card after the runner's, at the worker's clock reading `local_now_us`.
    fn card(&self, s: Summary, at: At<'_, Self>, local_now_us: u64) -> Summary {
        let plan = &at.plan.plan;
        let leased = plan.coordination() == Coordination::Lease;
        let mut s = match (at.phase, &self.stop_reason) {
            (Phase::BackingOff, _) if self.resuming => {
                s.detail(format!("to resume at step {}", self.next_step))
            }
            (Phase::BackingOff, _) => s.detail("the lease is held"),
            (Phase::Stopped, Some(StopReason::NotMine)) => {
                Summary::new("not mine", Tone::Quiet).detail("the job goes elsewhere")
            }
            (Phase::Stopped, Some(StopReason::AlreadyRun)) => {
                Summary::new("skipped", Tone::Done).detail("run already done")
            }
            (Phase::Stopped, _) => card::stopped(self.stop_text()),
            (Phase::GaveUp, _) => Summary::new("backed off", Tone::Done).detail(if leased {
                "another copy holds the lease"
            } else {
                "another copy has the job"
            }),
            _ => s,
        };
        if self.belief.is_some() && at.phase.in_job() && !leased {
            // No lease to hold: the job table or the routing made the job its own, or (with no
            // coordination at all) nothing stops it.
            s.word = "working".to_string();
            if plan.coordination() == Coordination::None {
                s.tone = Tone::Quiet;
            }
        }
        if let (Some(b), true) = (self.belief, leased) {
            s = s
                .badge("token", b.token)
                .minor(if b.expires_local_us > local_now_us {
                    format!("{} by own clock", card::left(b.expires_local_us - local_now_us))
                } else {
                    "lease over by own clock".to_string()
                });
        }
        if at.job.attempt > 1 && matches!(at.phase, Phase::Acquiring | Phase::BackingOff) {
            s = s.minor(format!("attempt {}", at.job.attempt));
        }
        s
    }
}

impl LeaseWorker {
    /// What it is doing, in a few words (the state column of the workers table).
    pub fn phase_text(&self) -> String {
        match &self.phase {
            Phase::Stopped => format!("stopped: {}", self.stop_text()),
            Phase::GaveUp => "backed off".to_string(),
            _ => self.doing(),
        }
    }
}

impl LeaseLock {
    pub(crate) fn stop_text(&self) -> &'static str {
        self.stop_reason.as_ref().map_or("", stop_text)
    }
}

fn stop_text(r: &StopReason) -> &'static str {
    match r {
        StopReason::LostLease => "lease lost",
        StopReason::ExpiredByOwnClock => "expired by own clock",
        StopReason::MarginReached => "safety margin reached",
        StopReason::Rejected => "write rejected",
        StopReason::AppCheckCaught => "app check caught it",
        StopReason::NotMine => "not my partition",
        StopReason::AlreadyRun => "run already done",
    }
}
