//! How [`NoTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::labels::job::LockTimer;
use crate::protocols::lease::call_worker::NoTimer;

impl Label for NoTimer {
    fn label(&self) -> String {
        match *self {}
    }
}

impl LockTimer for NoTimer {
    const RETRY: &'static str = "retries the lease";
}
