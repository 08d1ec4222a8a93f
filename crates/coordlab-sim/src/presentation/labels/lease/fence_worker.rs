//! How [`NoAnswer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::labels::job::LockTimer;
use crate::protocols::lease::fence_worker::NoAnswer;

impl Label for NoAnswer {
    fn label(&self) -> String {
        format!("attempt {}: no answer yet", self.attempt)
    }
}

impl LockTimer for NoAnswer {
    const RETRY: &'static str = "retries the lease";
}
