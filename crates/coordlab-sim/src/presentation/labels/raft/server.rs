//! How [`RaftTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::raft::server::RaftTimer;

impl Label for RaftTimer {
    fn label(&self) -> String {
        match self {
            RaftTimer::Election => "election timeout".into(),
            RaftTimer::Heartbeat => "heartbeat round".into(),
        }
    }
}
