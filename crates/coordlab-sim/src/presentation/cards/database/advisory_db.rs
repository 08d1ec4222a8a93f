//! The card of the advisory-lock database ([`AdvisoryDb`]): its locks and their owners.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::database::advisory_db::{AdvisoryDb, AdvisoryDbDurable};

impl Card for AdvisoryDb {
    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        let s = if !self.waiters.is_empty() {
            Summary::new("blocking", Tone::Waiting)
        } else if !self.locks.is_empty() {
            Summary::new("locked", Tone::Holds)
        } else {
            Summary::new("no locks", Tone::Quiet)
        };
        let mut s = s
            .badge("locks", self.locks.len())
            .badge("sessions", self.sessions.len());
        for (key, h) in self.locks.iter() {
            s = s.detail(format!("{key}: pid {}", self.pid(h.conn).unwrap_or(0)));
        }
        s
    }

    fn durable_summary(_config: &(), _durable: &AdvisoryDbDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down("advisory locks are in memory")
    }
}
