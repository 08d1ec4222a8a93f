//! The lock services' narration, one module per participant kind in `protocols::services`.

pub mod lock_client;
pub mod lock_service;
pub mod service_client;
pub mod service_lock;
pub mod shedlock;
