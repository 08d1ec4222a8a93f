//! How [`DbTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::database::row_lock_db::DbTimer;

impl Label for DbTimer {
    fn label(&self) -> String {
        match self {
            DbTimer::DeadlockCheck(_) => "deadlock_timeout: look for a cycle".to_string(),
        }
    }
}
