//! Participant kinds, one file each. Every participant is a pure state machine driven by the
//! kernel (see [`crate::kernel::participant::Participant`]).

pub mod account_db;
pub mod debit_worker;
pub mod sql;
