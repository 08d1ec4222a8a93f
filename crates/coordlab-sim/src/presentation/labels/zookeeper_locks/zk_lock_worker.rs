//! How [`Ping`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::labels::job::LockTimer;
use crate::protocols::zookeeper_locks::zk_lock_worker::Ping;

impl Label for Ping {
    fn label(&self) -> String {
        "time to ping".into()
    }
}

impl LockTimer for Ping {}
