//! How [`WorkerTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::database::debit_worker::WorkerTimer;

impl Label for WorkerTimer {
    fn label(&self) -> String {
        match self {
            WorkerTimer::Begin => "the debit job fires".to_string(),
            WorkerTimer::FinishComputing => "finishes computing the new balance".to_string(),
        }
    }
}
