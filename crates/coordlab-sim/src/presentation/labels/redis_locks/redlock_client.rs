//! How [`MasterTimeout`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::labels::job::LockTimer;
use crate::protocols::redis_locks::redlock_client::MasterTimeout;

impl Label for MasterTimeout {
    fn label(&self) -> String {
        format!("gives up waiting for {}", self.name)
    }
}

impl LockTimer for MasterTimeout {}
