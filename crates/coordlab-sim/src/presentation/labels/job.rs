//! How [`JobTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::job::{JobTimer, LockTimer};

impl<T: LockTimer> Label for JobTimer<T> {
    fn label(&self) -> String {
        match self {
            JobTimer::JobStart => T::START.to_string(),
            JobTimer::Retry => T::RETRY.to_string(),
            JobTimer::StepDone { step } => T::step_done(*step),
            JobTimer::Lock(t) => t.label(),
        }
    }
}
