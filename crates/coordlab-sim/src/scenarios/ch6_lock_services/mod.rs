//! Chapter 6, real lock services: Redis with Sentinel failover, Redlock, Redisson's watchdog,
//! the ZooKeeper recipe, an etcd-style consensus lock, Chubby's sequencers, Hazelcast's fenced
//! lock and ShedLock for scheduled jobs. Each is modelled on how the product behaves, with
//! the worlds (`redis_common`, `service_world`, `zookeeper_world`, `consensus_world`,
//! `lock_service_common`) that judge its runs.

/// The chapter of the course this folder's scenarios belong to (the registry gives it to each;
/// the course walks chapters in order).
pub const CHAPTER: u8 = 6;

pub mod chubby_sequencer;
pub mod consensus_lock;
pub mod consensus_world;
pub mod hazelcast_fenced_lock;
pub mod lock_service_common;
pub mod redis_common;
pub mod redis_failover;
pub mod redis_failover_beats;
pub mod redisson_watchdog;
pub mod redlock;
pub mod redlock_beats;
pub mod scheduled_job_guard;
pub mod service_world;
pub mod zookeeper_lock;
pub mod zookeeper_world;
