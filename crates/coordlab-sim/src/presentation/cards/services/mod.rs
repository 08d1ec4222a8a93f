//! The cards of the lock services' participants.

mod lock_service;
mod service_lock;
mod shedlock;
