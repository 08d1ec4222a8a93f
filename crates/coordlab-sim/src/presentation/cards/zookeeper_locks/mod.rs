//! The card of the ZooKeeper ensemble.

mod zk_lock_worker;
mod zookeeper;
