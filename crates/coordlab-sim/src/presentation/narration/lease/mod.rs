//! The lease family's narration, one module per participant kind in `protocols::lease`.

pub mod call_worker;
pub mod fence_worker;
pub mod fenced_resource;
pub mod job_table;
pub mod lease_store;
pub mod lease_worker;
pub mod payment_api;
pub mod payment_rail;
pub mod placed_lease;
