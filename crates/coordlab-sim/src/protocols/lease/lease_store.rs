//! The lease store: one table, one row per lockable name, and one statement to acquire or
//! renew, applied as one atomic step:
//!
//! ```sql
//! INSERT INTO lease (name, owner, fence_token, acquired_at, expires_at)
//! VALUES (:name, :me, 1, now(), now() + :ttl)
//! ON CONFLICT (name) DO UPDATE
//!    SET owner = :me,
//!        fence_token = CASE WHEN lease.owner = :me THEN lease.fence_token
//!                           ELSE lease.fence_token + 1 END,
//!        acquired_at = now(), expires_at = now() + :ttl
//!  WHERE lease.expires_at < now() OR lease.owner = :me
//! RETURNING fence_token
//! ```
//!
//! The token counter lives on the row: a renewal keeps it, a change of holder increments it,
//! and zero rows returned means someone else holds the lease. Expiry is judged by the store's
//! own clock. What a release does is the store's [`ReleaseStyle`]: expiring the row keeps its
//! counter; deleting it throws the counter away, so the next insert starts again at 1. With
//! [`TokenSource::Sequence`] the token comes from one sequence per name (`nextval`), which a
//! delete does not reset. The renewal bug drops the CASE: every grant increments.

use super::lease_msg::{LeaseMsg, ReleaseMode};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::presentation::narration::lease::lease_store::{Freed, Lapse, LeaseStoreSaw};

/// How the owner of a row left by an earlier run (before the story starts) is shown.
pub const EARLIER_OWNER: &str = "earlier-run";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaseRow {
    /// `None`: a holder from before the story, whose row an earlier run left behind.
    pub owner: Option<NodeId>,
    /// The row's `fence_token`.
    pub token: FencingToken,
    /// Store-clock microseconds.
    pub acquired_at_us: u64,
    pub expires_at_us: u64,
    /// The owner released it by setting `expires_at = now()`: the row and its counter stay.
    pub released: bool,
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
    /// The last value each name's sequence gave (used with [`TokenSource::Sequence`]).
    pub sequences: VecMap<String, FencingToken>,
    pub grants: Vec<Grant>,
    /// Grants made while another owner's earlier grant was still unexpired and not released
    /// by that owner: two legitimate holders at once.
    pub overlapping_grants: u32,
}

/// Where a grant's token comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TokenSource {
    /// The row's own `fence_token` column: gone when the row is deleted.
    #[default]
    Row,
    /// `nextval` of one sequence per lease name, drawn by every run of the statement.
    Sequence,
}

/// What a release statement does to the row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReleaseStyle {
    /// `UPDATE lease SET expires_at = now() WHERE name = :name [AND owner = :me]`: the row
    /// and its counter stay, and the next holder takes it over.
    #[default]
    Expire,
    /// `DELETE FROM lease WHERE name = :name [AND owner = :me]`: the row and its counter go.
    Delete,
}

/// The store's rules, as the scenario sets them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreConfig {
    /// The bug: a renewal by the owner increments the token as if it were a takeover.
    pub renewal_increments_token: bool,
    pub tokens: TokenSource,
    pub release: ReleaseStyle,
}

/// The last statement the store ran, with its values bound, for the state panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executed {
    pub sql: Vec<String>,
    /// What it returned or changed.
    pub result: String,
    /// Store-clock microseconds.
    pub at_us: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseStore {
    pub config: StoreConfig,
    pub durable: StoreDurable,
    /// Live grants per lease as the owners were told: owner and store-clock expiry. A naive
    /// release by someone else changes the row but not the owner's grant.
    pub live_grants: VecMap<String, (NodeId, u64)>,
    /// Store-clock times of every acquire request, for the stampede histogram.
    pub acquire_requests_us: Vec<u64>,
    /// The last statement run since the store came up.
    pub last_statement: Option<Executed>,
}

/// The store's timer: a lease's expiry instant, so the moment it lapses is on the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpiryTimer {
    pub lease: String,
    pub token: FencingToken,
}

/// A row owner's display name.
pub(crate) fn owner_name<'a>(owner: Option<NodeId>, name: impl Fn(NodeId) -> &'a str) -> &'a str {
    owner.map_or(EARLIER_OWNER, name)
}

/// The name of a lease's sequence, e.g. `fence_seq_account_42`.
pub fn sequence_name(lease: &str) -> String {
    let tail: String = lease
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("fence_seq_{tail}")
}

impl LeaseStore {
    /// The table when the story starts. `issued` gives, per lease name, how many tokens an
    /// earlier run already used, e.g. `{"account-42": 32}`: that run's row is still there,
    /// expired, with `fence_token` 32 (and the name's sequence at 32), so the first grant of
    /// the story takes it over with 33.
    pub fn initial(issued: VecMap<String, FencingToken>) -> StoreDurable {
        let mut rows = VecMap::new();
        for (lease, token) in &issued {
            let row = LeaseRow {
                token: *token,
                ..LeaseRow::default()
            };
            rows.insert(lease.clone(), row);
        }
        StoreDurable {
            rows,
            sequences: issued,
            grants: Vec::new(),
            overlapping_grants: 0,
        }
    }

    pub fn recover(config: StoreConfig, durable: &StoreDurable) -> LeaseStore {
        let mut live_grants = VecMap::new();
        for (lease, row) in &durable.rows {
            if let (Some(owner), false) = (row.owner, row.released) {
                live_grants.insert(lease.clone(), (owner, row.expires_at_us));
            }
        }
        LeaseStore {
            config,
            durable: durable.clone(),
            live_grants,
            acquire_requests_us: Vec::new(),
            last_statement: None,
        }
    }

    pub fn row(&self, lease: &str) -> Option<&LeaseRow> {
        self.durable.rows.get(lease)
    }

    /// `nextval` of the lease's sequence.
    fn nextval(&mut self, lease: &str) -> FencingToken {
        let next = self
            .durable
            .sequences
            .get(lease)
            .map_or(FencingToken(1), |t| FencingToken(t.0 + 1));
        self.durable.sequences.insert(lease.to_string(), next);
        next
    }

    /// The statement as one line of narration: whole the first time the store runs it, then
    /// with only the values that decide (`:me` in the WHERE), and what it returned.
    fn statement_note<'a>(
        &self,
        sql: &'a [String],
        me: &'a str,
        returned: Option<FencingToken>,
    ) -> LeaseStoreSaw<'a> {
        LeaseStoreSaw::Acquisition {
            sql,
            whole: self.acquire_requests_us.len() == 1,
            me,
            returned,
        }
    }

    fn acquire(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, lease: String, ttl_ms: u64) {
        let now = ctx.local_now_us;
        let who = ctx.name(from);
        self.acquire_requests_us.push(now);
        let sql = self.acquire_sql(&lease, who, ttl_ms);
        // VALUES is evaluated on every run, so every run draws a number, used or not.
        let drawn = (self.config.tokens == TokenSource::Sequence).then(|| self.nextval(&lease));
        let expires_at_us = now + ttl_ms * MS_US;
        let current = self.durable.rows.get(&lease).cloned();
        let kind = match &current {
            None => GrantKind::New,
            Some(row) if row.owner == Some(from) => GrantKind::Renewal,
            // An earlier run's row expired before the story began (at time 0 here).
            Some(row) if row.expires_at_us < now || row.owner.is_none() => GrantKind::Takeover,
            Some(row) => {
                let holder = owner_name(row.owner, |id| ctx.name(id));
                ctx.note(self.statement_note(&sql, who, None));
                ctx.note(LeaseStoreSaw::HeldByAnother {
                    who,
                    lease: &lease,
                    holder,
                    left_us: row.expires_at_us - now,
                    drew: drawn,
                });
                self.last_statement = Some(Executed {
                    sql,
                    result: format!("→ 0 rows ({holder} holds it)"),
                    at_us: now,
                });
                if drawn.is_some() {
                    ctx.persist(self.durable.clone());
                }
                ctx.send(
                    from,
                    LeaseMsg::Denied {
                        lease,
                        holder: row.owner.unwrap_or(ctx.node),
                    },
                );
                return;
            }
        };
        let bug = self.config.renewal_increments_token;
        let token = match (kind, &current, drawn) {
            (GrantKind::Renewal, Some(row), _) if !bug => row.token,
            (_, _, Some(d)) => d,
            (_, Some(row), None) => FencingToken(row.token.0 + 1),
            (_, None, None) => FencingToken(1),
        };
        // The highest token any earlier grant of this name carried: a fresh insert after a
        // delete can fall below it.
        let highest_before = self
            .durable
            .grants
            .iter()
            .filter(|g| g.lease == lease)
            .map(|g| g.token)
            .max();
        let mut overlaps = None;
        if let Some((owner, grant_expiry)) = self.live_grants.get(&lease) {
            if *owner != from && *grant_expiry > now {
                self.durable.overlapping_grants += 1;
                overlaps = Some((*owner, *grant_expiry - now));
            }
        }
        self.durable.rows.insert(
            lease.clone(),
            LeaseRow {
                owner: Some(from),
                token,
                acquired_at_us: now,
                expires_at_us,
                released: false,
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
        let from_sequence = self.config.tokens == TokenSource::Sequence;
        let note = match (kind, &current) {
            (GrantKind::New, _) => Some(LeaseStoreSaw::Inserted {
                lease: &lease,
                token,
                who,
                ttl_ms,
                from_sequence,
            }),
            (GrantKind::Renewal, Some(row)) if row.token == token => Some(LeaseStoreSaw::Renewed {
                who,
                lease: &lease,
                token,
                ttl_ms,
                drew: drawn,
            }),
            (GrantKind::Renewal, Some(row)) => Some(LeaseStoreSaw::RenewedWithNewNumber {
                who,
                lease: &lease,
                was: row.token,
                token,
            }),
            (_, Some(row)) => {
                let freed = match (row.owner, row.released) {
                    (None, _) => Freed::ByEarlierRun,
                    (Some(o), true) => Freed::Released { owner: ctx.name(o) },
                    (Some(o), false) => Freed::Expired {
                        owner: ctx.name(o),
                        at_us: row.expires_at_us,
                    },
                };
                Some(LeaseStoreSaw::TakenOver {
                    lease: &lease,
                    freed,
                    who,
                    was: row.token,
                    token,
                    from_sequence,
                    has_case: !self.config.renewal_increments_token,
                })
            }
            // A renewal or a takeover always finds a row.
            _ => None,
        };
        ctx.note(self.statement_note(&sql, who, Some(token)));
        if let Some(note) = note {
            ctx.note(note);
        }
        if let Some(prev) = highest_before.filter(|prev| *prev >= token && kind == GrantKind::New) {
            ctx.note(LeaseStoreSaw::LowerThanBefore {
                prev,
                lease: &lease,
                who,
            });
        }
        if let Some((owner, left_us)) = overlaps {
            ctx.note(LeaseStoreSaw::OverlapsLiveGrant {
                owner: ctx.name(owner),
                left_us,
                lease: &lease,
            });
        }
        let what = match kind {
            GrantKind::New => "insert",
            GrantKind::Renewal => "renewal",
            GrantKind::Takeover => "takeover",
        };
        self.last_statement = Some(Executed {
            sql,
            result: format!("→ fence_token {token} ({what})"),
            at_us: now,
        });
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

    fn release(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, lease: String, mode: ReleaseMode) {
        let now = ctx.local_now_us;
        let who = ctx.name(from);
        let (sql, tag) = self.release_sql(&lease, who, mode);
        let row = self.durable.rows.get(&lease).cloned();
        let matches = match (mode, &row) {
            (_, None) => false,
            (ReleaseMode::CompareAndDelete, Some(r)) => r.owner == Some(from),
            (ReleaseMode::NaiveDelete, Some(_)) => true,
        };
        ctx.note(LeaseStoreSaw::Release {
            sql: &sql,
            tag,
            matched: matches,
        });
        let changed = match (mode, &row) {
            (_, None) => {
                ctx.note(LeaseStoreSaw::ReleaseFoundNoRow {
                    who,
                    lease: &lease,
                    tag,
                });
                false
            }
            (ReleaseMode::CompareAndDelete, Some(r)) if r.owner != Some(from) => {
                ctx.note(LeaseStoreSaw::ReleaseByFormerOwner {
                    who,
                    lease: &lease,
                    owner: owner_name(r.owner, |id| ctx.name(id)),
                    tag,
                });
                false
            }
            (ReleaseMode::NaiveDelete, Some(r)) if r.owner != Some(from) => {
                ctx.note(LeaseStoreSaw::NaiveReleaseOfAnothersRow {
                    who,
                    lease: &lease,
                    owner: owner_name(r.owner, |id| ctx.name(id)),
                });
                true
            }
            (_, Some(r)) => {
                ctx.note(LeaseStoreSaw::Released {
                    who,
                    lease: &lease,
                    style: self.config.release,
                    from_sequence: self.config.tokens == TokenSource::Sequence,
                    token: r.token,
                });
                self.live_grants.remove(&lease);
                true
            }
        };
        if changed {
            match self.config.release {
                ReleaseStyle::Delete => {
                    self.durable.rows.remove(&lease);
                }
                ReleaseStyle::Expire => {
                    if let Some(r) = self.durable.rows.get_mut(&lease) {
                        r.expires_at_us = now;
                        r.released = true;
                    }
                }
            }
            ctx.persist(self.durable.clone());
        }
        self.last_statement = Some(Executed {
            sql: vec![sql],
            result: format!("→ {tag} {}", u8::from(changed)),
            at_us: now,
        });
        ctx.send(
            from,
            LeaseMsg::Released {
                lease,
                deleted: changed,
            },
        );
    }
}

impl Participant for LeaseStore {
    type Msg = LeaseMsg;
    type Timer = ExpiryTimer;
    type Durable = StoreDurable;
    type Config = StoreConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(LeaseStoreSaw::Up {
            rows: self.durable.rows.len(),
        });
        for (lease, row) in &self.durable.rows {
            if row.owner.is_none() {
                ctx.note(LeaseStoreSaw::EarlierRunRow {
                    lease,
                    token: row.token,
                });
            }
        }
    }

    /// Handles one request; a grant arms the timer of its expiry instant.
    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        match msg {
            LeaseMsg::Acquire { lease, ttl_ms } => self.acquire(ctx, from, lease, ttl_ms),
            LeaseMsg::Release { lease, mode } => self.release(ctx, from, lease, mode),
            _ => {}
        }
    }

    /// The expiry instant of a grant passed on the store's clock.
    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ExpiryTimer) {
        let lease = timer.lease.as_str();
        let lapsed = |why| LeaseStoreSaw::LapsedWithoutChange {
            lease,
            token: timer.token,
            why,
        };
        let Some(row) = self.durable.rows.get(lease) else {
            ctx.note(lapsed(Lapse::RowGone));
            return;
        };
        let owner = owner_name(row.owner, |id| ctx.name(id));
        if row.token != timer.token && row.released {
            ctx.note(lapsed(Lapse::TakenOverAndReleased {
                owner,
                token: row.token,
            }));
        } else if row.token != timer.token {
            ctx.note(lapsed(Lapse::TakenOver {
                owner,
                token: row.token,
            }));
        } else if row.released {
            ctx.note(lapsed(Lapse::ReleasedAlready { owner }));
        } else if row.expires_at_us <= ctx.local_now_us {
            ctx.note(LeaseStoreSaw::Expired {
                owner,
                lease,
                token: row.token,
            });
        }
    }

    fn recover(config: &StoreConfig, _id: NodeId, durable: &StoreDurable) -> Self {
        LeaseStore::recover(*config, durable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::participant::Effect;
    use crate::kernel::testing::{persisted, sent, timers_set, Harness};

    const A: NodeId = NodeId(1);
    const B: NodeId = NodeId(2);

    /// A store whose table still has an earlier run's expired row for `l` at fence_token 32.
    fn store(renewal_increments_token: bool) -> Harness<LeaseStore> {
        let config = StoreConfig {
            renewal_increments_token,
            ..StoreConfig::default()
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

    /// What the store answers `from`'s acquire at `at_ms`.
    fn answer(s: &mut Harness<LeaseStore>, from: NodeId, at_ms: u64) -> Vec<(NodeId, LeaseMsg)> {
        sent(&acquire(s, from, at_ms))
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
        assert_eq!(answer(&mut s, A, 5_000), vec![(A, granted(33))]);
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
        assert_eq!(answer(&mut s, B, 15_001), vec![(B, granted(34))]);
        // The first grant took over the earlier run's row.
        let kinds: Vec<GrantKind> = s.node.durable.grants.iter().map(|g| g.kind).collect();
        assert_eq!(
            kinds,
            [GrantKind::Takeover, GrantKind::Renewal, GrantKind::Takeover]
        );
        assert_eq!(s.node.durable.overlapping_grants, 0);
    }

    #[test]
    fn the_renewal_bug_raises_the_token_on_every_renewal() {
        let mut s = store(true);
        acquire(&mut s, A, 0);
        assert_eq!(answer(&mut s, A, 3_000), vec![(A, granted(34))]);
    }

    #[test]
    fn only_a_naive_release_ends_someone_else_s_lease() {
        for (mode, changed) in [
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
                        deleted: changed
                    }
                )]
            );
            // Released by expiring: the row stays, with B as owner and its token.
            let row = s.node.row("l").unwrap();
            assert_eq!(
                (row.owner, row.token, row.released),
                (Some(B), FencingToken(33), changed),
                "{mode:?}"
            );
            // B's grant is still live: a new grant now would overlap it.
            acquire(&mut s, A, 1_000);
            assert_eq!(s.node.durable.overlapping_grants, u32::from(changed), "{mode:?}");
        }
    }
}
