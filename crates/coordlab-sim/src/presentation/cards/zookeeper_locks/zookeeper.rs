//! The card of the ZooKeeper ensemble ([`ZkService`]): who holds the lock, and the ensemble's figures.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::time::{format_duration, MS_US};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::zookeeper_locks::zookeeper::{sequence_of, ZkConfig, ZkService};

impl Card for ZkService {
    fn durable_summary(_config: &ZkConfig, _durable: &(), _view: &ViewCtx<'_>) -> Summary {
        card::down("keeps nothing on disk")
    }

    /// The node card: whether the lock has a holder (its lowest child), and the figures of
    /// the ensemble.
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let lock_path = &self.lock_path;
        let children = self.children(lock_path);
        let live = self.sessions.values().filter(|s| s.alive).count();
        let mut s = match children.split_first() {
            None => Summary::new("free", Tone::Quiet).detail(format!("{lock_path} has no children")),
            Some((first, rest)) => {
                let path = format!("{}/{first}", lock_path.trim_end_matches('/'));
                let owner = self
                    .nodes
                    .get(&path)
                    .and_then(|n| n.owner)
                    .and_then(|id| self.sessions.get(&id))
                    .map(|s| view.name(s.client));
                let s = Summary::new("held", Tone::Holds)
                    .badge("holder", short_name(first))
                    .badge("waiting", rest.len());
                match owner {
                    Some(o) => s.detail(format!("{first}: {o}")),
                    None => s.detail(first.clone()),
                }
            }
        };
        s = s.badge("sessions", live).badge("zxid", self.zxid);
        let quietest = self
            .sessions
            .values()
            .filter(|s| s.alive)
            .map(|s| view.local_now_us.saturating_sub(s.last_heard_us))
            .max();
        if let Some(q) = quietest.filter(|q| *q >= MS_US * 1_000) {
            s = s.minor(format!("quietest silent {}", format_duration(q)));
        }
        s
    }
}

/// A sequential node's name as a badge shows it: `n-0000000004` → `n-4`.
pub(super) fn short_name(name: &str) -> String {
    match sequence_of(name) {
        Some(seq) => format!("{}{seq}", &name[..name.len() - 10]),
        None => name.to_string(),
    }
}
