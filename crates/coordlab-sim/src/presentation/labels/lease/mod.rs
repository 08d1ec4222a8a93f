//! The labels of the lease family's messages and timers.

mod call_worker;
mod fence_worker;
mod lease_msg;
mod lease_store;
mod lease_worker;
mod payment_api;
mod placed_lease;
