//! The ZooKeeper family (chapter 6): the ensemble as one linearizable service with sessions,
//! ephemeral sequential znodes and watches (`zookeeper`), and the worker that takes the lock
//! with the classic recipe and writes with its node's sequence number as the token
//! (`zk_lock_worker`).

pub mod zk_lock_worker;
pub mod zookeeper;
