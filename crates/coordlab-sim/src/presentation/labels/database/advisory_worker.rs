//! How [`JobTimer`] reads on the picture's arrows and in the event log, and a run's
//! [`RunResult`] in a word.

use crate::kernel::participant::Label;
use crate::protocols::database::advisory_worker::{JobTimer, RunResult};

impl Label for JobTimer {
    fn label(&self) -> String {
        match self {
            JobTimer::Run(_) => "a scheduled run fires".to_string(),
            JobTimer::WorkDone => "finishes the job's work".to_string(),
            JobTimer::Throw => "the job's code throws".to_string(),
            JobTimer::Retire(_) => "the pool retires its connection".to_string(),
        }
    }
}

impl RunResult {
    pub fn word(self) -> &'static str {
        match self {
            RunResult::Done => "done",
            RunResult::Refused => "refused",
            RunResult::Failed => "threw",
            RunResult::Missed => "missed",
            RunResult::ConnectionLost => "connection lost",
        }
    }
}
