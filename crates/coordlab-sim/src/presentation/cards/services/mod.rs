//! The cards of the lock services' participants.

mod lock_client;
mod lock_service;
mod service_client;
mod service_lock;
mod shedlock;
