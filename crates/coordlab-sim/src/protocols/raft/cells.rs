//! A server's log as its card in the topology view draws it.

use super::types::{Entry, LogIndex};
use crate::kernel::view::LogCell;

/// One cell per entry of `log`, marked committed up to `commit`.
pub fn cells(log: &[Entry], commit: LogIndex) -> Vec<LogCell> {
    log.iter()
        .enumerate()
        .map(|(k, e)| LogCell {
            index: k as u64 + 1,
            term: e.term.0,
            committed: (k as u64) < commit.0,
            label: e.command.to_string(),
        })
        .collect()
}
