//! A consensus-backed lock service, as etcd builds one: a Raft server (the unchanged model
//! of [`super::raft`]) replicating the lock table of [`super::lock_store`], plus the one job
//! only the leader does — counting each lease down by its own clock and, when one runs out,
//! proposing an expiry entry. Nothing is free until that entry commits.
//!
//! A newly elected leader cannot know how far its predecessor had counted a lease down, so
//! it starts every lease it inherits afresh at its full TTL: after a failover a lease can
//! only last longer than promised, never shorter. A new leader also commits an empty entry
//! of its own term at once, which is how it learns what is committed (Raft §8).

use super::lease_msg::LeaseMsg;
use super::lock_store::LockOp;
use super::raft::{Command, RaftDurable, RaftMsg, RaftNode, RaftServer, RaftTimer, Role, ServerDurable};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Effect, Label, Participant};
use crate::kernel::time::MS_US;
use std::collections::BTreeMap;

/// Everything on the wire of the consensus-lock scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsensusMsg {
    /// Raft among the servers, and the client protocol between workers and servers.
    Raft(RaftMsg),
    /// A worker and the fenced ledger.
    Ledger(LeaseMsg),
}

impl Label for ConsensusMsg {
    fn label(&self) -> String {
        match self {
            ConsensusMsg::Raft(m) => m.label(),
            ConsensusMsg::Ledger(m) => m.label(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsensusTimer {
    Raft(RaftTimer),
    /// The leader's countdown of a key's lease, by the leader's clock.
    LeaseDue {
        key: String,
    },
    /// A worker's job fires.
    Start,
    /// A worker asks for the lock again after finding it held.
    Retry,
    /// A worker renews its lease.
    KeepAlive,
    /// A worker's request got no answer in time (or was redirected): send it again.
    Resend,
    StepDone {
        step: u32,
    },
}

impl Label for ConsensusTimer {
    fn label(&self) -> String {
        match self {
            ConsensusTimer::Raft(t) => t.label(),
            ConsensusTimer::LeaseDue { key } => format!("lease countdown of {key} runs out"),
            ConsensusTimer::Start => "the job fires".into(),
            ConsensusTimer::Retry => "asks for the lock again".into(),
            ConsensusTimer::KeepAlive => "time to renew the lease".into(),
            ConsensusTimer::Resend => "no answer yet: resend".into(),
            ConsensusTimer::StepDone { step } => format!("finishes the work of step {step}"),
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
    /// Always the `Server` variant; kept as a [`RaftNode`] to drive it through its own
    /// participant entry points.
    pub raft: RaftNode,
    pub names: Vec<String>,
    /// Leader only: the lease countdowns (volatile, gone on a crash or a step-down).
    pub countdowns: BTreeMap<String, Countdown>,
    /// Whether it was leader after the last event it handled.
    led: bool,
}

impl LockServer {
    pub fn new(server: RaftServer, names: Vec<String>) -> LockServer {
        LockServer {
            raft: RaftNode::Server(Box::new(server)),
            names,
            countdowns: BTreeMap::new(),
            led: false,
        }
    }

    pub fn recover(id: NodeId, durable: &ServerDurable) -> LockServer {
        let names = durable.config.names.clone();
        LockServer {
            raft: RaftNode::recover(id, &RaftDurable::Server(durable.clone())),
            names,
            countdowns: BTreeMap::new(),
            led: false,
        }
    }

    pub fn server(&self) -> Option<&RaftServer> {
        self.raft.server()
    }

    fn name(&self, id: NodeId) -> String {
        self.names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    pub fn start<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        self.countdowns.clear();
        self.led = false;
        self.drive(ctx, |r, c| r.on_start(c));
    }

    pub fn message<P>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, msg: RaftMsg)
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        self.drive(ctx, |r, c| r.on_message(c, from, msg));
    }

    pub fn timer<P>(&mut self, ctx: &mut Ctx<'_, P>, timer: ConsensusTimer)
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        match timer {
            ConsensusTimer::Raft(t) => self.drive(ctx, |r, c| r.on_timer(c, t)),
            ConsensusTimer::LeaseDue { key } => self.lease_due(ctx, &key),
            _ => {}
        }
    }

    /// A user input for the Raft server (e.g. forcing its election timeout).
    pub fn input<P>(&mut self, ctx: &mut Ctx<'_, P>, input: &str) -> Result<(), String>
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        let result = self.raft_call(ctx, |r, c| r.on_input(c, input));
        if result.is_ok() {
            self.after(ctx);
        }
        result
    }

    /// Runs the Raft server on one input, then does the leader's lease bookkeeping.
    fn drive<P>(&mut self, ctx: &mut Ctx<'_, P>, run: impl FnOnce(&mut RaftNode, &mut Ctx<'_, RaftNode>))
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        self.raft_call(ctx, run);
        self.after(ctx);
    }

    fn raft_call<P, R>(
        &mut self,
        ctx: &mut Ctx<'_, P>,
        run: impl FnOnce(&mut RaftNode, &mut Ctx<'_, RaftNode>) -> R,
    ) -> R
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        let mut effects: Vec<Effect<RaftNode>> = Vec::new();
        let result = run(
            &mut self.raft,
            &mut Ctx::new(ctx.node, ctx.local_now_us, ctx.rng, &mut effects),
        );
        for e in effects {
            match e {
                Effect::Send { to, msg } => ctx.send(to, ConsensusMsg::Raft(msg)),
                Effect::SetTimer {
                    timer,
                    after_local_us,
                } => ctx.set_timer(ConsensusTimer::Raft(timer), after_local_us),
                Effect::CancelTimer { timer } => ctx.cancel_timer(ConsensusTimer::Raft(timer)),
                Effect::Persist(RaftDurable::Server(d)) => ctx.persist(d.into()),
                Effect::Persist(RaftDurable::Client(_)) => {}
                Effect::Note(n) => ctx.note(n),
            }
        }
        result
    }

    fn propose<P>(&mut self, ctx: &mut Ctx<'_, P>, op: LockOp) -> bool
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        self.raft_call(ctx, |r, c| match r {
            RaftNode::Server(s) => s.propose(c, Command::Lock(op)).is_some(),
            RaftNode::Client(_) => false,
        })
    }

    /// The leader's bookkeeping after every event: a fresh leader commits a no-op, and every
    /// applied lock gets a countdown that matches its last grant or keep-alive.
    fn after<P>(&mut self, ctx: &mut Ctx<'_, P>)
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        let Some(s) = self.server() else { return };
        if s.role != Role::Leader {
            self.led = false;
            for key in std::mem::take(&mut self.countdowns).into_keys() {
                ctx.cancel_timer(ConsensusTimer::LeaseDue { key });
            }
            return;
        }
        if !self.led {
            self.led = true;
            ctx.note(format!(
                "{} commits an empty entry of its own term first: once it commits, every earlier entry is known committed, the lock table included.",
                self.name(ctx.node)
            ));
            self.propose(ctx, LockOp::Barrier);
        }
        let Some(s) = self.server() else { return };
        let (term, me) = (s.term, self.name(ctx.node));
        let mut restart = Vec::new();
        for (key, rec) in &s.locks.locks {
            let same = self
                .countdowns
                .get(key)
                .is_some_and(|c| c.revision == rec.revision && c.renewed_at == rec.renewed_at);
            if same {
                continue;
            }
            let inherited = s
                .term_at(super::raft::LogIndex(rec.renewed_at))
                .is_some_and(|t| t < term);
            restart.push((key.clone(), rec.clone(), inherited));
        }
        let held: Vec<(String, u64)> = s
            .locks
            .locks
            .iter()
            .map(|(k, r)| (k.clone(), r.revision))
            .collect();
        let gone: Vec<String> = self
            .countdowns
            .iter()
            .filter(|(k, c)| !held.iter().any(|(hk, rev)| hk == *k && *rev == c.revision))
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            if let Some(c) = self.countdowns.remove(&key) {
                if c.expiring {
                    ctx.note(format!(
                        "{me} applies the expiry of revision {}: it is committed on a majority, so {key} is free, and no later leader can bring that lease back. Its holder is not told — a worker that stopped sending keep-alives may not be listening.",
                        c.revision
                    ));
                }
            }
            ctx.cancel_timer(ConsensusTimer::LeaseDue { key });
        }
        for (key, rec, inherited) in restart {
            let ttl_us = rec.ttl_ms * MS_US;
            if inherited && !self.countdowns.contains_key(&key) {
                ctx.note(format!(
                    "{me} now leads and its log says {} holds {key} (revision {}). It cannot know how much of that lease the previous leader had already counted down, so it starts the count afresh at the full {}: a lease may outlive a failover, it must never end early because of one.",
                    self.name(rec.owner),
                    rec.revision,
                    super::lease_msg::seconds(rec.ttl_ms)
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
            ctx.set_timer(ConsensusTimer::LeaseDue { key }, ttl_us);
        }
    }

    fn lease_due<P>(&mut self, ctx: &mut Ctx<'_, P>, key: &str)
    where
        P: Participant<Msg = ConsensusMsg, Timer = ConsensusTimer>,
        P::Durable: From<ServerDurable>,
    {
        let leader = self.server().is_some_and(|s| s.role == Role::Leader);
        let Some(c) = self.countdowns.get(key).cloned() else {
            return;
        };
        // The timer may have waited out a pause of this server: judge by the clock again.
        if !leader || c.expiring || ctx.local_now_us < c.deadline_us {
            return;
        }
        let owner = self
            .server()
            .and_then(|s| s.locks.locks.get(key))
            .map(|r| self.name(r.owner))
            .unwrap_or_default();
        ctx.note(format!(
            "By {}'s own clock the lease of {owner} on {key} (revision {}) has run out. The leader does not simply forget it: it proposes an expiry, and {key} is free only once a majority has committed that entry.",
            self.name(ctx.node),
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

    pub fn summary(&self, local_now_us: u64) -> Vec<String> {
        let mut lines = self.raft.summary(local_now_us);
        if let Some(s) = self.server() {
            for (key, r) in &s.locks.locks {
                let left = self
                    .countdowns
                    .get(key)
                    .map(|c| {
                        format!(
                            " · {} left",
                            super::lease_msg::seconds(c.deadline_us.saturating_sub(local_now_us) / MS_US)
                        )
                    })
                    .unwrap_or_default();
                lines.push(format!("{key}: {} rev {}{left}", self.name(r.owner), r.revision));
            }
        }
        lines
    }
}
