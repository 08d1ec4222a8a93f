//! The card of the account database ([`AccountDb`]): the balance and the row lock.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::amounts::rupees;
use crate::presentation::cards::card;
use crate::protocols::database::account_db::{AccountDb, DbDurable};

impl Card for AccountDb {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let row = &self.durable.row;
        let s = match self.lock_holder {
            Some(_) => Summary::new("row locked", Tone::Holds),
            None => Summary::new("unlocked", Tone::Quiet),
        };
        let mut s = s
            .badge("balance", rupees(row.balance))
            .badge("version", row.version);
        if let Some(h) = self.lock_holder {
            s = card::fit_badge(s, "lock", view.name(h));
            if !self.lock_waiters.is_empty() {
                s = s.badge("waiting", self.lock_waiters.len());
            }
        }
        for w in &self.lock_waiters {
            s = s.detail(format!("{} waits for the lock", view.name(*w)));
        }
        if self.version_conflicts > 0 {
            s = s.detail(format!("stale writes refused: {}", self.version_conflicts));
        }
        s = s.minor(format!("debits committed: {}", self.durable.committed_debits));
        for (who, txn) in &self.txns {
            if let Some(balance) = txn.staged_balance {
                s = s.minor(format!("{} staged {}", view.name(*who), rupees(balance)));
            }
        }
        s
    }

    fn durable_summary(_config: &(), durable: &DbDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down("committed row on disk")
            .badge("balance", rupees(durable.row.balance))
            .badge("version", durable.row.version)
    }
}
