//! How [`SqlMsg`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::database::sql::{SqlMsg, SqlReply};

impl Label for SqlMsg {
    fn label(&self) -> String {
        match self {
            SqlMsg::Request(request) => request.sql_text(),
            SqlMsg::Reply(SqlReply::Row { balance, version }) => {
                format!("row: balance={balance} version={version}")
            }
            SqlMsg::Reply(SqlReply::Updated) => "UPDATE 1 (staged)".to_string(),
            SqlMsg::Reply(SqlReply::Committed) => "COMMIT ok".to_string(),
            SqlMsg::Reply(SqlReply::VersionChecked { rows }) => format!("UPDATE {rows}"),
        }
    }
}
