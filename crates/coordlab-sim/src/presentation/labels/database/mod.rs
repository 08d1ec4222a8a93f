//! The labels of the database family's messages and timers.

mod advisory_sql;
mod advisory_worker;
mod db_sql;
mod debit_worker;
mod row_lock_db;
mod sql;
mod txn_client;
