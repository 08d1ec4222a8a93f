//! Asynchronous replication of a Redis node. As a primary it buffers every write it applied
//! and streams the buffer to its replicas after the configured lag, sends a full copy to a
//! replica that (re)connects, and answers `WAIT` from the replicas' acknowledgements. As a
//! replica it asks for a copy, applies the stream in order, and starts over on a gap.

use super::node::{RedisNode, Role, StoreTimer};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Ctx;
use crate::kernel::time::MS_US;
use crate::presentation::narration::redis_locks::redis::RedisNodeSaw;
use crate::protocols::redis_locks::redis_msg::{KeyEntry, RedisMsg, ReplOp, StreamEntry};

/// How many recent stream entries a node keeps for the inspector.
pub const STREAM_KEEP: usize = 12;

/// A client's `WAIT` that has not been answered yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PendingWait {
    id: u64,
    client: NodeId,
    target: u64,
    needed: u32,
}

impl RedisNode {
    fn push_stream(&mut self, entry: StreamEntry) {
        self.stream.push(entry);
        if self.stream.len() > STREAM_KEEP {
            self.stream.remove(0);
        }
    }

    /// Gives a write this node (`origin`) just applied the next offset, and queues it for
    /// the stream.
    pub(super) fn log_write(&mut self, origin: NodeId, op: ReplOp) {
        self.offset += 1;
        let entry = StreamEntry {
            origin,
            offset: self.offset,
            op,
        };
        self.push_stream(entry.clone());
        self.unsent.push(entry);
    }

    /// Replica: (re)connect to `primary` and ask it for a copy.
    pub(super) fn request_sync(&mut self, ctx: &mut Ctx<'_, Self>, primary: NodeId) {
        self.asked_sync_us = ctx.local_now_us;
        ctx.send(primary, RedisMsg::Sync { have: self.offset });
    }

    /// Primary: a replica connected; it gets the whole data set.
    pub(super) fn send_full_copy(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, have: u64) {
        if !self.is_primary() {
            return; // not (yet) a primary: the replica asks again on its next ping
        }
        self.replicas.insert(from, 0);
        ctx.note(RedisNodeSaw::SendsFullCopy {
            me: ctx.me(),
            replica: ctx.name(from),
            offset: self.offset,
            have,
        });
        ctx.send(
            from,
            RedisMsg::FullSync {
                data: self.data.clone(),
                offset: self.offset,
                stream: self.stream.clone(),
            },
        );
    }

    /// Replica: the copy it asked its primary for replaces whatever it had.
    pub(super) fn take_full_copy(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        data: VecMap<String, KeyEntry>,
        offset: u64,
        stream: Vec<StreamEntry>,
    ) {
        if self.role != (Role::Replica { of: from }) {
            return;
        }
        let had = std::mem::replace(&mut self.data, data);
        self.offset = offset;
        self.stream = stream;
        self.synced = true;
        self.link_down = false;
        self.persist(ctx);
        // Keys it had that the copy lacks, or holds with another value, are gone for good.
        let discarded: Vec<(&str, &str)> = had
            .iter()
            .filter(|(k, e)| self.data.get(*k).is_none_or(|d| d.value != e.value))
            .map(|(k, e)| (k.as_str(), e.value.as_str()))
            .collect();
        ctx.note(RedisNodeSaw::HoldsCopy {
            me: ctx.me(),
            primary: ctx.name(from),
            offset,
            keys: self.data.len(),
            discarded: &discarded,
        });
        ctx.send(from, RedisMsg::ReplAck { offset });
    }

    /// Replica: the next writes of its primary's stream.
    pub(super) fn apply_stream(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, entries: Vec<StreamEntry>) {
        if self.role != (Role::Replica { of: from }) || !self.synced {
            return; // a stream from a node that is not (or not yet) this replica's primary
        }
        let mut applied = 0;
        for e in entries {
            if e.offset <= self.offset {
                continue; // already in the copy it received
            }
            if e.offset != self.offset + 1 {
                // A gap: something was lost on the way. Start over with a full copy.
                self.synced = false;
                self.request_sync(ctx, from);
                return;
            }
            self.apply(&e.op);
            self.offset = e.offset;
            self.push_stream(e);
            applied += 1;
        }
        if applied > 0 {
            self.persist(ctx);
            ctx.note(RedisNodeSaw::AppliesStream {
                me: ctx.me(),
                primary: ctx.name(from),
                applied,
                offset: self.offset,
            });
            ctx.send(from, RedisMsg::ReplAck { offset: self.offset });
        }
    }

    /// Primary: a replica has everything up to `offset`.
    pub(super) fn acknowledged(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, offset: u64) {
        if !self.is_primary() {
            return;
        }
        // Only a replica this primary synced counts: an acknowledgement that arrives late from a
        // node it never sent a copy to (one still in flight across this primary's restart, or a
        // held message released) says nothing about what that node has of this primary's data.
        let Some(acked) = self.replicas.get_mut(&from) else {
            return;
        };
        *acked = (*acked).max(offset);
        self.answer_waits(ctx);
    }

    /// `WAIT needed timeout_ms`: answers at once if enough replicas have the client's latest
    /// write, or holds the answer until they do or the timeout passes.
    pub(super) fn wait(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, needed: u32, timeout_ms: u64) {
        let target = self.last_write.get(&from).copied().unwrap_or(0);
        let acked = self.acked_count(target);
        if acked >= needed {
            ctx.send(from, RedisMsg::WaitReply { acked });
            return;
        }
        let id = self.next_wait;
        self.next_wait += 1;
        self.waits.push(PendingWait {
            id,
            client: from,
            target,
            needed,
        });
        ctx.set_timer(StoreTimer::WaitTimeout { id }, timeout_ms * MS_US);
        ctx.note(RedisNodeSaw::HoldsWait {
            me: ctx.me(),
            client: ctx.name(from),
            needed,
            target,
            timeout_ms,
        });
    }

    fn acked_count(&self, target: u64) -> u32 {
        self.replicas.values().filter(|o| **o >= target).count() as u32
    }

    fn answer_waits(&mut self, ctx: &mut Ctx<'_, Self>) {
        let mut still = Vec::new();
        for w in std::mem::take(&mut self.waits) {
            let acked = self.acked_count(w.target);
            if acked >= w.needed {
                ctx.cancel_timer(StoreTimer::WaitTimeout { id: w.id });
                ctx.send(w.client, RedisMsg::WaitReply { acked });
            } else {
                still.push(w);
            }
        }
        self.waits = still;
    }

    /// A `WAIT`'s timeout passed: it answers with the count it has.
    pub(super) fn wait_timed_out(&mut self, ctx: &mut Ctx<'_, Self>, id: u64) {
        let Some(pos) = self.waits.iter().position(|w| w.id == id) else {
            return;
        };
        let w = self.waits.remove(pos);
        let acked = self.acked_count(w.target);
        ctx.note(RedisNodeSaw::WaitTimesOut {
            me: ctx.me(),
            client: ctx.name(w.client),
            acked,
            needed: w.needed,
        });
        ctx.send(w.client, RedisMsg::WaitReply { acked });
    }

    /// Persists, and makes sure the buffered writes will be streamed after the lag.
    pub(super) fn after_writes(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.unsent.is_empty() {
            return;
        }
        self.persist(ctx);
        if self.replicas.is_empty() {
            self.unsent.clear(); // nobody to stream to; a replica that connects gets a full copy
        } else if self.config.replication_lag_ms == 0 {
            self.flush(ctx);
        } else if !self.flush_pending {
            self.flush_pending = true;
            ctx.set_timer(StoreTimer::Flush, self.config.replication_lag_ms * MS_US);
        }
    }

    /// Sends the buffered writes to every replica.
    pub(super) fn flush(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.flush_pending = false;
        if self.unsent.is_empty() || !self.is_primary() {
            return;
        }
        let entries = std::mem::take(&mut self.unsent);
        for r in self.replicas.keys() {
            ctx.send(
                *r,
                RedisMsg::Replicate {
                    entries: entries.clone(),
                },
            );
        }
    }
}
