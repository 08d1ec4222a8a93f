//! The labels of the lock services' messages and timers.

mod lock_client;
mod lock_service;
mod lock_store;
mod service_client;
mod service_lock;
mod shedlock;
