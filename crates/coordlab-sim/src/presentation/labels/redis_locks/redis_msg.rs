//! How [`RedisMsg`] reads on the picture's arrows and in the event log, and how a client
//! command is read back from its label.

use crate::kernel::participant::Label;
use crate::protocols::redis_locks::redis_msg::{RedisMsg, ReplOp};

impl Label for RedisMsg {
    fn label(&self) -> String {
        match self {
            // A plain command reads as the words a real Redis runs, so the two never differ
            // (`parse_client_command` reads them back).
            RedisMsg::Set { incr: None, .. }
            | RedisMsg::Get { .. }
            | RedisMsg::Del { .. }
            | RedisMsg::Wait { .. } => self.command_args().unwrap_or_default().join(" "),
            RedisMsg::Set {
                key,
                value,
                px_ms,
                incr: Some(counter),
                ..
            } => format!("acquire script: SET {key} {value} NX PX {px_ms} + INCR {counter}"),
            RedisMsg::SetReply {
                ok: true,
                counter: Some(c),
                ..
            } => format!("OK, token {c}"),
            RedisMsg::SetReply { ok: true, .. } => "OK".to_string(),
            RedisMsg::SetReply { ok: false, .. } => "(nil): the key exists".to_string(),
            RedisMsg::GetReply { value: Some(v), .. } => format!("\"{v}\""),
            RedisMsg::GetReply { value: None, .. } => "(nil)".to_string(),
            RedisMsg::CompareAndDelete { key, value } => {
                format!("release script: DEL {key} only if it is {value}")
            }
            RedisMsg::DelReply { deleted, .. } => format!("(integer) {}", u8::from(*deleted)),
            RedisMsg::WaitReply { acked } => format!("WAIT: {acked} replica(s) have it"),
            RedisMsg::Error { text } => format!("-{text}"),
            RedisMsg::Sync { have } => format!("PSYNC (I have up to #{have})"),
            RedisMsg::FullSync { offset, data, .. } => {
                format!("full copy: {} key(s), up to #{offset}", data.len())
            }
            RedisMsg::Replicate { entries } => {
                let ops: Vec<String> = entries.iter().map(|e| e.op.label()).collect();
                match (entries.first(), entries.last()) {
                    (Some(a), Some(b)) if a.offset == b.offset => {
                        format!("stream #{}: {}", a.offset, ops.join(", "))
                    }
                    (Some(a), Some(b)) => format!("stream #{}–{}: {}", a.offset, b.offset, ops.join(", ")),
                    _ => "stream: (empty)".to_string(),
                }
            }
            RedisMsg::ReplAck { offset } => format!("REPLCONF ACK {offset}"),
            RedisMsg::Ping => "PING".to_string(),
            RedisMsg::Pong {
                primary: true,
                offset,
                ..
            } => format!("PONG (primary, #{offset})"),
            RedisMsg::Pong { offset, .. } => format!("PONG (replica, #{offset})"),
            RedisMsg::ReplicaOf { primary: None, .. } => "REPLICAOF NO ONE".to_string(),
            RedisMsg::ReplicaOf {
                primary: Some((_, name)),
                ..
            } => format!("REPLICAOF {name}"),
            RedisMsg::PrimaryIs { name, .. } => format!("the primary is {name}"),
            RedisMsg::WhoIsPrimary => "which node is the primary?".to_string(),
            RedisMsg::IsPrimaryDown {
                name,
                candidate: None,
                ..
            } => format!("is {name} down?"),
            RedisMsg::IsPrimaryDown { name, epoch, .. } => {
                format!("is {name} down? vote for me in epoch {epoch}")
            }
            RedisMsg::PrimaryDownReply { name, down, vote, .. } => {
                let judgement = if *down {
                    format!("{name} is down")
                } else {
                    format!("{name} is not down to me")
                };
                match vote {
                    Some(v) => format!("{judgement}; my vote in epoch {}: {}", v.epoch, v.name),
                    None => judgement,
                }
            }
            RedisMsg::Hello { name, epoch, .. } => format!("hello: the primary is {name} (epoch {epoch})"),
        }
    }
}

impl ReplOp {
    pub fn label(&self) -> String {
        match self {
            ReplOp::Set { key, value, .. } => format!("SET {key} {value}"),
            ReplOp::Del { key } => format!("DEL {key}"),
        }
    }
}

impl RedisMsg {
    /// Reads a client command back from the label the player shows: the inverse of
    /// [`Label::label`](crate::kernel::message::Label::label) for the messages [`RedisMsg::command_args`] runs, so a trace's text
    /// is enough to replay its commands on a real Redis.
    pub fn parse_client_command(label: &str) -> Option<RedisMsg> {
        let script = label.strip_prefix("acquire script: ");
        let release = label.strip_prefix("release script: ");
        let words: Vec<&str> = script.or(release).unwrap_or(label).split(' ').collect();
        let number = |s: &str| s.parse::<u64>().ok();
        match (script.is_some(), release.is_some(), &words[..]) {
            (true, _, ["SET", key, value, "NX", "PX", px, "+", "INCR", counter]) => Some(RedisMsg::Set {
                key: key.to_string(),
                value: value.to_string(),
                nx: true,
                px_ms: number(px)?,
                incr: Some(counter.to_string()),
            }),
            (_, true, ["DEL", key, "only", "if", "it", "is", value]) => Some(RedisMsg::CompareAndDelete {
                key: key.to_string(),
                value: value.to_string(),
            }),
            (false, false, ["SET", key, value, rest @ ..]) => {
                let (nx, px) = match rest {
                    ["NX", "PX", px] => (true, px),
                    ["PX", px] => (false, px),
                    _ => return None,
                };
                Some(RedisMsg::Set {
                    key: key.to_string(),
                    value: value.to_string(),
                    nx,
                    px_ms: number(px)?,
                    incr: None,
                })
            }
            (false, false, ["GET", key]) => Some(RedisMsg::Get { key: key.to_string() }),
            (false, false, ["DEL", key]) => Some(RedisMsg::Del { key: key.to_string() }),
            (false, false, ["WAIT", replicas, timeout]) => Some(RedisMsg::Wait {
                replicas: u32::try_from(number(replicas)?).ok()?,
                timeout_ms: number(timeout)?,
            }),
            _ => None,
        }
    }
}
