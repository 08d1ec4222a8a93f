//! How [`StoreTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::redis_locks::redis::StoreTimer;

impl Label for StoreTimer {
    fn label(&self) -> String {
        match self {
            StoreTimer::Flush => "streams its buffered writes to the replicas".to_string(),
            StoreTimer::Expire { key } => format!("{key} reaches its expiry time"),
            StoreTimer::WaitTimeout { .. } => "a WAIT times out".to_string(),
        }
    }
}
