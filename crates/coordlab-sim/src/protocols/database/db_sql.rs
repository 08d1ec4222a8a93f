//! The statements of the database-lock scenarios (`skip-locked-queue`, `deadlock`,
//! `row-lock-modes`, `lock-granularity`) and their replies: one place for the SQL text the
//! player shows and the PostgreSQL conformance tests execute (`crates/coordlab-conformance`).
//!
//! The tables: `jobs (id, status, runs)` — a queue, `runs` counts how often a job was done;
//! `accounts (id, balance, version)` as in `lost-update`; `customers (id, name)` with child
//! table `orders (customer_id REFERENCES customers)`; `users (id, email, plan)` with no index
//! on `email` unless the scenario says so (a unique one if it does).

use super::row_locks::{LockMode, RowKey};

crate::inbox!(DbMsg);

pub const JOBS: &str = "jobs";
pub const ACCOUNTS: &str = "accounts";
pub const CUSTOMERS: &str = "customers";
pub const USERS: &str = "users";

/// How a queue worker's claim locks the job it picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimLock {
    /// A plain SELECT: no lock (the planted bug: two workers can claim the same job).
    None,
    /// `FOR UPDATE`: wait for a worker holding the first pending job.
    ForUpdate,
    /// `FOR UPDATE NOWAIT`: fail at once if the first pending job is locked.
    NoWait,
    /// `FOR UPDATE SKIP LOCKED`: take the first pending job nobody holds.
    SkipLocked,
}

/// What one `row-lock-modes` transaction does to customer 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowAccess {
    /// A plain SELECT: reads a snapshot, takes no row lock.
    Read,
    /// `SELECT … FOR <mode>`.
    SelectFor(LockMode),
    /// `INSERT INTO orders …` naming customer 1: the foreign-key check takes FOR KEY SHARE.
    InsertChild,
    /// `UPDATE customers SET name …`: the key is untouched, so FOR NO KEY UPDATE.
    UpdateName,
    /// `DELETE FROM customers …`: FOR UPDATE.
    Delete,
}

impl RowAccess {
    /// The row lock it takes on the customer, if any.
    pub fn lock(self) -> Option<LockMode> {
        match self {
            RowAccess::Read => None,
            RowAccess::SelectFor(mode) => Some(mode),
            RowAccess::InsertChild => Some(LockMode::KeyShare),
            RowAccess::UpdateName => Some(LockMode::NoKeyUpdate),
            RowAccess::Delete => Some(LockMode::Update),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbRequest {
    /// `BEGIN`: a fresh transaction on a fresh connection; whatever an earlier connection of
    /// this client left open is rolled back.
    Begin,
    /// `SELECT id FROM jobs WHERE status='pending' ORDER BY id LIMIT 1 [FOR UPDATE …]`.
    ClaimJob {
        lock: ClaimLock,
    },
    /// `UPDATE jobs SET status='done', runs=runs+1 WHERE id=:id`.
    FinishJob {
        id: u32,
    },
    /// `UPDATE accounts SET balance=balance+:delta, version=version+1 WHERE id=:account`.
    AddToBalance {
        account: u32,
        delta: i64,
    },
    /// One of the `row-lock-modes` statements on customer 1.
    Customer {
        access: RowAccess,
    },
    /// `UPDATE users SET plan=:plan WHERE email=:email` (the row with id `target`); with no
    /// index on `email` every row is scanned, and InnoDB at REPEATABLE READ locks them all.
    UpdateUserByEmail {
        target: u32,
        plan: &'static str,
    },
    /// `UPDATE users SET plan=:plan WHERE id=:id`: by primary key, one row.
    UpdateUserById {
        id: u32,
        plan: &'static str,
    },
    /// `INSERT INTO users (id, email, plan) VALUES (…)`: a new user, `id` past the last.
    InsertUser {
        id: u32,
        plan: &'static str,
    },
    Commit,
    Rollback,
}

/// SQLSTATE of a row lock refused by `NOWAIT`.
pub const LOCK_NOT_AVAILABLE: &str = "55P03";
/// SQLSTATE of a statement on a connection the database no longer has (it restarted).
pub const NO_CONNECTION: &str = "08003";
/// SQLSTATE of the transaction deadlock detection aborted.
pub const DEADLOCK_DETECTED: &str = "40P01";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbReply {
    Begun,
    /// The claimed job, or none left to claim.
    Job(Option<u32>),
    /// A statement's row count (`UPDATE 1`, one row read).
    Rows(u32),
    Committed,
    RolledBack,
    /// The statement failed; the transaction is aborted until ROLLBACK.
    Error {
        sqlstate: &'static str,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbMsg {
    Request(DbRequest),
    Reply(DbReply),
}

/// The row key of customer 1, the job `id`, the account `id`, the user `id`.
pub fn customer_row() -> RowKey {
    RowKey {
        table: CUSTOMERS,
        id: 1,
    }
}

pub fn job_row(id: u32) -> RowKey {
    RowKey { table: JOBS, id }
}

pub fn account_row(id: u32) -> RowKey {
    RowKey { table: ACCOUNTS, id }
}

pub fn user_row(id: u32) -> RowKey {
    RowKey { table: USERS, id }
}

/// The e-mail address of user `id`.
pub fn user_email(id: u32) -> String {
    format!("u{id}@example.com")
}
