//! The cards of the lease family's participants.

mod fenced_resource;
mod job_table;
mod lease_store;
mod payment_api;
mod payment_rail;
mod placed_lease;
