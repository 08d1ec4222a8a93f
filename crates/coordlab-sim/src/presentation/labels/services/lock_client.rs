//! How [`EtcdTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::labels::job::LockTimer;
use crate::protocols::services::lock_client::EtcdTimer;

impl Label for EtcdTimer {
    fn label(&self) -> String {
        match self {
            EtcdTimer::KeepAlive => "time for a keep-alive".into(),
            EtcdTimer::KeepAliveResend => "no answer to the keep-alive: resend".into(),
            EtcdTimer::Resend => "no answer yet: resend".into(),
        }
    }
}

impl LockTimer for EtcdTimer {}
