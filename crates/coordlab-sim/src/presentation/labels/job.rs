//! How [`JobTimer`] reads on the picture's arrows and in the event log, in the words each lock
//! family gives its timers ([`LockTimer`]).

use crate::kernel::participant::Label;
use crate::protocols::job::JobTimer;

/// A lock client's own timer, and how a trace names the runner's timers in its family.
pub trait LockTimer: Label {
    const START: &'static str = "the job fires";
    const RETRY: &'static str = "tries the lock again";
    fn step_done(step: u32) -> String {
        format!("finishes the work of step {step}")
    }
}

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
