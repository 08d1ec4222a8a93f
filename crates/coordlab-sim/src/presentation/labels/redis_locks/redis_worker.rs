//! How [`RequestTimeout`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::labels::job::LockTimer;
use crate::protocols::redis_locks::redis_worker::RequestTimeout;

impl Label for RequestTimeout {
    fn label(&self) -> String {
        "gives up waiting for an answer".to_string()
    }
}

impl LockTimer for RequestTimeout {}
