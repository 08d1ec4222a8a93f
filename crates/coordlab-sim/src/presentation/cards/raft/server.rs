//! The card of a Raft server ([`RaftServer`]): role, term, log and election timer.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Gauge, LogCell, Summary, Tone};
use crate::protocols::raft::cells::cells;
use crate::protocols::raft::server::{RaftServer, ServerConfig, ServerDurable};
use crate::protocols::raft::types::{LogIndex, Role, KV_WRITERS};

impl Card for RaftServer {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let (word, tone) = match self.role {
            Role::Leader => ("leader", Tone::Holds),
            Role::Candidate => ("candidate", Tone::Asking),
            Role::Follower => ("follower", Tone::Quiet),
        };
        // The election timer is the card's gauge: not repeated here.
        let mut s = Summary::new(word, tone).badge("term", self.term);
        if let Some(v) = self.voted_for {
            s = s.detail(format!("voted {}", view.name(v)));
        }
        s = s.detail(format!("log {} · commit {}", self.log.len(), self.commit_index.0));
        // Only a build with a writer of `set` has pairs to show (`KV_WRITERS`).
        if KV_WRITERS.here {
            for pairs in kv_details(self.kv.iter().map(|(k, v)| format!("{k}={v}"))) {
                s = s.minor(pairs);
            }
        }
        s
    }

    fn durable_summary(_config: &ServerConfig, d: &ServerDurable, view: &ViewCtx<'_>) -> Summary {
        let mut s = Summary::new("down", Tone::Failed).badge("term", d.term);
        if let Some(v) = d.voted_for {
            s = s.detail(format!("voted {}", view.name(v)));
        }
        s.detail(format!("log {} on disk", d.log.len()))
    }

    fn gauge(&self, view: &ViewCtx<'_>) -> Option<Gauge> {
        let deadline_us = self.election_deadline_us.filter(|_| self.role != Role::Leader)?;
        Some(Gauge {
            label: "election timeout".into(),
            remaining_us: deadline_us.saturating_sub(view.local_now_us),
            total_us: self.election_timeout_us.max(1),
        })
    }

    fn log_cells(&self) -> Vec<LogCell> {
        cells(&self.log, self.commit_index)
    }

    /// The commit index is volatile: a server that is down knows nothing committed.
    fn durable_log_cells(d: &ServerDurable) -> Vec<LogCell> {
        cells(&d.log, LogIndex(0))
    }
}

/// Key-value pairs (`x=1`) gathered into details of at most 30 characters each.
fn kv_details(pairs: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for pair in pairs {
        match out.last_mut() {
            Some(line) if line.len() + 1 + pair.len() <= 30 => {
                line.push(' ');
                line.push_str(&pair);
            }
            _ => out.push(pair),
        }
    }
    out
}
