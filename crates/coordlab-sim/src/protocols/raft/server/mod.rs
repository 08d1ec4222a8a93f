//! One Raft server: its settings, what it persists, its state, and its contract with the
//! kernel. The rules themselves live in `election.rs` (terms, timers, votes) and
//! `replication.rs` (AppendEntries, commit, apply, client writes).
//!
//! Another participant may host a server (the consensus lock's `LockServer` does): every
//! handler and [`RaftServer::propose`] take a `Ctx<'_, RaftServer>`, which the host gets
//! from `ctx.within`.

mod election;
mod replication;

use super::msg::RaftMsg;
use super::types::{Entry, LogIndex, RaftBug, Role, Term};
use crate::kernel::collections::{VecMap, VecSet};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::kernel::view::InputSpec;
use crate::presentation::narration::raft::server::RaftServerSaw;
use crate::protocols::services::lock_store::LockTable;

/// Fixed settings of one server: its configuration, which the scenario gives once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// Every server of the cluster (including this one), in id order.
    pub cluster: Vec<NodeId>,
    pub election_timeout_ms_min: u64,
    pub election_timeout_ms_max: u64,
    pub heartbeat_ms: u64,
    /// End of the demo by this server's clock: after it, no timer is set again, so the run
    /// drains and stops on its own.
    pub stop_at_ms: u64,
    pub bug: RaftBug,
}

impl ServerConfig {
    pub fn majority(&self) -> usize {
        self.cluster.len() / 2 + 1
    }

    fn election_range_us(&self) -> (u64, u64) {
        let min = self.election_timeout_ms_min.max(1);
        let max = self.election_timeout_ms_max.max(min);
        (min * MS_US, max * MS_US)
    }
}

/// What survives a crash: the paper's persistent state. A server that has never run has
/// term 0, no vote and an empty log (the default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerDurable {
    pub term: Term,
    pub voted_for: Option<NodeId>,
    pub log: Vec<Entry>,
    /// How many times the log has been cut back (see [`RaftServer::log_cuts`]).
    pub log_cuts: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaftTimer {
    /// A follower or candidate heard nothing for a whole election timeout.
    Election,
    /// The leader's heartbeat round (a candidate re-asks silent voters on it too).
    Heartbeat,
}

/// One Raft server.
#[derive(Clone, Debug)]
pub struct RaftServer {
    pub id: NodeId,
    /// A copy of the configuration the engine keeps (handlers read it on every call).
    pub config: ServerConfig,
    // Persistent (mirrored to the durable copy on every change).
    pub term: Term,
    pub voted_for: Option<NodeId>,
    pub log: Vec<Entry>,
    /// How many times this server has dropped a suffix of its log, over its whole life
    /// (persisted with the log). Nothing in the protocol reads it: while it stays the same,
    /// the log has only grown, so the world's safety checks need look only at new entries.
    pub log_cuts: u64,
    // Volatile.
    pub role: Role,
    pub leader_hint: Option<NodeId>,
    pub commit_index: LogIndex,
    pub last_applied: LogIndex,
    pub kv: VecMap<String, u32>,
    /// The lock table, applied from the log like `kv` (volatile: rebuilt after a restart).
    pub locks: LockTable,
    pub votes: VecSet<NodeId>,
    /// Peers that answered this candidacy, yes or no (the others are asked again).
    pub answered: VecSet<NodeId>,
    pub next_index: VecMap<NodeId, LogIndex>,
    pub match_index: VecMap<NodeId, LogIndex>,
    /// Client requests waiting for their entry to commit: index → (client, request id).
    pub pending: VecMap<LogIndex, (NodeId, u32)>,
    /// When the election timer fires, by this server's clock (for the timer display).
    pub election_deadline_us: Option<u64>,
    /// The length of the timeout drawn last, by this server's clock (the gauge's full turn).
    pub election_timeout_us: u64,
    /// The first election timeout after the very first start, if the scenario staggers boots.
    pub first_timeout_ms: Option<(u64, u64)>,
    /// With [`RaftBug::ForgetVoteOnRestart`]: the vote (term, candidate) the last restart
    /// lost, for the narration of a second vote in that term.
    pub forgotten_vote: Option<(Term, NodeId)>,
    /// Counters for the world's outcome (volatile; the world adds up increases).
    pub stale_appends_rejected: u64,
    pub entries_discarded: u64,
}

impl RaftServer {
    /// The input a follower or candidate takes; a leader runs no election timer.
    pub const TIMEOUT_INPUT: &'static str = "timeout";

    /// Runs one handler of this server inside the participant `H` that hosts it (a lock
    /// service's server, an election trial's): `timer` wraps Raft's timers in the host's, and
    /// the host persists Raft's durable state as its own. Every host needs exactly this.
    pub fn run_hosted<H: Participant<Durable = ServerDurable>, R>(
        &mut self,
        ctx: &mut Ctx<'_, H>,
        timer: impl Fn(RaftTimer) -> H::Timer,
        run: impl FnOnce(&mut RaftServer, &mut Ctx<'_, RaftServer>) -> R,
    ) -> R {
        ctx.within(timer, |d| d, |inner| run(self, inner))
    }

    /// A server that has never run.
    pub fn new(id: NodeId, config: ServerConfig) -> RaftServer {
        RaftServer::restore(&config, id, &ServerDurable::default())
    }

    /// The server as it comes back from what it persisted: everything volatile starts afresh.
    fn restore(config: &ServerConfig, id: NodeId, d: &ServerDurable) -> RaftServer {
        RaftServer {
            id,
            config: config.clone(),
            term: d.term,
            voted_for: d.voted_for,
            log: d.log.clone(),
            log_cuts: d.log_cuts,
            role: Role::Follower,
            leader_hint: None,
            commit_index: LogIndex(0),
            last_applied: LogIndex(0),
            kv: VecMap::new(),
            locks: LockTable::default(),
            votes: VecSet::new(),
            answered: VecSet::new(),
            next_index: VecMap::new(),
            match_index: VecMap::new(),
            pending: VecMap::new(),
            election_deadline_us: None,
            election_timeout_us: 0,
            first_timeout_ms: None,
            forgotten_vote: None,
            stale_appends_rejected: 0,
            entries_discarded: 0,
        }
    }

    pub fn durable(&self) -> ServerDurable {
        ServerDurable {
            term: self.term,
            voted_for: self.voted_for,
            log: self.log.clone(),
            log_cuts: self.log_cuts,
        }
    }

    pub fn last_index(&self) -> LogIndex {
        LogIndex(self.log.len() as u64)
    }

    pub fn last_term(&self) -> Term {
        self.log.last().map_or(Term(0), |e| e.term)
    }

    /// The term of the entry at `index` (term 0 for index 0), or None past the end.
    pub fn term_at(&self, index: LogIndex) -> Option<Term> {
        if index.0 == 0 {
            return Some(Term(0));
        }
        self.log.get(index.0 as usize - 1).map(|e| e.term)
    }

    fn peers(&self) -> Vec<NodeId> {
        self.config
            .cluster
            .iter()
            .copied()
            .filter(|p| *p != self.id)
            .collect()
    }

    fn before_horizon(&self, ctx: &Ctx<'_, Self>) -> bool {
        ctx.local_now_us < self.config.stop_at_ms * MS_US
    }

    fn persist(&self, ctx: &mut Ctx<'_, Self>) {
        ctx.persist(self.durable());
    }

    fn heartbeat_us(&self) -> u64 {
        self.config.heartbeat_ms.max(1) * MS_US
    }
}

impl Participant for RaftServer {
    type Msg = RaftMsg;
    type Timer = RaftTimer;
    type Durable = ServerDurable;
    type Config = ServerConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.role = Role::Follower;
        ctx.note(RaftServerSaw::Started {
            me: ctx.me(),
            term: self.term,
        });
        if let Some((term, v)) = self.forgotten_vote {
            let whom = if v == self.id { "itself" } else { ctx.name(v) };
            ctx.note(RaftServerSaw::CameBackWithoutVote {
                me: ctx.me(),
                whom,
                term,
            });
        }
        self.reset_election_timer(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RaftMsg) {
        if let Some(term) = msg.term() {
            if term > self.term {
                self.adopt_term(ctx, term, from);
            }
        }
        match msg {
            RaftMsg::RequestVote {
                term,
                last_log_index,
                last_log_term,
            } => self.on_request_vote(ctx, from, term, last_log_index, last_log_term),
            RaftMsg::Vote { term, granted } => self.on_vote(ctx, from, term, granted),
            msg @ RaftMsg::AppendEntries { .. } => self.on_append(ctx, from, msg),
            RaftMsg::AppendReply { term, success, index } => {
                self.on_append_reply(ctx, from, term, success, index)
            }
            RaftMsg::ClientRequest { id, command } => self.on_client_request(ctx, from, id, command),
            RaftMsg::ClientReply { .. } => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: RaftTimer) {
        match timer {
            RaftTimer::Election => self.election_timeout(ctx),
            RaftTimer::Heartbeat => self.heartbeat_round(ctx),
        }
    }

    /// Rebuilds the server from its persisted term, vote and log. With
    /// [`RaftBug::ForgetVoteOnRestart`] the vote is lost on the way.
    fn recover(config: &ServerConfig, id: NodeId, durable: &ServerDurable) -> Self {
        let mut s = RaftServer::restore(config, id, durable);
        if config.bug == RaftBug::ForgetVoteOnRestart {
            s.forgotten_vote = s.voted_for.take().map(|v| (s.term, v));
        }
        s
    }

    fn inputs(&self) -> Vec<InputSpec> {
        if self.role == Role::Leader {
            return Vec::new();
        }
        vec![InputSpec {
            code: RaftServer::TIMEOUT_INPUT.into(),
            label: "Force election timeout".into(),
        }]
    }

    fn on_input(&mut self, ctx: &mut Ctx<'_, Self>, input: &str) -> Result<(), String> {
        if input == RaftServer::TIMEOUT_INPUT {
            self.force_timeout(ctx)
        } else {
            Err(format!(
                "a Raft server takes only `{}`",
                RaftServer::TIMEOUT_INPUT
            ))
        }
    }
}
