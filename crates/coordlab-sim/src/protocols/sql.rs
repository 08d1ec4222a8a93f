//! The wire vocabulary between workers and the account database: a handful of SQL
//! statements on one row, `accounts.id = 42`, and their replies.

use crate::kernel::participant::Label;

crate::inbox!(SqlMsg);

/// The one account every lost-update worker touches.
pub const ACCOUNT_ID: u32 = 42;

/// Formats an amount of rupees for people.
pub fn rupees(amount: i64) -> String {
    format!("₹{amount}")
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlRequest {
    /// `SELECT balance, version FROM accounts WHERE id = 42 [FOR UPDATE]`.
    Select {
        for_update: bool,
    },
    /// `UPDATE accounts SET balance = :balance WHERE id = 42`, inside the open transaction.
    Update {
        balance: i64,
    },
    /// `UPDATE … SET balance = :balance, version = version + 1 WHERE id = 42 AND version = :expected_version`,
    /// one atomic statement.
    UpdateIfVersion {
        balance: i64,
        expected_version: u64,
    },
    Commit,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlReply {
    Row {
        balance: i64,
        version: u64,
    },
    Updated,
    Committed,
    /// Rows changed by a version-checked update: 1 applied, 0 the version had moved on.
    VersionChecked {
        rows: u32,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlMsg {
    Request(SqlRequest),
    Reply(SqlReply),
}

impl Label for SqlMsg {
    fn label(&self) -> String {
        match self {
            SqlMsg::Request(SqlRequest::Select { for_update: false }) => {
                format!("SELECT balance, version FROM accounts WHERE id={ACCOUNT_ID}")
            }
            SqlMsg::Request(SqlRequest::Select { for_update: true }) => {
                format!("SELECT balance, version FROM accounts WHERE id={ACCOUNT_ID} FOR UPDATE")
            }
            SqlMsg::Request(SqlRequest::Update { balance }) => {
                format!("UPDATE accounts SET balance={balance} WHERE id={ACCOUNT_ID}")
            }
            SqlMsg::Request(SqlRequest::UpdateIfVersion { balance, expected_version }) => format!(
                "UPDATE accounts SET balance={balance}, version={} WHERE id={ACCOUNT_ID} AND version={expected_version}",
                expected_version + 1
            ),
            SqlMsg::Request(SqlRequest::Commit) => "COMMIT".to_string(),
            SqlMsg::Reply(SqlReply::Row { balance, version }) => format!("row: balance={balance} version={version}"),
            SqlMsg::Reply(SqlReply::Updated) => "UPDATE 1 (staged)".to_string(),
            SqlMsg::Reply(SqlReply::Committed) => "COMMIT ok".to_string(),
            SqlMsg::Reply(SqlReply::VersionChecked { rows }) => format!("UPDATE {rows}"),
        }
    }
}
