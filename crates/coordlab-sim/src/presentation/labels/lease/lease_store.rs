//! How [`ExpiryTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::lease::lease_store::ExpiryTimer;

impl Label for ExpiryTimer {
    fn label(&self) -> String {
        format!("{} (token {}) reaches its expiry", self.lease, self.token)
    }
}
