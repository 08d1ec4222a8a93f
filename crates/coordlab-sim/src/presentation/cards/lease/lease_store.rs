//! The card of the lease store ([`LeaseStore`]): its lease rows at its own clock.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::lease::lease_store::{owner_name, LeaseRow, LeaseStore};

impl LeaseStore {
    /// Where `row` stands at the store's clock reading `now_us`.
    fn state_of(row: &LeaseRow, now_us: u64) -> card::Lease {
        if row.released {
            card::Lease::Released
        } else if row.expires_at_us > now_us {
            card::Lease::Left(row.expires_at_us - now_us)
        } else {
            card::Lease::Expired
        }
    }
}

impl Card for LeaseStore {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let now_us = view.local_now_us;
        let rows = &self.durable.rows;
        let owner = |row: &LeaseRow| owner_name(row.owner, |id| view.name(id));
        match rows.len() {
            0 => Summary::new("free", Tone::Quiet).detail("no lease rows"),
            1 => {
                let (_, row) = rows.iter().next().expect("one row");
                let state = Self::state_of(row, now_us);
                card::lease(state.word(), owner(row), "token", row.token, state)
            }
            n => {
                let held = rows
                    .iter()
                    .filter(|(_, r)| matches!(Self::state_of(r, now_us), card::Lease::Left(_)))
                    .count();
                let mut s = match held {
                    0 => Summary::new("free", Tone::Quiet),
                    _ => Summary::new("held", Tone::Holds),
                }
                .badge("held", card::of(held, n));
                for (lease, row) in rows {
                    let state = match Self::state_of(row, now_us) {
                        card::Lease::Left(_) => "",
                        card::Lease::Expired => ", expired",
                        card::Lease::Released => ", released",
                    };
                    s = s.detail(format!("{lease}: {} #{}{state}", owner(row), row.token));
                }
                s
            }
        }
    }
}
