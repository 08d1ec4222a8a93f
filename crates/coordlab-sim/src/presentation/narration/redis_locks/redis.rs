//! What a Redis node saw as it started, served commands, expired keys and replicated, and the
//! sentences it reads as.

use crate::presentation::durations::tenths;
use std::fmt::Write;

/// Where a primary's new write goes after it answers: nowhere, straight down the stream, or
/// down the stream after the configured lag.
#[derive(Clone, Copy)]
pub enum Stream {
    NoReplicas,
    Now,
    AfterLagMs(u64),
}

/// One thing a Redis node saw; `me` is the node's own name.
pub enum RedisNodeSaw<'a> {
    /// Up as a primary with `keys` keys; `persistence` says whether an empty set is news.
    UpPrimary {
        me: &'a str,
        keys: usize,
        persistence: bool,
    },
    UpReplica {
        me: &'a str,
        of: &'a str,
    },
    LostLink {
        me: &'a str,
        primary: &'a str,
        offset: u64,
    },
    ReplicaRefusesWrite {
        me: &'a str,
    },
    Promoted {
        me: &'a str,
        offset: u64,
    },
    /// Told to replicate from `primary`; `was_primary` if it was a primary until now.
    NowReplicaOf {
        me: &'a str,
        primary: &'a str,
        was_primary: bool,
    },
    SetNxRefused {
        me: &'a str,
        key: &'a str,
        held: &'a str,
        client: &'a str,
    },
    Set {
        me: &'a str,
        key: &'a str,
        value: &'a str,
        client: &'a str,
        ttl_ms: u64,
        counter: Option<u64>,
        stream: Stream,
    },
    /// `DEL`, or the release script when `only_if` names the caller's value.
    Delete {
        me: &'a str,
        key: &'a str,
        held: Option<&'a str>,
        only_if: Option<&'a str>,
    },
    Expired {
        me: &'a str,
        key: &'a str,
        value: &'a str,
        on_access: bool,
    },
    SendsFullCopy {
        me: &'a str,
        replica: &'a str,
        offset: u64,
        have: u64,
    },
    /// `discarded` are the keys and values it had that its primary's copy lacks.
    HoldsCopy {
        me: &'a str,
        primary: &'a str,
        offset: u64,
        keys: usize,
        discarded: &'a [(&'a str, &'a str)],
    },
    AppliesStream {
        me: &'a str,
        primary: &'a str,
        applied: u32,
        offset: u64,
    },
    HoldsWait {
        me: &'a str,
        client: &'a str,
        needed: u32,
        target: u64,
        timeout_ms: u64,
    },
    WaitTimesOut {
        me: &'a str,
        client: &'a str,
        acked: u32,
        needed: u32,
    },
}

impl From<RedisNodeSaw<'_>> for String {
    fn from(saw: RedisNodeSaw<'_>) -> String {
        use RedisNodeSaw::*;
        match saw {
            UpPrimary { me, keys: 0, persistence: false } => format!(
                "{me} is up as a primary with no data: without persistence it remembers nothing from before."
            ),
            UpPrimary { me, keys: 0, .. } => format!("{me} is up as a primary with an empty data set."),
            UpPrimary { me, keys, .. } => format!("{me} is up as a primary with {keys} key(s)."),
            UpReplica { me, of } => {
                format!("{me} is up as a replica of {of} and asks it for a copy of the data.")
            }
            LostLink { me, primary, offset } => format!(
                "{me} has lost its link to {primary}; it keeps its data (#{offset}) and keeps trying to reconnect."
            ),
            ReplicaRefusesWrite { me } => format!(
                "{me} is a replica and refuses the write: clients must send writes to the primary."
            ),
            Promoted { me, offset } => format!(
                "{me} is promoted: it is the primary now, with the data it had at #{offset}. Any write that never reached it is simply not there."
            ),
            NowReplicaOf { me, primary, was_primary: true } => format!(
                "{me} is demoted to a replica of {primary}. It will replace its own data with {primary}'s copy: whatever only it had is discarded."
            ),
            NowReplicaOf { me, primary, .. } => format!("{me} now replicates from {primary}."),
            SetNxRefused { me, key, held, client } => format!(
                "{me} already has {key} = {held}, so SET NX does nothing and answers nil: {client} does not get the lock."
            ),
            Set {
                me,
                key,
                value,
                client,
                ttl_ms,
                counter,
                stream,
            } => {
                let mut s = format!(
                    "{me} sets {key} = {value} for {client} with a {} TTL by its own clock",
                    tenths(ttl_ms)
                );
                if let Some(c) = counter {
                    let _ = write!(s, " and the counter to {c}");
                }
                s.push('.');
                match stream {
                    Stream::NoReplicas => s.push_str(" It has no replicas: this node alone remembers it."),
                    Stream::Now => s.push_str(" The write goes down the replication stream straight away."),
                    Stream::AfterLagMs(lag) => {
                        let _ = write!(
                            s,
                            " It answers OK now; the replicas hear of the write only when the stream is next sent, {lag} ms from now."
                        );
                    }
                }
                s
            }
            Delete { me, key, held: None, .. } => format!("{me} has no {key} to delete."),
            Delete {
                me,
                key,
                held: Some(held),
                only_if: None,
            } => format!("{me} deletes {key} (it held {held}). DEL does not ask whose value that is."),
            Delete {
                me,
                key,
                held: Some(held),
                only_if: Some(mine),
            } if mine == held => format!(
                "{me} runs the release script: {key} still holds {held}, the caller's own value, so it is deleted."
            ),
            Delete {
                me,
                key,
                held: Some(held),
                only_if: Some(mine),
            } => format!(
                "{me} runs the release script: {key} holds {held}, not the caller's {mine}, so nothing is deleted."
            ),
            Expired {
                me,
                key,
                value,
                on_access: true,
            } => format!(
                "By {me}'s own clock {key} ({value}) has already expired, so it is gone before the command runs."
            ),
            Expired { me, key, value, .. } => format!(
                "By {me}'s own clock {key} ({value}) has expired: {me} deletes it. Nobody tells the client that set it, which may still be at work."
            ),
            SendsFullCopy {
                me,
                replica,
                offset,
                have,
            } => format!(
                "{me} sends {replica} a full copy of its data (up to #{offset}); the replica had #{have}."
            ),
            HoldsCopy {
                me,
                primary,
                offset,
                keys,
                discarded,
            } => {
                let mut s = format!("{me} now holds {primary}'s data as of #{offset}: {keys} key(s).");
                if !discarded.is_empty() {
                    s.push_str(" What it had of its own (");
                    for (i, (key, value)) in discarded.iter().enumerate() {
                        let sep = if i == 0 { "" } else { ", " };
                        let _ = write!(s, "{sep}{key} = {value}");
                    }
                    let _ = write!(s, ") is replaced: {primary} never had it.");
                }
                s
            }
            AppliesStream {
                me,
                primary,
                applied,
                offset,
            } => format!("{me} applies {applied} write(s) from {primary}'s stream and is now at #{offset}."),
            HoldsWait {
                me,
                client,
                needed,
                target,
                timeout_ms,
            } => format!(
                "{me} holds {client}'s WAIT until {needed} replica(s) confirm #{target}, at most {timeout_ms} ms. The write itself is already applied and visible to every client here."
            ),
            WaitTimesOut {
                me,
                client,
                acked,
                needed,
            } => format!(
                "{client}'s WAIT times out with {acked} of {needed} replica(s). The write stays on {me} regardless: WAIT reports, it never rolls back."
            ),
        }
    }
}
