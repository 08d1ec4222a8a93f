//! The cards of ShedLock: the lock table ([`ShedlockDb`]) and each instance ([`ScheduledInstance`]).

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::presentation::durations::clock_text;
use crate::protocols::services::shedlock::{InstanceConfig, ScheduledInstance, ShedlockDb};

impl Card for ShedlockDb {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let row = &self.durable.row;
        // By the database's own clock; an instance that sends its own `:now` judges by its.
        let held = row.lock_until_us > view.local_now_us;
        let s = match (held, row.locked_by) {
            (true, Some(by)) => card::fit_badge(Summary::new("held", Tone::Holds), "holder", view.name(by)),
            (true, None) => Summary::new("held", Tone::Holds),
            (false, _) => Summary::new("free", Tone::Quiet),
        };
        let s = s.badge("reports", self.durable.reports.len());
        let s = match (held, row.locked_by) {
            (false, Some(by)) => s.detail(format!("last locked by {}", view.name(by))),
            _ => s,
        };
        let s = match row.locked_by {
            Some(_) => s.detail(format!("until {}", clock_text(row.lock_until_us))),
            None => s.detail("never locked"),
        };
        s.minor(format!("db clock {}", clock_text(view.local_now_us)))
    }
}

impl Card for ScheduledInstance {
    fn durable_summary(_config: &InstanceConfig, _durable: &(), _view: &ViewCtx<'_>) -> Summary {
        card::down("keeps nothing on disk")
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let s = match self.running {
            Some((slot, _)) => card::holder(format!("running the job of run {slot}")).badge("run", slot),
            // ShedLock threw at a firing (see the protocol), and will at every one.
            None if self.refused => {
                Summary::new("refused", Tone::Failed).detail("lockAtLeastFor > lockAtMostFor")
            }
            None => Summary::new("idle", Tone::Quiet),
        };
        // A skewed clock's badge is drawn beside the card; this is its reading.
        s.badge("runs done", self.runs)
            .detail(format!("clock {}", clock_text(view.local_now_us)))
    }
}
