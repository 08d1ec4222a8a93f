//! The card of the row-lock database ([`LockDb`]): its rows, locks and waiters.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::database::row_lock_db::{LockDb, LockDbConfig, LockDbDurable};

impl Card for LockDb {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let held: usize = self.locks.rows.values().map(|r| r.holders.len()).sum();
        let edges = self.locks.wait_edges();
        let stuck = self
            .pending
            .keys()
            .any(|t| self.locks.cycle_through(*t).is_some());
        let s = if stuck {
            // A cycle in the wait-for graph, before or until deadlock detection breaks it.
            Summary::new("deadlock", Tone::Failed)
        } else if !edges.is_empty() {
            Summary::new("blocking", Tone::Waiting)
        } else if held > 0 {
            Summary::new("locked", Tone::Holds)
        } else {
            Summary::new("no locks", Tone::Quiet)
        };
        let mut s = s.badge("locks", held).badge("waiting", self.pending.len());
        let st = &self.stats;
        if st.deadlocks > 0 {
            s = s.badge("deadlocks", st.deadlocks);
        }
        // Who waits for whom: the deadlock story.
        for edge in &edges {
            s = s.detail(format!(
                "{} waits for {}",
                view.name(edge.waiter),
                view.name(edge.holder)
            ));
        }
        if let Some(cycle) = &self.last_deadlock {
            s = s.minor(format!("aborted {}", view.name(cycle[0])));
        }
        if st.nowait_errors > 0 {
            s = s.minor(format!("NOWAIT refusals: {}", st.nowait_errors));
        }
        if st.skipped > 0 {
            s = s.minor(format!("rows skipped: {}", st.skipped));
        }
        s
    }

    fn durable_summary(_config: &LockDbConfig, _durable: &LockDbDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down("committed rows on disk")
    }
}
