//! How [`ApiTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::lease::payment_api::ApiTimer;

impl Label for ApiTimer {
    fn label(&self) -> String {
        format!("finishes call {}", self.0)
    }
}
