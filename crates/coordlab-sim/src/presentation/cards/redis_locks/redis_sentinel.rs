//! The card of a Redis Sentinel ([`Sentinel`]): what it believes of the primary, its votes and epoch.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::time::{format_duration, MS_US};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::redis_locks::redis_sentinel::{Sentinel, SentinelConfig, SentinelDurable};

impl Card for Sentinel {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let primary = view.name(self.primary);
        let s = if self.stopped {
            Summary::new("stopped", Tone::Quiet).detail("rounds over")
        } else if let Some(e) = &self.election {
            Summary::new("candidate", Tone::Asking)
                .badge("votes", card::of(e.votes.len(), self.config.votes_needed()))
                .detail(format!("election epoch {}", e.epoch))
        } else if self.odown {
            Summary::new("odown", Tone::Waiting).detail(format!("{primary} objectively down"))
        } else if self.sdown {
            Summary::new("sdown", Tone::Waiting).detail(format!("{primary} subjectively down"))
        } else {
            let s = Summary::new("watching", Tone::Quiet);
            let silent_ms = self
                .last_pong_us
                .get(&self.primary)
                .map(|last| view.local_now_us.saturating_sub(*last) / MS_US);
            match silent_ms {
                Some(ms) if ms > self.config.ping_ms + 20 => s.detail(format!(
                    "{primary} silent {} / {}",
                    // In tenths of a second, as the sentinel's rounds are spaced.
                    format_duration(ms / 100 * 100 * MS_US),
                    format_duration(self.config.down_after_ms * MS_US)
                )),
                _ => s,
            }
        };
        let mut s = card::fit_badge(s, "primary", primary).badge("epoch", self.config_epoch);
        if let Some((leader, epoch)) = self.vote {
            s = s.detail(format!("voted {}, epoch {epoch}", view.name(leader)));
        }
        if let Some(f) = self.failovers.last() {
            s = s.detail(format!("failover {} → {}", view.name(f.from), view.name(f.to)));
        }
        s
    }

    fn durable_summary(_config: &SentinelConfig, d: &SentinelDurable, view: &ViewCtx<'_>) -> Summary {
        card::fit_badge(card::down("its config on disk"), "primary", view.name(d.primary))
            .badge("epoch", d.config_epoch)
    }
}
