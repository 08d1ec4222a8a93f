//! A consensus-backed lock service, as etcd builds one: a Raft server (the unchanged model
//! of [`super::raft`]) replicating the lock table of [`super::lock_store`], plus the one job
//! only the leader does — counting each lease down by its own clock and, when one runs out,
//! proposing an expiry entry. Nothing is free until that entry commits.
//!
//! A newly elected leader cannot know how far its predecessor had counted a lease down, so
//! it starts every lease it inherits afresh at its full TTL: after a failover a lease can
//! only last longer than promised, never shorter. A new leader also commits an empty entry
//! of its own term at once, which is how it learns what is committed (Raft §8).
//!
//! The Raft server runs under [`Ctx::within`]: its messages go on the wire as they are, its
//! timers become [`LockServerTimer::Raft`], and what it persists is this server's durable
//! state unchanged.

use super::lease_msg::seconds;
use super::lock_store::{LockOp, LockRecord};
use super::raft::{Command, LogIndex, RaftMsg, RaftServer, RaftTimer, Role, ServerConfig, ServerDurable};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Label, Participant, ViewCtx};
use crate::kernel::time::MS_US;
use crate::kernel::view::{Gauge, InputSpec, LogCell};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockServerTimer {
    Raft(RaftTimer),
    /// The leader's countdown of a key's lease, by the leader's clock.
    LeaseDue {
        key: String,
    },
}

impl Label for LockServerTimer {
    fn label(&self) -> String {
        match self {
            LockServerTimer::Raft(t) => t.label(),
            LockServerTimer::LeaseDue { key } => format!("lease countdown of {key} runs out"),
        }
    }
}

/// The leader's count of one lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Countdown {
    pub revision: u64,
    /// The keep-alive (log index) this count started from.
    pub renewed_at: u64,
    /// When the lease runs out, by the leader's clock.
    pub deadline_us: u64,
    /// An expiry entry has been proposed and not yet applied.
    pub expiring: bool,
}

#[derive(Clone, Debug)]
pub struct LockServer {
    pub server: RaftServer,
    /// Leader only: the lease countdowns (volatile, gone on a crash or a step-down).
    pub countdowns: VecMap<String, Countdown>,
    /// Whether it was leader after the last event it handled.
    led: bool,
}

impl LockServer {
    pub fn new(server: RaftServer) -> LockServer {
        LockServer {
            server,
            countdowns: VecMap::new(),
            led: false,
        }
    }

    /// Runs one handler of the hosted Raft server.
    fn raft<R>(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        run: impl FnOnce(&mut RaftServer, &mut Ctx<'_, RaftServer>) -> R,
    ) -> R {
        let server = &mut self.server;
        ctx.within(LockServerTimer::Raft, |d| d, |inner| run(server, inner))
    }

    /// Runs the Raft server on one input, then does the leader's lease bookkeeping.
    fn drive(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        run: impl FnOnce(&mut RaftServer, &mut Ctx<'_, RaftServer>),
    ) {
        self.raft(ctx, run);
        self.after(ctx);
    }

    fn propose(&mut self, ctx: &mut Ctx<'_, Self>, op: LockOp) -> bool {
        self.raft(ctx, |s, c| s.propose(c, Command::Lock(op)).is_some())
    }

    /// The leader's bookkeeping after every event: a fresh leader commits a no-op, and every
    /// applied lock gets a countdown that matches its last grant or keep-alive.
    fn after(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.server.role != Role::Leader {
            self.led = false;
            for key in std::mem::take(&mut self.countdowns).into_keys() {
                ctx.cancel_timer(LockServerTimer::LeaseDue { key });
            }
            return;
        }
        if !self.led {
            self.led = true;
            ctx.note(format!(
                "{} commits an empty entry of its own term first: once it commits, every earlier entry is known committed, the lock table included.",
                ctx.me()
            ));
            self.propose(ctx, LockOp::Barrier);
        }
        let restart = self.stale_counts();
        self.drop_ended(ctx);
        for (key, rec, inherited) in restart {
            self.start_count(ctx, key, &rec, inherited);
        }
    }

    /// Every applied lock whose countdown does not match its last grant or keep-alive, and
    /// whether the leader inherited it from an earlier term.
    fn stale_counts(&self) -> Vec<(String, LockRecord, bool)> {
        let s = &self.server;
        s.locks
            .locks
            .iter()
            .filter(|(key, rec)| {
                !self
                    .countdowns
                    .get(*key)
                    .is_some_and(|c| c.revision == rec.revision && c.renewed_at == rec.renewed_at)
            })
            .map(|(key, rec)| {
                let inherited = s.term_at(LogIndex(rec.renewed_at)).is_some_and(|t| t < s.term);
                (key.clone(), rec.clone(), inherited)
            })
            .collect()
    }

    /// Drops the countdowns of leases the lock table no longer holds (released or expired).
    fn drop_ended(&mut self, ctx: &mut Ctx<'_, Self>) {
        let locks = &self.server.locks.locks;
        let gone: Vec<String> = self
            .countdowns
            .iter()
            .filter(|(k, c)| locks.get(*k).is_none_or(|r| r.revision != c.revision))
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            if let Some(c) = self.countdowns.remove(&key) {
                if c.expiring {
                    ctx.note(format!(
                        "{} applies the expiry of revision {}: it is committed on a majority, so {key} is free, and no later leader can bring that lease back. Its holder is not told — a worker that stopped sending keep-alives may not be listening.",
                        ctx.me(),
                        c.revision
                    ));
                }
            }
            ctx.cancel_timer(LockServerTimer::LeaseDue { key });
        }
    }

    /// Starts (or restarts) the count of `key`'s lease at its full TTL.
    fn start_count(&mut self, ctx: &mut Ctx<'_, Self>, key: String, rec: &LockRecord, inherited: bool) {
        let ttl_us = rec.ttl_ms * MS_US;
        if inherited && !self.countdowns.contains_key(&key) {
            ctx.note(format!(
                "{} now leads and its log says {} holds {key} (revision {}). It cannot know how much of that lease the previous leader had already counted down, so it starts the count afresh at the full {}: a lease may outlive a failover, it must never end early because of one.",
                ctx.me(),
                ctx.name(rec.owner),
                rec.revision,
                seconds(rec.ttl_ms)
            ));
        }
        self.countdowns.insert(
            key.clone(),
            Countdown {
                revision: rec.revision,
                renewed_at: rec.renewed_at,
                deadline_us: ctx.local_now_us + ttl_us,
                expiring: false,
            },
        );
        ctx.set_timer(LockServerTimer::LeaseDue { key }, ttl_us);
    }

    fn lease_due(&mut self, ctx: &mut Ctx<'_, Self>, key: &str) {
        let leader = self.server.role == Role::Leader;
        let Some(c) = self.countdowns.get(key).cloned() else {
            return;
        };
        // The timer may have waited out a pause of this server: judge by the clock again.
        if !leader || c.expiring || ctx.local_now_us < c.deadline_us {
            return;
        }
        let owner = self
            .server
            .locks
            .locks
            .get(key)
            .map(|r| ctx.name(r.owner))
            .unwrap_or_default();
        ctx.note(format!(
            "By {}'s own clock the lease of {owner} on {key} (revision {}) has run out. The leader does not simply forget it: it proposes an expiry, and {key} is free only once a majority has committed that entry.",
            ctx.me(),
            c.revision
        ));
        if self.propose(
            ctx,
            LockOp::Expire {
                key: key.to_string(),
                revision: c.revision,
                renewed_at: c.renewed_at,
            },
        ) {
            if let Some(c) = self.countdowns.get_mut(key) {
                c.expiring = true;
            }
        }
        self.after(ctx);
    }
}

impl Participant for LockServer {
    type Msg = RaftMsg;
    type Timer = LockServerTimer;
    type Durable = ServerDurable;
    type Config = ServerConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.countdowns.clear();
        self.led = false;
        self.drive(ctx, |s, c| s.on_start(c));
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RaftMsg) {
        self.drive(ctx, |s, c| s.on_message(c, from, msg));
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: LockServerTimer) {
        match timer {
            LockServerTimer::Raft(t) => self.drive(ctx, |s, c| s.on_timer(c, t)),
            LockServerTimer::LeaseDue { key } => self.lease_due(ctx, &key),
        }
    }

    fn recover(config: &ServerConfig, id: NodeId, durable: &ServerDurable) -> Self {
        LockServer::new(RaftServer::recover(config, id, durable))
    }

    fn summary(&self, view: &ViewCtx<'_>) -> Vec<String> {
        let mut lines = self.server.summary(view);
        for (key, r) in &self.server.locks.locks {
            let left = self
                .countdowns
                .get(key)
                .map(|c| {
                    format!(
                        " · {} left",
                        seconds(c.deadline_us.saturating_sub(view.local_now_us) / MS_US)
                    )
                })
                .unwrap_or_default();
            lines.push(format!("{key}: {} rev {}{left}", view.name(r.owner), r.revision));
        }
        lines
    }

    fn durable_summary(config: &ServerConfig, durable: &ServerDurable, view: &ViewCtx<'_>) -> Vec<String> {
        RaftServer::durable_summary(config, durable, view)
    }

    fn inputs(&self) -> Vec<InputSpec> {
        self.server.inputs()
    }

    /// A user input for the Raft server (e.g. forcing its election timeout).
    fn on_input(&mut self, ctx: &mut Ctx<'_, Self>, input: &str) -> Result<(), String> {
        let result = self.raft(ctx, |s, c| s.on_input(c, input));
        if result.is_ok() {
            self.after(ctx);
        }
        result
    }

    fn gauge(&self, view: &ViewCtx<'_>) -> Option<Gauge> {
        self.server.gauge(view)
    }

    fn log_cells(&self) -> Vec<LogCell> {
        self.server.log_cells()
    }

    fn durable_log_cells(durable: &ServerDurable) -> Vec<LogCell> {
        RaftServer::durable_log_cells(durable)
    }
}
