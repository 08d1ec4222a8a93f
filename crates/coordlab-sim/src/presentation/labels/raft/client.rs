//! How [`ClientTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::raft::client::ClientTimer;

impl Label for ClientTimer {
    fn label(&self) -> String {
        match self {
            ClientTimer::Send => "time for the next request".into(),
            ClientTimer::Retry => "no answer yet: retry".into(),
        }
    }
}
