//! The lock-service family (chapter 6): an etcd-style consensus lock — a Raft server from
//! [`crate::protocols::raft`] replicating a key store with leases and revisions
//! (`lock_service`, `lock_store`) and the client that locks as etcd's `concurrency.Mutex`
//! (`lock_client`); the named lock services (Chubby, Hazelcast, Redisson) reduced to what
//! their stories need (`service_lock`) and their client (`service_client`); and ShedLock's
//! table of scheduled-job rows (`shedlock`).

pub mod lock_client;
pub mod lock_service;
pub mod lock_store;
pub mod service_client;
pub mod service_lock;
pub mod shedlock;
