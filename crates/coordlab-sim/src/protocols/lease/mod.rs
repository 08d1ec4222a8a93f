//! The lease family (chapters 2–4): a lease store with one row per name (`lease_store`) or
//! a lease table placed on a primary, a replica or each node (`placed_lease`); the workers
//! that do a job under a lease (`lease_worker`, `fence_worker`, and `call_worker` for a job
//! that is one slow call); what their writes reach — the fenced ledger row that remembers the
//! highest token (`fenced_resource`, also the ledger of the Redis, ZooKeeper and lock-service
//! stories), a payment rail that knows no tokens, a slow payment API — and a job table that
//! makes the lock unnecessary (`job_table`). `lease_msg` is what they say to each other.

pub mod call_worker;
pub mod fence_worker;
pub mod fenced_resource;
pub mod job_table;
pub mod lease_msg;
pub mod lease_store;
pub mod lease_worker;
pub mod payment_api;
pub mod payment_rail;
pub mod placed_lease;
