//! How [`DbMsg`] reads on the picture's arrows and in the event log, and why a statement
//! takes its row lock ([`RowAccess`], [`LockMode`]), in the narration's words.

use crate::kernel::participant::Label;
use crate::protocols::database::db_sql::{DbMsg, DbReply, RowAccess, DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE};
use crate::protocols::database::row_locks::LockMode;

impl Label for DbMsg {
    fn label(&self) -> String {
        match self {
            DbMsg::Request(request) => request.sql_text(),
            DbMsg::Reply(DbReply::Job(Some(id))) => format!("row: id={id}"),
            DbMsg::Reply(DbReply::Job(None)) => "0 rows".to_string(),
            DbMsg::Reply(DbReply::Rows(n)) => format!("{n} row(s)"),
            DbMsg::Reply(DbReply::Begun) => "BEGIN ok".to_string(),
            DbMsg::Reply(DbReply::Committed) => "COMMIT ok".to_string(),
            DbMsg::Reply(DbReply::RolledBack) => "ROLLBACK ok".to_string(),
            DbMsg::Reply(DbReply::Error { sqlstate }) => match *sqlstate {
                LOCK_NOT_AVAILABLE => format!("ERROR {sqlstate}: could not obtain lock on row"),
                DEADLOCK_DETECTED => format!("ERROR {sqlstate}: deadlock detected"),
                _ => format!("ERROR {sqlstate}"),
            },
        }
    }
}

impl RowAccess {
    /// Why it takes its lock (for narration).
    pub fn why(self) -> &'static str {
        match self {
            RowAccess::Read => "a plain SELECT takes no row lock",
            RowAccess::SelectFor(_) => "its SELECT asked for it by name",
            RowAccess::InsertChild => {
                "the order's foreign-key check takes it, so customer 1 keeps its id until the insert commits"
            }
            RowAccess::UpdateName => LockMode::NoKeyUpdate.gloss(),
            RowAccess::Delete => LockMode::Update.gloss(),
        }
    }
}

impl LockMode {
    /// Why a statement takes this mode, in a few words (for narration).
    pub fn gloss(self) -> &'static str {
        match self {
            LockMode::KeyShare => "what a foreign-key check takes on the parent row",
            LockMode::Share => "the row must not change",
            LockMode::NoKeyUpdate => "what an UPDATE that changes no key column takes",
            LockMode::Update => "what a DELETE or a key-changing UPDATE takes",
        }
    }
}
