//! How [`LeaseTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::labels::job::LockTimer;
use crate::protocols::lease::lease_worker::LeaseTimer;

impl Label for LeaseTimer {
    fn label(&self) -> String {
        "heartbeat: time to renew".to_string()
    }
}

impl LockTimer for LeaseTimer {
    const RETRY: &'static str = "retries the lease";
}
