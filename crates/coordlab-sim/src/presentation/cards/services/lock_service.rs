//! The card of an etcd server ([`LockServer`]): its Raft server's card with its lock table.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Gauge, LogCell, Summary};
use crate::presentation::cards::card;
use crate::protocols::raft::{RaftServer, ServerConfig, ServerDurable};
use crate::protocols::services::lock_service::LockServer;

impl Card for LockServer {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let store = self.store();
        let mut s = self.server.summary(view).badge("rev", store.revision);
        for (key, kv) in &store.keys {
            let short = key.rsplit_once('/').map_or(key.as_str(), |(_, k)| k);
            s = s.detail(format!(
                "{short}: {} rev {}",
                view.name(kv.owner),
                kv.create_revision
            ));
            // Only the leader counts a lease down, by its own clock.
            if let Some(c) = self.countdowns.get(&kv.lease) {
                let left = card::left(c.deadline_us.saturating_sub(view.local_now_us));
                s = s.minor(format!("{short}: {left}"));
            }
        }
        s
    }

    fn durable_summary(config: &ServerConfig, durable: &ServerDurable, view: &ViewCtx<'_>) -> Summary {
        RaftServer::durable_summary(config, durable, view)
    }

    fn gauge(&self, view: &ViewCtx<'_>) -> Option<Gauge> {
        self.server.gauge(view)
    }

    fn log_cells(&self) -> Vec<LogCell> {
        self.server.log_cells()
    }

    fn durable_log_cells(durable: &ServerDurable) -> Vec<LogCell> {
        RaftServer::durable_log_cells(durable)
    }
}
