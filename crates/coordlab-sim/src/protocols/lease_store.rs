//! The lease store: one table, one row per lockable name, and the insert-or-take-over rule
//! applied as one atomic step.
//!
//! Expiry is judged by the store's own clock. A renewal by the owner keeps the token; a
//! takeover by anyone else increments it (unless the store is configured with the renewal
//! bug, which increments on every grant). Tokens come from a per-name sequence that survives
//! deletes, so they only ever grow.

use super::lease_msg::{seconds, LeaseMsg, ReleaseMode};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::time::MS_US;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRow {
    pub owner: NodeId,
    pub token: FencingToken,
    /// Store-clock microseconds.
    pub acquired_at_us: u64,
    pub expires_at_us: u64,
}

/// How a grant came about, for the history and the token property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantKind {
    New,
    Renewal,
    Takeover,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub lease: String,
    pub owner: NodeId,
    pub token: FencingToken,
    pub kind: GrantKind,
    pub at_us: u64,
    pub expires_at_us: u64,
}

/// The table lives on disk: all of it survives a crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreDurable {
    pub rows: VecMap<String, LeaseRow>,
    /// The last token issued per lease name (a sequence; deletes do not reset it).
    pub last_token: VecMap<String, FencingToken>,
    pub grants: Vec<Grant>,
    /// Grants made while another owner's earlier grant was still unexpired and not released
    /// by that owner: two legitimate holders at once.
    pub overlapping_grants: u32,
}

/// The store's rules, as the scenario sets them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreConfig {
    /// The bug: a renewal by the owner increments the token as if it were a takeover.
    pub renewal_increments_token: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseStore {
    pub config: StoreConfig,
    pub durable: StoreDurable,
    /// Live grants per lease as the owners were told: owner and store-clock expiry. A naive
    /// delete by someone else removes the row but not the owner's grant.
    pub live_grants: VecMap<String, (NodeId, u64)>,
    /// Store-clock times of every acquire request, for the stampede histogram.
    pub acquire_requests_us: Vec<u64>,
}

/// The store's timer: a lease's expiry instant, so the moment it lapses is on the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpiryTimer {
    pub lease: String,
    pub token: FencingToken,
}

impl Label for ExpiryTimer {
    fn label(&self) -> String {
        format!("{} (token {}) reaches its expiry", self.lease, self.token)
    }
}

impl LeaseStore {
    /// An empty table. `first_tokens` sets the sequence per lease, e.g. `{"account-42": 32}`
    /// so the next grant is 33.
    pub fn initial(first_tokens: VecMap<String, FencingToken>) -> StoreDurable {
        StoreDurable {
            rows: VecMap::new(),
            last_token: first_tokens,
            grants: Vec::new(),
            overlapping_grants: 0,
        }
    }

    pub fn recover(config: StoreConfig, durable: &StoreDurable) -> LeaseStore {
        let mut live_grants = VecMap::new();
        for (lease, row) in &durable.rows {
            live_grants.insert(lease.clone(), (row.owner, row.expires_at_us));
        }
        LeaseStore {
            config,
            durable: durable.clone(),
            live_grants,
            acquire_requests_us: Vec::new(),
        }
    }

    pub fn row(&self, lease: &str) -> Option<&LeaseRow> {
        self.durable.rows.get(lease)
    }

    /// Handles one request; a grant arms the timer of its expiry instant.
    pub fn handle(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let now = ctx.local_now_us;
        let who = ctx.name(from);
        match msg {
            LeaseMsg::Acquire { lease, ttl_ms } => {
                self.acquire_requests_us.push(now);
                let expires_at_us = now + ttl_ms * MS_US;
                let current = self.durable.rows.get(&lease).cloned();
                let kind = match &current {
                    None => GrantKind::New,
                    Some(row) if row.owner == from => GrantKind::Renewal,
                    Some(row) if row.expires_at_us <= now => GrantKind::Takeover,
                    Some(row) => {
                        ctx.note(format!(
                            "{who} asks for {lease}, but {} holds it for another {} by the store's clock: zero rows, back off.",
                            ctx.name(row.owner),
                            seconds((row.expires_at_us - now) / MS_US)
                        ));
                        ctx.send(
                            from,
                            LeaseMsg::Denied {
                                lease,
                                holder: row.owner,
                            },
                        );
                        return;
                    }
                };
                let last = self
                    .durable
                    .last_token
                    .get(&lease)
                    .copied()
                    .unwrap_or(FencingToken(0));
                let token = match (kind, &current) {
                    (GrantKind::Renewal, Some(row)) if !self.config.renewal_increments_token => row.token,
                    _ => FencingToken(last.0 + 1),
                };
                let mut overlaps = None;
                if let Some((owner, grant_expiry)) = self.live_grants.get(&lease) {
                    if *owner != from && *grant_expiry > now {
                        self.durable.overlapping_grants += 1;
                        overlaps = Some((*owner, *grant_expiry - now));
                    }
                }
                self.durable.last_token.insert(lease.clone(), token.max(last));
                self.durable.rows.insert(
                    lease.clone(),
                    LeaseRow {
                        owner: from,
                        token,
                        acquired_at_us: now,
                        expires_at_us,
                    },
                );
                self.live_grants.insert(lease.clone(), (from, expires_at_us));
                self.durable.grants.push(Grant {
                    lease: lease.clone(),
                    owner: from,
                    token,
                    kind,
                    at_us: now,
                    expires_at_us,
                });
                ctx.note(match (kind, &current) {
                    (GrantKind::New, _) => format!("No row for {lease}: the insert succeeds. {who} holds it with token {token} for {}.", seconds(ttl_ms)),
                    (GrantKind::Renewal, Some(row)) if row.token == token => {
                        format!("{who} already owns {lease}: the renewal extends it by {} and keeps token {token}.", seconds(ttl_ms))
                    }
                    (GrantKind::Renewal, Some(row)) => format!(
                        "{who} renews {lease}, and this store increments the token on renewal: {} becomes {token}. Anything {who} still has in flight with {} is now stale.",
                        row.token, row.token
                    ),
                    (_, Some(row)) => format!(
                        "{lease} expired by the store's clock ({} owned it). {who} takes it over: token {} becomes {token}.",
                        ctx.name(row.owner),
                        row.token
                    ),
                    _ => String::new(),
                });
                if let Some((owner, left_us)) = overlaps {
                    ctx.note(format!(
                        "But {}'s grant still has {} to run, and nobody has told {} it lost the lease: two workers now hold {lease} at once. Only the fencing token, checked where the writes land, can keep them apart.",
                        ctx.name(owner),
                        seconds(left_us / MS_US),
                        ctx.name(owner)
                    ));
                }
                ctx.persist(self.durable.clone());
                ctx.send(
                    from,
                    LeaseMsg::Granted {
                        lease: lease.clone(),
                        token,
                        ttl_ms,
                    },
                );
                ctx.set_timer(ExpiryTimer { lease, token }, ttl_ms * MS_US);
            }
            LeaseMsg::Release { lease, mode } => {
                let owner = self.durable.rows.get(&lease).map(|r| r.owner);
                let deleted = match (mode, owner) {
                    (_, None) => {
                        ctx.note(format!(
                            "{who} deletes {lease}, but there is no row for it any more: DELETE 0."
                        ));
                        false
                    }
                    (ReleaseMode::CompareAndDelete, Some(o)) if o != from => {
                        ctx.note(format!(
                            "{who}'s release names itself as owner, but {lease} now belongs to {}: DELETE 0. The new holder's lease survives.",
                            ctx.name(o)
                        ));
                        false
                    }
                    (ReleaseMode::NaiveDelete, Some(o)) if o != from => {
                        ctx.note(format!(
                            "{who} deletes {lease} without checking the owner — but the row is {}'s now. {} still believes it holds the lease, and the lease is gone.",
                            ctx.name(o),
                            ctx.name(o)
                        ));
                        true
                    }
                    (_, Some(_)) => {
                        ctx.note(format!("{who} releases {lease}; the row is deleted."));
                        self.live_grants.remove(&lease);
                        true
                    }
                };
                if deleted {
                    self.durable.rows.remove(&lease);
                    ctx.persist(self.durable.clone());
                }
                ctx.send(from, LeaseMsg::Released { lease, deleted });
            }
            _ => {}
        }
    }

    /// The expiry instant of a grant passed on the store's clock.
    pub fn expiry_due(&mut self, ctx: &mut Ctx<'_, Self>, timer: &ExpiryTimer) {
        let Some(row) = self.durable.rows.get(&timer.lease) else {
            ctx.note(format!(
                "The grant of {} with token {} would have lapsed now, but the row was released already: nothing changes.",
                timer.lease, timer.token
            ));
            return;
        };
        if row.token != timer.token {
            ctx.note(format!(
                "The grant of {} with token {} would have lapsed now, but {} holds it with token {} since: nothing changes.",
                timer.lease,
                timer.token,
                ctx.name(row.owner),
                row.token
            ));
        }
        if row.token == timer.token && row.expires_at_us <= ctx.local_now_us {
            ctx.note(format!(
                "By the store's clock, {}'s lease on {} (token {}) has expired. Nobody is told: the next request decides.",
                ctx.name(row.owner),
                timer.lease,
                row.token
            ));
        }
    }

    pub fn summary(&self, view: &ViewCtx<'_>) -> Vec<String> {
        let now_local_us = view.local_now_us;
        let mut lines = Vec::new();
        for (lease, row) in &self.durable.rows {
            let state = if row.expires_at_us > now_local_us {
                format!("{} left", seconds((row.expires_at_us - now_local_us) / MS_US))
            } else {
                "expired".to_string()
            };
            if self.durable.rows.len() > 1 {
                lines.push(format!("{lease}:"));
            }
            lines.push(format!("{} · token {}", view.name(row.owner), row.token));
            lines.push(state);
        }
        if lines.is_empty() {
            lines.push("no leases held".to_string());
        }
        lines
    }
}

impl Participant for LeaseStore {
    type Msg = LeaseMsg;
    type Timer = ExpiryTimer;
    type Durable = StoreDurable;
    type Config = StoreConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(format!(
            "The lease store is up: one table, one row per lockable name; {} row(s) now.",
            self.durable.rows.len()
        ));
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        self.handle(ctx, from, msg);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ExpiryTimer) {
        self.expiry_due(ctx, &timer);
    }

    fn recover(config: &StoreConfig, _id: NodeId, durable: &StoreDurable) -> Self {
        LeaseStore::recover(*config, durable)
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Vec<String> {
        LeaseStore::summary(self, view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::participant::Effect;
    use crate::kernel::testing::{persisted, sent, timers_set, Harness};

    const A: NodeId = NodeId(1);
    const B: NodeId = NodeId(2);

    fn store(renewal_increments_token: bool) -> Harness<LeaseStore> {
        let config = StoreConfig {
            renewal_increments_token,
        };
        let first = VecMap::from([("l".to_string(), FencingToken(32))]);
        let node = LeaseStore::recover(config, &LeaseStore::initial(first));
        Harness::new(NodeId(0), node, &["store", "A", "B"])
    }

    fn acquire(s: &mut Harness<LeaseStore>, from: NodeId, at_ms: u64) -> Vec<Effect<LeaseStore>> {
        s.now_us = at_ms * MS_US;
        s.deliver(
            from,
            LeaseMsg::Acquire {
                lease: "l".into(),
                ttl_ms: 10_000,
            },
        )
    }

    fn granted(token: u64) -> LeaseMsg {
        LeaseMsg::Granted {
            lease: "l".into(),
            token: FencingToken(token),
            ttl_ms: 10_000,
        }
    }

    #[test]
    fn a_renewal_keeps_the_token_and_a_takeover_after_expiry_raises_it() {
        let mut s = store(false);
        let fx = acquire(&mut s, A, 0);
        assert_eq!(sent::<_, LeaseMsg>(&fx), vec![(A, granted(33))]);
        assert_eq!(
            timers_set(&fx),
            vec![(
                ExpiryTimer {
                    lease: "l".into(),
                    token: FencingToken(33)
                },
                10_000 * MS_US
            )]
        );
        assert_eq!(persisted(&fx).len(), 1);
        assert_eq!(
            sent::<_, LeaseMsg>(&acquire(&mut s, A, 5_000)),
            vec![(A, granted(33))]
        );
        let held = acquire(&mut s, B, 10_000);
        assert_eq!(
            sent::<_, LeaseMsg>(&held),
            vec![(
                B,
                LeaseMsg::Denied {
                    lease: "l".into(),
                    holder: A
                }
            )]
        );
        assert!(persisted(&held).is_empty());
        assert_eq!(
            sent::<_, LeaseMsg>(&acquire(&mut s, B, 15_000)),
            vec![(B, granted(34))]
        );
        let kinds: Vec<GrantKind> = s.node.durable.grants.iter().map(|g| g.kind).collect();
        assert_eq!(kinds, [GrantKind::New, GrantKind::Renewal, GrantKind::Takeover]);
        assert_eq!(s.node.durable.overlapping_grants, 0);
    }

    #[test]
    fn the_renewal_bug_raises_the_token_on_every_renewal() {
        let mut s = store(true);
        acquire(&mut s, A, 0);
        assert_eq!(
            sent::<_, LeaseMsg>(&acquire(&mut s, A, 3_000)),
            vec![(A, granted(34))]
        );
    }

    #[test]
    fn only_a_naive_delete_removes_someone_else_s_row() {
        for (mode, deleted) in [
            (ReleaseMode::CompareAndDelete, false),
            (ReleaseMode::NaiveDelete, true),
        ] {
            let mut s = store(false);
            acquire(&mut s, B, 0);
            let fx = s.deliver(
                A,
                LeaseMsg::Release {
                    lease: "l".into(),
                    mode,
                },
            );
            assert_eq!(
                sent::<_, LeaseMsg>(&fx),
                vec![(
                    A,
                    LeaseMsg::Released {
                        lease: "l".into(),
                        deleted
                    }
                )]
            );
            assert_eq!(s.node.row("l").is_none(), deleted, "{mode:?}");
            // B's grant is still live: a new grant now would overlap it.
            acquire(&mut s, A, 1_000);
            assert_eq!(s.node.durable.overlapping_grants, u32::from(deleted), "{mode:?}");
        }
    }
}
