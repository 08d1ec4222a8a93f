//! The key-value store of a Redis node: `SET … NX PX` (and the acquire script that also
//! increments a counter), `GET`, `DEL` and the compare-and-delete release script, and key
//! expiry judged by the node's own clock. Every write it applies goes to `replication` next.

use super::node::{RedisNode, StoreTimer};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Ctx;
use crate::kernel::time::MS_US;
use crate::presentation::narration::redis_locks::redis::{RedisNodeSaw, Stream};
use crate::protocols::redis_locks::redis_msg::{KeyEntry, RedisMsg, ReplOp};

/// A successful `SET NX`: what the world reads to list grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub client: NodeId,
    pub value: String,
    pub counter: Option<u64>,
}

/// A key removed by a client's `DEL` or release script, and the value it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deletion {
    pub client: NodeId,
    pub key: String,
    pub value: String,
}

impl RedisNode {
    /// The key as a read sees it at this clock reading: absent once expired.
    pub fn get(&self, key: &str, local_now_us: u64) -> Option<&KeyEntry> {
        self.data.get(key).filter(|e| e.alive_at(local_now_us))
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn set(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        key: String,
        value: String,
        nx: bool,
        px_ms: u64,
        incr: Option<String>,
    ) {
        let me = ctx.me();
        let client = ctx.name(from);
        let reply = |ctx: &mut Ctx<'_, Self>, key, ok, counter| {
            ctx.send(from, RedisMsg::SetReply { key, ok, counter });
        };
        self.expire_if_due(ctx, &key);
        if let (true, Some(held)) = (nx, self.data.get(&key)) {
            ctx.note(RedisNodeSaw::SetNxRefused {
                me,
                key: &key,
                held: &held.value,
                client,
            });
            self.after_writes(ctx);
            return reply(ctx, key, false, None);
        }
        let expires_at_us = Some(ctx.local_now_us + px_ms * MS_US);
        self.write(
            ctx,
            ReplOp::Set {
                key: key.clone(),
                value: value.clone(),
                expires_at_us,
            },
        );
        let counter = incr.map(|counter_key| {
            let next = self
                .data
                .get(&counter_key)
                .and_then(|e| e.value.parse::<u64>().ok())
                .unwrap_or(0)
                + 1;
            self.write(
                ctx,
                ReplOp::Set {
                    key: counter_key,
                    value: next.to_string(),
                    expires_at_us: None,
                },
            );
            next
        });
        self.last_write.insert(from, self.offset);
        if nx {
            self.grants.push(Grant {
                client: from,
                value: value.clone(),
                counter,
            });
        }
        let stream = if self.replicas.is_empty() {
            Stream::NoReplicas
        } else if self.config.replication_lag_ms == 0 {
            Stream::Now
        } else {
            Stream::AfterLagMs(self.config.replication_lag_ms)
        };
        ctx.note(RedisNodeSaw::Set {
            me,
            key: &key,
            value: &value,
            client,
            ttl_ms: px_ms,
            counter,
            stream,
        });
        self.after_writes(ctx);
        reply(ctx, key, true, counter);
    }

    /// `DEL key`, or with `only_if` the release script that deletes only that value.
    pub(super) fn delete(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        key: String,
        only_if: Option<String>,
    ) {
        let me = ctx.me();
        self.expire_if_due(ctx, &key);
        let current = self.data.get(&key).map(|e| e.value.clone());
        let deleted = match (&only_if, &current) {
            (None, Some(_)) => true,
            (Some(mine), Some(v)) => mine == v,
            (_, None) => false,
        };
        ctx.note(RedisNodeSaw::Delete {
            me,
            key: &key,
            held: current.as_deref(),
            only_if: only_if.as_deref(),
        });
        if let (true, Some(value)) = (deleted, current) {
            self.deletions.push(Deletion {
                client: from,
                key: key.clone(),
                value,
            });
            self.write(ctx, ReplOp::Del { key: key.clone() });
            self.last_write.insert(from, self.offset);
        }
        self.after_writes(ctx);
        ctx.send(from, RedisMsg::DelReply { key, deleted });
    }

    /// Changes the data as `op` says; no timers, no stream.
    pub(super) fn apply(&mut self, op: &ReplOp) {
        match op {
            ReplOp::Set {
                key,
                value,
                expires_at_us,
            } => {
                self.data.insert(
                    key.clone(),
                    KeyEntry {
                        value: value.clone(),
                        expires_at_us: *expires_at_us,
                    },
                );
            }
            ReplOp::Del { key } => {
                self.data.remove(key);
            }
        }
    }

    /// Applies a write here, keeps its key's expiry timer in step, and queues it for the
    /// stream.
    fn write(&mut self, ctx: &mut Ctx<'_, Self>, op: ReplOp) {
        self.apply(&op);
        match &op {
            ReplOp::Set {
                key,
                expires_at_us: Some(at),
                ..
            } => ctx.set_timer(
                StoreTimer::Expire { key: key.clone() },
                at.saturating_sub(ctx.local_now_us),
            ),
            ReplOp::Set { key, .. } | ReplOp::Del { key } => {
                ctx.cancel_timer(StoreTimer::Expire { key: key.clone() })
            }
        }
        self.log_write(ctx.node, op);
    }

    /// A primary judges expiries by its own clock: one timer per key with a TTL.
    pub(super) fn arm_expiry(&mut self, ctx: &mut Ctx<'_, Self>) {
        for (key, e) in &self.data {
            if let Some(at) = e.expires_at_us {
                ctx.set_timer(
                    StoreTimer::Expire { key: key.clone() },
                    at.saturating_sub(ctx.local_now_us),
                );
            }
        }
    }

    /// A key's expiry timer fired: a primary deletes it if its own clock agrees.
    pub(super) fn expiry_due(&mut self, ctx: &mut Ctx<'_, Self>, key: String) {
        let Some(at) = self.data.get(&key).and_then(|e| e.expires_at_us) else {
            return;
        };
        if !self.is_primary() {
            return;
        }
        if ctx.local_now_us < at {
            // A slow clock: not yet by this node's reckoning.
            ctx.set_timer(StoreTimer::Expire { key }, at - ctx.local_now_us);
            return;
        }
        self.expire(ctx, &key, false);
        self.after_writes(ctx);
    }

    /// On a primary, a key found expired on access is deleted (and the deletion streamed),
    /// as Redis does lazily; a replica leaves it for its primary's `DEL`.
    fn expire_if_due(&mut self, ctx: &mut Ctx<'_, Self>, key: &str) {
        self.expire(ctx, key, true);
    }

    fn expire(&mut self, ctx: &mut Ctx<'_, Self>, key: &str, on_access: bool) {
        let now = ctx.local_now_us;
        let due = self.data.get(key).is_some_and(|e| !e.alive_at(now));
        if due && self.is_primary() {
            ctx.note(RedisNodeSaw::Expired {
                me: ctx.me(),
                key,
                value: self.data.get(key).map_or("", |e| &e.value),
                on_access,
            });
            self.write(ctx, ReplOp::Del { key: key.to_string() });
        }
    }
}
