//! The card of a Raft client ([`RaftClient`]): its writes committed and the one in flight.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::raft::client::{ClientConfig, RaftClient};

impl Card for RaftClient {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let writes = card::of(self.committed.len(), self.config.writes);
        match self.outstanding {
            Some(id) => Summary::new("writing", Tone::Asking)
                .badge("writes", writes)
                .detail(format!("write {id} via {}", view.name(self.guess))),
            None => Summary::new("idle", Tone::Quiet).badge("writes", writes),
        }
    }

    fn durable_summary(_config: &ClientConfig, _durable: &(), _view: &ViewCtx<'_>) -> Summary {
        card::down("keeps nothing on disk")
    }
}
