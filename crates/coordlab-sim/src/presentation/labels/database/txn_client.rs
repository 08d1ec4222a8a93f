//! How [`ClientTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::database::txn_client::ClientTimer;

impl Label for ClientTimer {
    fn label(&self) -> String {
        match self {
            ClientTimer::Begin => "starts".to_string(),
            ClientTimer::ThinkDone => "finishes its work".to_string(),
            ClientTimer::Retry => "back-off over: tries again".to_string(),
        }
    }
}
