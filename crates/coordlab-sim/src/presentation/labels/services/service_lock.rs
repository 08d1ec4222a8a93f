//! How [`ServiceMsg`] and [`Expire`] read on the picture's arrows and in the event log, and
//! what each [`Flavour`] calls a grant's number and its renewal.

use crate::kernel::message::Label;
use crate::protocols::services::service_lock::{Expire, Flavour, ServiceMsg};

impl Label for ServiceMsg {
    fn label(&self) -> String {
        match self {
            ServiceMsg::Acquire => "lock()".into(),
            ServiceMsg::Granted { number } => format!("granted #{number}"),
            ServiceMsg::Busy { delayed: false, .. } => "held by another".into(),
            ServiceMsg::Busy { delayed: true, .. } => "refused: lock-delay".into(),
            ServiceMsg::UnlockPublished => "PUBLISH: unlocked".into(),
            ServiceMsg::Renew { .. } => "renew".into(),
            ServiceMsg::Renewed => "renewed".into(),
            ServiceMsg::RenewRefused => "renew refused".into(),
            ServiceMsg::Release { .. } => "unlock()".into(),
            ServiceMsg::Released { ok: true } => "unlocked".into(),
            ServiceMsg::Released { ok: false } => "unlock: not the owner".into(),
            ServiceMsg::Write {
                step,
                number: Some(n),
                ..
            } => format!("write step {step} with #{n}"),
            ServiceMsg::Write {
                step, number: None, ..
            } => format!("write step {step}"),
            ServiceMsg::WriteResult { step, accepted: true } => format!("step {step} applied"),
            ServiceMsg::WriteResult {
                step,
                accepted: false,
            } => format!("step {step} refused"),
        }
    }
}

impl Label for Expire {
    fn label(&self) -> String {
        match self {
            Expire::Lease(n) => format!("lease of #{n} ends"),
            Expire::AnswerKeepAlive(n) => format!("lease of #{n} nears its end"),
        }
    }
}

impl Flavour {
    /// What a grant's number is called.
    pub fn number_word(self) -> &'static str {
        match self {
            Flavour::Redisson => "grant",
            Flavour::Chubby => "generation",
            Flavour::Hazelcast => "fence",
        }
    }

    /// What keeps the lock alive.
    pub fn renewal_word(self) -> &'static str {
        match self {
            Flavour::Redisson => "watchdog renewal",
            Flavour::Chubby => "KeepAlive",
            Flavour::Hazelcast => "CP session heartbeat",
        }
    }
}
