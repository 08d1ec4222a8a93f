//! The database family's narration, one module per participant kind in `protocols::database`.

pub mod account_db;
pub mod advisory_db;
pub mod advisory_worker;
pub mod debit_worker;
pub mod row_lock_db;
pub mod txn_client;
