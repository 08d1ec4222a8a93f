//! The card of a job runner whose lock client is down and kept only its job's record.

use crate::kernel::view::Summary;
use crate::protocols::redis_locks::redis_job::JobDurable;

impl JobDurable {
    /// The card of a client that is down.
    pub fn summary(&self) -> Summary {
        crate::presentation::cards::card::down_with_job(self.finished)
    }
}
