//! The wire vocabulary of the Redis chapter: client commands (`SET … NX PX`, `DEL`, a
//! compare-and-delete script, `WAIT`), the primary → replica stream, the sentinels' pings and
//! reconfigurations, and what the sentinels say to each other (is the primary down, a vote,
//! the configuration they agreed on). (The ledger speaks its own protocol,
//! [`crate::protocols::lease::lease_msg`].)

use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;

crate::inbox!(RedisMsg);

/// One key as a Redis node stores it. The expiry is an absolute reading of the node's own
/// clock — Redis replicates expiries as absolute times, so whichever node holds the key
/// judges it by its own clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyEntry {
    pub value: String,
    pub expires_at_us: Option<u64>,
}

impl KeyEntry {
    /// Whether the key still exists at this clock reading.
    pub fn alive_at(&self, local_now_us: u64) -> bool {
        self.expires_at_us.is_none_or(|at| local_now_us < at)
    }
}

/// A write as it travels down the replication stream: the effect, not the command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplOp {
    Set {
        key: String,
        value: String,
        expires_at_us: Option<u64>,
    },
    Del {
        key: String,
    },
}

/// One write in a primary's stream: which primary produced it and at which offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamEntry {
    pub origin: NodeId,
    pub offset: u64,
    pub op: ReplOp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisMsg {
    /// `SET key value NX PX ttl`; with `incr`, the acquire script that also increments a
    /// counter in the same atomic step and returns it (the usual way to get a token).
    Set {
        key: String,
        value: String,
        nx: bool,
        px_ms: u64,
        incr: Option<String>,
    },
    SetReply {
        key: String,
        ok: bool,
        counter: Option<u64>,
    },
    Get {
        key: String,
    },
    GetReply {
        key: String,
        value: Option<String>,
    },
    /// `DEL key`: whoever's value it holds.
    Del {
        key: String,
    },
    /// The release script: `if GET key == value then DEL key`, one atomic step.
    CompareAndDelete {
        key: String,
        value: String,
    },
    DelReply {
        key: String,
        deleted: bool,
    },
    /// `WAIT replicas timeout`: delay the answer until that many replicas acknowledged this
    /// client's writes, or the timeout passes. Reports a count; undoes nothing, and makes no
    /// write safe from a failover that promotes a replica without it.
    Wait {
        replicas: u32,
        timeout_ms: u64,
    },
    WaitReply {
        acked: u32,
    },
    /// A refusal, e.g. `READONLY` from a replica.
    Error {
        text: String,
    },
    /// Replica → primary: connect (or reconnect) and ask for a copy.
    Sync {
        have: u64,
    },
    /// Primary → replica: the whole data set as of `offset`.
    FullSync {
        data: VecMap<String, KeyEntry>,
        offset: u64,
        stream: Vec<StreamEntry>,
    },
    /// Primary → replica: the next writes of the stream, in order.
    Replicate {
        entries: Vec<StreamEntry>,
    },
    /// Replica → primary: everything up to `offset` is applied here.
    ReplAck {
        offset: u64,
    },
    /// Sentinel → node.
    Ping,
    Pong {
        primary: bool,
        replica_of: Option<NodeId>,
        offset: u64,
    },
    /// Sentinel → node: `REPLICAOF NO ONE` (`primary: None`) or `REPLICAOF <primary>`.
    ReplicaOf {
        primary: Option<(NodeId, String)>,
        epoch: u64,
    },
    /// Sentinel → client: where the primary is now.
    PrimaryIs {
        primary: NodeId,
        name: String,
        epoch: u64,
    },
    /// Client → sentinel.
    WhoIsPrimary,
    /// Sentinel → sentinel (`SENTINEL is-master-down-by-addr`): do you also find `primary`
    /// down? With a `candidate`, also: vote for it to perform the failover in `epoch`.
    IsPrimaryDown {
        primary: NodeId,
        name: String,
        epoch: u64,
        candidate: Option<NodeId>,
    },
    /// The answer: the sender's own judgement, and (when asked) its vote.
    PrimaryDownReply {
        primary: NodeId,
        name: String,
        down: bool,
        vote: Option<Vote>,
    },
    /// Sentinel → sentinel: the configuration it holds, with the epoch it was made in.
    Hello {
        primary: NodeId,
        name: String,
        epoch: u64,
    },
}

/// A sentinel's vote: the sentinel it chose to perform the failover, and the epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    pub leader: NodeId,
    pub name: String,
    pub epoch: u64,
}

/// The acquire script a worker runs with `EVAL` when it wants a token with its lock: `SET
/// KEYS[1] ARGV[1] NX PX ARGV[2]` and, only if that set the key, `INCR KEYS[2]`, in one
/// atomic step. It answers the counter's new value, or nil when the key exists.
pub const ACQUIRE_SCRIPT: &str = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return false";

/// The release script: `DEL KEYS[1]` only if it still holds ARGV[1], the caller's value.
pub const RELEASE_SCRIPT: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

impl RedisMsg {
    /// A client command as a real Redis runs it: the words of one command (`SET`, `EVAL`
    /// with [`ACQUIRE_SCRIPT`] or [`RELEASE_SCRIPT`], `DEL`, `GET`, `WAIT`). `None` for
    /// everything else (replies, replication, sentinels). The conformance tests send these.
    pub fn command_args(&self) -> Option<Vec<String>> {
        let words = |w: &[&str]| Some(w.iter().map(|s| s.to_string()).collect());
        match self {
            RedisMsg::Set {
                key,
                value,
                nx,
                px_ms,
                incr: None,
            } => {
                let px = px_ms.to_string();
                match nx {
                    true => words(&["SET", key, value, "NX", "PX", &px]),
                    false => words(&["SET", key, value, "PX", &px]),
                }
            }
            RedisMsg::Set {
                key,
                value,
                px_ms,
                incr: Some(counter),
                ..
            } => words(&[
                "EVAL",
                ACQUIRE_SCRIPT,
                "2",
                key,
                counter,
                value,
                &px_ms.to_string(),
            ]),
            RedisMsg::Get { key } => words(&["GET", key]),
            RedisMsg::Del { key } => words(&["DEL", key]),
            RedisMsg::CompareAndDelete { key, value } => words(&["EVAL", RELEASE_SCRIPT, "1", key, value]),
            RedisMsg::Wait { replicas, timeout_ms } => {
                words(&["WAIT", &replicas.to_string(), &timeout_ms.to_string()])
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::participant::Label;

    #[test]
    fn every_client_command_reads_back_from_its_label() {
        let commands = [
            RedisMsg::Set {
                key: "lock".into(),
                value: "a-e27e".into(),
                nx: true,
                px_ms: 30_000,
                incr: Some("fence".into()),
            },
            RedisMsg::Set {
                key: "lock".into(),
                value: "b-1".into(),
                nx: true,
                px_ms: 500,
                incr: None,
            },
            RedisMsg::Set {
                key: "k".into(),
                value: "v".into(),
                nx: false,
                px_ms: 1,
                incr: None,
            },
            RedisMsg::Get { key: "lock".into() },
            RedisMsg::Del { key: "lock".into() },
            RedisMsg::CompareAndDelete {
                key: "lock".into(),
                value: "a-e27e".into(),
            },
            RedisMsg::Wait {
                replicas: 1,
                timeout_ms: 1_000,
            },
        ];
        for command in commands {
            assert!(command.command_args().is_some(), "{command:?}");
            assert_eq!(RedisMsg::parse_client_command(&command.label()), Some(command));
        }
        assert_eq!(RedisMsg::parse_client_command("PING"), None);
        assert_eq!(RedisMsg::parse_client_command("stream #1: SET lock a"), None);
    }
}
