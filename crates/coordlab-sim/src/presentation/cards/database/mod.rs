//! The cards of the database family's participants.

mod account_db;
mod advisory_db;
mod advisory_worker;
mod debit_worker;
mod row_lock_db;
mod txn_client;
