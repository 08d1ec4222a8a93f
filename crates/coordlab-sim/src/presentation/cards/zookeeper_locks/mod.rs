//! The card of the ZooKeeper ensemble.

mod zookeeper;
