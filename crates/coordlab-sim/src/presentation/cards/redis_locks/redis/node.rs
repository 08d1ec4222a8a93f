//! The card of a Redis node ([`RedisNode`]): its role, replication and keys.

use crate::kernel::collections::{sort_by_key, VecMap};
use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::redis_locks::redis::{RedisConfig, RedisDurable, RedisNode, Role};
use crate::protocols::redis_locks::redis_msg::KeyEntry;

impl Card for RedisNode {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let s = match self.role {
            Role::Primary => {
                let s = Summary::new("primary", Tone::Holds).minor(format!("offset #{}", self.offset));
                match self.unsent.len() {
                    0 => s,
                    n => s.detail(format!("{n} writes not yet shipped")),
                }
            }
            Role::Replica { of } => {
                let s = Summary::new("replica", Tone::Quiet).detail(format!("of {}", view.name(of)));
                if self.link_down {
                    s.detail("link down").minor(format!("offset #{}", self.offset))
                } else if self.synced {
                    s.minor(format!("offset #{}", self.offset))
                } else {
                    s.detail("copying its primary")
                }
            }
        };
        key_card(s, &self.data, view.local_now_us)
    }

    fn durable_summary(config: &RedisConfig, d: &RedisDurable, _view: &ViewCtx<'_>) -> Summary {
        if config.persistence {
            card::down(format!("on disk: {} keys", d.data.len()))
        } else {
            card::down("no persistence: memory lost")
        }
    }
}

/// The keys on a card — keys with a TTL (locks) first: each value as a badge named by its key
/// (`lock a-e27e`, `fence 42`), the time a lock has left by the node's own clock as a minor
/// detail.
fn key_card(mut s: Summary, data: &VecMap<String, KeyEntry>, local_now_us: u64) -> Summary {
    let mut keys: Vec<(&String, &KeyEntry)> = data.iter().collect();
    sort_by_key(&mut keys, |(_, e)| e.expires_at_us.is_none());
    // In this chapter the keys with a TTL are the locks: say so when there is none.
    if keys.iter().all(|(_, e)| e.expires_at_us.is_none()) {
        s = s.detail("no lock");
    }
    for (k, e) in keys {
        let alive = e.alive_at(local_now_us);
        s = if !alive {
            s.detail(format!("{k}={} expired", e.value))
        } else if k.chars().count() <= 10 {
            card::fit_badge(s, k, &e.value)
        } else {
            s.detail(format!("{k}={}", e.value))
        };
        if let (Some(at), true) = (e.expires_at_us, alive) {
            s = s.minor(format!("{k}: {}", card::left(at - local_now_us)));
        }
    }
    s
}
