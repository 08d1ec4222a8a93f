//! How [`AdvisoryMsg`] reads on the picture's arrows and in the event log, and a lock's
//! [`Scope`] in a word.

use crate::kernel::participant::Label;
use crate::protocols::database::advisory_sql::{AdvisoryMsg, AdvisoryReply, Scope};

impl Label for AdvisoryMsg {
    fn label(&self) -> String {
        match self {
            AdvisoryMsg::Request { request, .. } => request.sql_text(),
            AdvisoryMsg::Reply { reply, .. } => match reply {
                AdvisoryReply::Begun => "BEGIN ok".to_string(),
                AdvisoryReply::Bool(b) => b.to_string(),
                AdvisoryReply::Granted => "granted (void)".to_string(),
                AdvisoryReply::Committed => "COMMIT ok".to_string(),
                AdvisoryReply::RolledBack => "ROLLBACK ok".to_string(),
                AdvisoryReply::NoConnection => "ERROR 08003: no connection".to_string(),
            },
        }
    }
}

impl Scope {
    pub fn word(self) -> &'static str {
        match self {
            Scope::Xact => "transaction",
            Scope::Session => "session",
        }
    }
}
