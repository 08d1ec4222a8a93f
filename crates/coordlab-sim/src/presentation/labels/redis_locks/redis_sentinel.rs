//! How [`PingRound`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::redis_locks::redis_sentinel::PingRound;

impl Label for PingRound {
    fn label(&self) -> String {
        "pings every node".to_string()
    }
}
