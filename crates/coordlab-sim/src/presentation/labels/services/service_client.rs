//! How [`Renew`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::labels::job::LockTimer;
use crate::protocols::services::service_client::Renew;

impl Label for Renew {
    fn label(&self) -> String {
        "keep-alive".into()
    }
}

impl LockTimer for Renew {
    const START: &'static str = "try the lock";
    const RETRY: &'static str = "try the lock";
    fn step_done(_step: u32) -> String {
        "job step done".into()
    }
}
