//! The labels of ZooKeeper's messages and timers.

mod zk_lock_worker;
mod zookeeper;
