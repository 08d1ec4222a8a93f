//! The ZooKeeper family's narration, one module per participant kind in
//! `protocols::zookeeper_locks`.

pub mod zk_lock_worker;
pub mod zookeeper;
