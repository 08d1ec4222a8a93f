//! The database family's narration, one module per participant kind in `protocols::database`.

pub mod account_db;
pub mod row_lock_db;
