//! The wire vocabulary between workers and the account database: a handful of SQL
//! statements on one row, `accounts.id = 42`, and their replies.

crate::inbox!(SqlMsg);

/// The one account every lost-update worker touches.
pub const ACCOUNT_ID: u32 = 42;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlRequest {
    /// `SELECT balance, version FROM accounts WHERE id = 42 [FOR UPDATE]`.
    Select {
        for_update: bool,
    },
    /// `UPDATE accounts SET balance = :balance, version = version + 1 WHERE id = 42`, inside
    /// the open transaction.
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

impl SqlRequest {
    /// The statement as the player shows it and as the conformance tests run it on a real
    /// PostgreSQL (`crates/coordlab-conformance`), values bound as literals. A plain UPDATE
    /// also moves `version` on, as the database's COMMIT does to the row here: a row's
    /// version counts every committed change, whichever statement made it.
    pub fn sql_text(&self) -> String {
        match self {
            SqlRequest::Select { for_update: false } => {
                format!("SELECT balance, version FROM accounts WHERE id={ACCOUNT_ID}")
            }
            SqlRequest::Select { for_update: true } => {
                format!("SELECT balance, version FROM accounts WHERE id={ACCOUNT_ID} FOR UPDATE")
            }
            SqlRequest::Update { balance } => {
                format!("UPDATE accounts SET balance={balance}, version=version+1 WHERE id={ACCOUNT_ID}")
            }
            SqlRequest::UpdateIfVersion { balance, expected_version } => format!(
                "UPDATE accounts SET balance={balance}, version={} WHERE id={ACCOUNT_ID} AND version={expected_version}",
                expected_version + 1
            ),
            SqlRequest::Commit => "COMMIT".to_string(),
        }
    }
}
