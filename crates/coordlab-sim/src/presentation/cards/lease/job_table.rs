//! The card of the job table ([`JobTable`]): whether the run is pending or claimed.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::protocols::lease::job_table::JobTable;

impl Card for JobTable {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let d = &self.durable;
        let mut s = if d.runs.is_empty() && d.claimed_by.is_empty() {
            Summary::new("pending", Tone::Quiet)
        } else {
            Summary::new("claimed", Tone::Holds)
        };
        if !d.runs.is_empty() {
            s = s.badge("run rows", d.runs.len());
        }
        if !d.claimed_by.is_empty() {
            s = s.badge("claimed", d.claimed_by.len());
        }
        if d.conflicts > 0 {
            s = s.badge("refused", d.conflicts);
        }
        for who in d.runs.values() {
            s = s.detail(format!("run row: {}", view.name(*who)));
        }
        for who in d.claimed_by.values() {
            s = s.detail(format!("claimed by {}", view.name(*who)));
        }
        s
    }
}
