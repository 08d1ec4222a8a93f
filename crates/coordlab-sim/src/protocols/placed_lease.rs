//! A lease table whose placement a scenario chooses: on the shared primary, read through a
//! lagging replica, or one table per node. One row (the scenario's lease), and three
//! statements:
//!
//! - `acquire`: the atomic `INSERT … ON CONFLICT (name) DO UPDATE … WHERE lease.expires_at <
//!   now() OR lease.owner = :me RETURNING fence_token` — the table itself decides;
//! - `read`: `SELECT owner, fence_token, expires_at FROM lease WHERE name = :name`, answered
//!   by whichever copy was asked (a replica answers from what it has replayed so far);
//! - `claim`: `UPDATE lease SET owner = :me, fence_token = fence_token + 1, … WHERE name =
//!   :name RETURNING fence_token`, with no condition: the second half of a check-then-set whose
//!   check was a read.
//!
//! A primary ships every change to its replicas (`WAL`); the link's latency is the
//! replication lag. This participant lives in the `services` bundle, apart from the lease
//! chapter's [`super::lease_store`], whose bundle is at its size cap.

use super::lease_msg::seconds;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Label, NoTimer, Participant, ViewCtx};
use crate::kernel::time::MS_US;

/// The lease row. `owner: None` is an earlier run's row, expired before the story starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedRow {
    pub owner: Option<NodeId>,
    pub token: FencingToken,
    /// Store-clock microseconds.
    pub expires_at_us: u64,
}

/// A grant the table made, for the world's checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedGrant {
    pub owner: NodeId,
    pub token: FencingToken,
    /// True-ish: the store's clock at the grant.
    pub at_us: u64,
}

/// The table on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedDurable {
    pub row: PlacedRow,
    pub grants: Vec<PlacedGrant>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedConfig {
    pub lease: String,
    /// Whose table this is, when each node has its own (`None`: the shared one).
    pub local_to: Option<NodeId>,
    /// A replica takes no writes; it replays what its primary ships.
    pub replica: bool,
    /// Where a primary ships its changes.
    pub replicas: Vec<NodeId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacedMsg {
    Acquire {
        ttl_ms: u64,
    },
    Read,
    Claim {
        ttl_ms: u64,
    },
    Granted {
        token: FencingToken,
        ttl_ms: u64,
    },
    Denied {
        holder: Option<NodeId>,
    },
    /// The answer to `Read`: the row as this copy has it, and whether it looks free by this
    /// copy's clock.
    Row {
        token: FencingToken,
        free: bool,
    },
    /// Replication: the primary's row after a change.
    Wal {
        row: PlacedRow,
    },
}

crate::inbox!(PlacedMsg);

impl Label for PlacedMsg {
    fn label(&self) -> String {
        match self {
            PlacedMsg::Acquire { .. } => "INSERT … ON CONFLICT … RETURNING fence_token".into(),
            PlacedMsg::Read => "SELECT owner, fence_token, expires_at FROM lease".into(),
            PlacedMsg::Claim { .. } => "UPDATE lease SET owner = :me, fence_token = fence_token + 1".into(),
            PlacedMsg::Granted { token, .. } => format!("fence_token {token}"),
            PlacedMsg::Denied { .. } => "0 rows".into(),
            PlacedMsg::Row { token, free } => format!(
                "row: fence_token {token}, {}",
                if *free { "expired" } else { "held" }
            ),
            PlacedMsg::Wal { row } => format!("WAL: fence_token {}", row.token),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedLease {
    pub config: PlacedConfig,
    pub durable: PlacedDurable,
}

impl PlacedLease {
    /// The table when the story starts: an earlier run's expired row at `fence_token` `issued`.
    pub fn initial(issued: u64) -> PlacedDurable {
        PlacedDurable {
            row: PlacedRow {
                owner: None,
                token: FencingToken(issued),
                expires_at_us: 0,
            },
            grants: Vec::new(),
        }
    }

    fn owner_name<'a>(&self, ctx: &Ctx<'a, Self>) -> &'a str {
        self.durable.row.owner.map_or("earlier-run", |o| ctx.name(o))
    }

    fn free(&self, now_us: u64) -> bool {
        self.durable.row.owner.is_none() || self.durable.row.expires_at_us < now_us
    }

    fn grant(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, ttl_ms: u64) -> FencingToken {
        let now = ctx.local_now_us;
        let renewal = self.durable.row.owner == Some(from);
        let token = if renewal {
            self.durable.row.token
        } else {
            FencingToken(self.durable.row.token.0 + 1)
        };
        self.durable.row = PlacedRow {
            owner: Some(from),
            token,
            expires_at_us: now + ttl_ms * MS_US,
        };
        self.durable.grants.push(PlacedGrant {
            owner: from,
            token,
            at_us: now,
        });
        ctx.persist(self.durable.clone());
        for r in self.config.replicas.clone() {
            ctx.send(
                r,
                PlacedMsg::Wal {
                    row: self.durable.row.clone(),
                },
            );
        }
        ctx.send(from, PlacedMsg::Granted { token, ttl_ms });
        token
    }

    pub fn handle(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: PlacedMsg) {
        let now = ctx.local_now_us;
        let who = ctx.name(from);
        let lease = self.config.lease.clone();
        let me = ctx.me();
        match msg {
            PlacedMsg::Acquire { ttl_ms } => {
                let free = self.free(now) || self.durable.row.owner == Some(from);
                let sql = format!(
                    "INSERT INTO lease … VALUES ('{lease}', '{who}', 1, now(), now() + interval '{}') ON CONFLICT (name) DO UPDATE … WHERE lease.expires_at < now() OR lease.owner = '{who}' RETURNING fence_token",
                    seconds(ttl_ms)
                );
                if free {
                    let before = self.durable.row.token;
                    let token = self.grant(ctx, from, ttl_ms);
                    ctx.note(format!("{me}: {sql} → {token}"));
                    ctx.note(match self.config.local_to {
                        Some(o) if o != from => format!(
                            "{who} writes to {me}, a table only {} is meant to use: it has never heard of anyone else, so {who} holds {lease} with token {token}.",
                            ctx.name(o)
                        ),
                        Some(_) => format!(
                            "{me} is {who}'s own table. Nobody else writes here, so the row is always free for {who}: token {before} becomes {token}, and {who} holds {lease} for {}. Whatever the other nodes' tables say, this one says yes.",
                            seconds(ttl_ms)
                        ),
                        None => format!(
                            "The row for {lease} is expired, so the statement takes it over: token {before} becomes {token}, and {who} holds the lease for {}. Every worker asks this same row.",
                            seconds(ttl_ms)
                        ),
                    });
                } else {
                    let holder = self.owner_name(ctx);
                    ctx.note(format!("{me}: {sql} → 0 rows"));
                    ctx.note(format!(
                        "{holder} holds {lease} for another {} by {me}'s clock: the WHERE matches nothing, so {who} gets zero rows and backs off. One table, one answer.",
                        seconds((self.durable.row.expires_at_us - now) / MS_US)
                    ));
                    ctx.send(
                        from,
                        PlacedMsg::Denied {
                            holder: self.durable.row.owner,
                        },
                    );
                }
            }
            PlacedMsg::Read => {
                let free = self.free(now);
                let row = &self.durable.row;
                let state = if free {
                    "expired".to_string()
                } else {
                    format!(
                        "held by {} for another {}",
                        self.owner_name(ctx),
                        seconds((row.expires_at_us - now) / MS_US)
                    )
                };
                ctx.note(format!(
                    "{me}: SELECT owner, fence_token, expires_at FROM lease WHERE name = '{lease}' → owner {}, fence_token {}: {state}.",
                    self.owner_name(ctx),
                    row.token
                ));
                if self.config.replica && free {
                    ctx.note(format!(
                        "{me} is a read replica: it answers from the changes it has replayed so far, which may be behind the primary. What it calls expired may already be taken there."
                    ));
                }
                ctx.send(
                    from,
                    PlacedMsg::Row {
                        token: row.token,
                        free,
                    },
                );
            }
            PlacedMsg::Claim { ttl_ms } => {
                let was = self.durable.row.clone();
                let token = self.grant(ctx, from, ttl_ms);
                ctx.note(format!(
                    "{me}: UPDATE lease SET owner = '{who}', fence_token = fence_token + 1, acquired_at = now(), expires_at = now() + interval '{}' WHERE name = '{lease}' RETURNING fence_token → {token}",
                    seconds(ttl_ms)
                ));
                let held = was.owner.is_some() && was.owner != Some(from) && was.expires_at_us > now;
                ctx.note(if held {
                    format!(
                        "The UPDATE has no condition: {who} decided from its read that the lease was free, so the primary overwrites {}'s unexpired row. {} still believes it holds {lease}: two holders.",
                        was.owner.map_or("earlier-run", |o| ctx.name(o)),
                        was.owner.map_or("earlier-run", |o| ctx.name(o))
                    )
                } else {
                    format!("The primary sets the row to {who}, token {token}.")
                });
            }
            PlacedMsg::Wal { row } if self.config.replica => {
                let owner = row.owner.map_or("earlier-run", |o| ctx.name(o));
                ctx.note(format!(
                    "{me} replays the primary's change, late: {lease} is {owner}'s, fence_token {}. Until now it still showed the old row.",
                    row.token
                ));
                self.durable.row = row;
                ctx.persist(self.durable.clone());
            }
            _ => {}
        }
    }

    pub fn summary(&self, view: &ViewCtx<'_>) -> Vec<String> {
        let row = &self.durable.row;
        let owner = row.owner.map_or("earlier-run", |o| view.name(o));
        let state = if row.owner.is_none() || row.expires_at_us <= view.local_now_us {
            "expired".to_string()
        } else {
            format!(
                "{} left",
                seconds((row.expires_at_us - view.local_now_us) / MS_US)
            )
        };
        let role = match (self.config.replica, self.config.local_to) {
            (true, _) => "read replica",
            (false, Some(_)) => "this node's own table",
            (false, None) => "primary",
        };
        vec![role.into(), format!("{owner} · token {}", row.token), state]
    }
}

impl Participant for PlacedLease {
    type Msg = PlacedMsg;
    type Timer = NoTimer;
    type Durable = PlacedDurable;
    type Config = PlacedConfig;

    fn on_start(&mut self, _ctx: &mut Ctx<'_, Self>) {}

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: PlacedMsg) {
        self.handle(ctx, from, msg);
    }

    fn recover(config: &PlacedConfig, _id: NodeId, durable: &PlacedDurable) -> Self {
        PlacedLease {
            config: config.clone(),
            durable: durable.clone(),
        }
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Vec<String> {
        PlacedLease::summary(self, view)
    }
}
