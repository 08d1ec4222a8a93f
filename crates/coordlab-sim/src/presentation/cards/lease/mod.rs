//! The cards of the lease family's participants.

mod call_worker;
mod fence_worker;
mod fenced_resource;
mod job_table;
mod lease_store;
mod lease_worker;
mod payment_api;
mod payment_rail;
mod placed_lease;
