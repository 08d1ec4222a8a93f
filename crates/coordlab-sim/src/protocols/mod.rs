//! Participant kinds, one file each. Every participant is a pure state machine driven by the
//! kernel (see [`crate::kernel::participant::Participant`]).

pub mod account_db;
pub mod call_worker;
pub mod card;
pub mod db_sql;
pub mod debit_worker;
pub mod fence_worker;
pub mod fenced_resource;
pub mod job_table;
pub mod lease_msg;
pub mod lease_store;
pub mod lease_worker;
pub mod lock_client;
pub mod lock_service;
pub mod lock_store;
pub mod payment_api;
pub mod payment_rail;
pub mod placed_lease;
pub mod raft;
pub mod redis;
pub mod redis_job;
pub mod redis_msg;
pub mod redis_sentinel;
pub mod redis_worker;
pub mod redlock_client;
pub mod row_lock_db;
pub mod row_locks;
pub mod service_client;
pub mod service_lock;
pub mod shedlock;
pub mod sql;
pub mod txn_client;
pub mod zk_lock_worker;
pub mod zookeeper;
