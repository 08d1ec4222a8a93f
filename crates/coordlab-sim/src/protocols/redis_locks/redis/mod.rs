//! A Redis node: a key-value store with `SET … NX PX`, `GET`, `DEL`, an atomic
//! compare-and-delete script and `WAIT`, key expiry judged by the node's own clock, and
//! persistence on or off.
//!
//! Replication is asynchronous: a primary applies a write, answers the client at once, and
//! only later — after the configured lag — sends the write down the stream to its replicas.
//! A crash inside that gap loses the write for good. `WAIT` lets a client learn how many
//! replicas have caught up; it never takes a write back. Replicas refuse writes, never expire
//! keys on their own (they wait for the primary's `DEL`), and copy the whole data set from
//! their primary whenever they (re)connect to it.
//!
//! One job per file, all on [`RedisNode`]:
//! - `node`: the participant — its role and the sentinels' orders, what it keeps on
//!   disk, how it starts, and its card;
//! - `keyspace`: the key-value commands and key expiry by the node's own clock;
//! - `replication`: the stream to the replicas, full copies, acknowledgements and `WAIT`.

mod keyspace;
mod node;
mod replication;

pub use keyspace::{Deletion, Grant};
pub use node::{RedisConfig, RedisDurable, RedisNode, Role, StoreTimer, SYNC_RETRY_MS};
pub use replication::STREAM_KEEP;
