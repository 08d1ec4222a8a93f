//! How [`DbMsg`] reads on the picture's arrows and in the event log (a request as its SQL
//! text, which the PostgreSQL conformance tests also run), and why a statement takes its row
//! lock ([`RowAccess`], [`LockMode`]), in the narration's words.

use crate::kernel::participant::Label;
use crate::protocols::database::db_sql::{
    user_email, ClaimLock, DbMsg, DbReply, DbRequest, RowAccess, DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE,
};
use crate::protocols::database::row_locks::LockMode;

impl DbRequest {
    /// The statement as the player shows it and as the conformance tests run it on a real
    /// PostgreSQL, values bound as literals.
    pub fn sql_text(&self) -> String {
        match self {
            DbRequest::ClaimJob { lock } => {
                let clause = match lock {
                    ClaimLock::None => "",
                    ClaimLock::ForUpdate => " FOR UPDATE",
                    ClaimLock::NoWait => " FOR UPDATE NOWAIT",
                    ClaimLock::SkipLocked => " FOR UPDATE SKIP LOCKED",
                };
                format!("SELECT id FROM jobs WHERE status='pending' ORDER BY id LIMIT 1{clause}")
            }
            DbRequest::FinishJob { id } => {
                format!("UPDATE jobs SET status='done', runs=runs+1 WHERE id={id}")
            }
            DbRequest::AddToBalance { account, delta } => {
                let (sign, amount) = if *delta < 0 { ('-', -delta) } else { ('+', *delta) };
                format!(
                    "UPDATE accounts SET balance=balance{sign}{amount}, version=version+1 WHERE id={account}"
                )
            }
            DbRequest::Customer { access } => match access {
                RowAccess::Read => "SELECT name FROM customers WHERE id=1".to_string(),
                RowAccess::SelectFor(mode) => format!("SELECT name FROM customers WHERE id=1 {}", mode.sql()),
                RowAccess::InsertChild => "INSERT INTO orders (customer_id) VALUES (1)".to_string(),
                RowAccess::UpdateName => "UPDATE customers SET name='Asha K.' WHERE id=1".to_string(),
                RowAccess::Delete => "DELETE FROM customers WHERE id=1".to_string(),
            },
            DbRequest::UpdateUserByEmail { target, plan } => {
                format!(
                    "UPDATE users SET plan='{plan}' WHERE email='{}'",
                    user_email(*target)
                )
            }
            DbRequest::UpdateUserById { id, plan } => {
                format!("UPDATE users SET plan='{plan}' WHERE id={id}")
            }
            DbRequest::InsertUser { id, plan } => format!(
                "INSERT INTO users (id, email, plan) VALUES ({id}, '{}', '{plan}')",
                user_email(*id)
            ),
            DbRequest::Begin => "BEGIN".to_string(),
            DbRequest::Commit => "COMMIT".to_string(),
            DbRequest::Rollback => "ROLLBACK".to_string(),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statements_read_as_postgresql_sql() {
        assert_eq!(
            DbRequest::ClaimJob {
                lock: ClaimLock::SkipLocked
            }
            .sql_text(),
            "SELECT id FROM jobs WHERE status='pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"
        );
        assert_eq!(
            DbRequest::AddToBalance {
                account: 2,
                delta: -20
            }
            .sql_text(),
            "UPDATE accounts SET balance=balance-20, version=version+1 WHERE id=2"
        );
        assert_eq!(
            DbRequest::Customer {
                access: RowAccess::SelectFor(LockMode::KeyShare)
            }
            .sql_text(),
            "SELECT name FROM customers WHERE id=1 FOR KEY SHARE"
        );
    }
}
