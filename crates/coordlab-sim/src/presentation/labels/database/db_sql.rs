//! How [`DbMsg`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::database::db_sql::{DbMsg, DbReply, DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE};

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
