//! Participant kinds, one file each. Every participant is a pure state machine driven by the
//! kernel (see [`crate::kernel::participant::Participant`]).

pub mod account_db;
pub mod debit_worker;
pub mod fenced_resource;
pub mod job_table;
pub mod lease_msg;
pub mod lease_store;
pub mod lease_worker;
pub mod payment_rail;
pub mod raft;
pub mod sql;
