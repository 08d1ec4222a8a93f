//! A Raft server and a small client, as pure state machines (Ongaro & Ousterhout, "In Search
//! of an Understandable Consensus Algorithm", 2014).
//!
//! The server follows the paper's Figure 2: roles follower / candidate / leader; terms only
//! grow; a message carrying a higher term makes the receiver adopt it and step down *before*
//! it handles the message; a message with a stale term is refused. Current term, vote and log
//! are persisted ([`ServerDurable`]); role, commit index, applied state and the leader's
//! per-follower progress are volatile and rebuilt after a restart.
//!
//! Three switches in [`RaftBug`] plant well-known mistakes so the safety checker can be seen
//! failing. With [`RaftBug::None`] the server is meant to be correct.
//!
//! Every server and client draws randomness only from its own stream (`ctx.rng`) and reads
//! only its own clock (`ctx.local_now_us`).

use super::lock_store::{LockOp, LockResult, LockTable};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Label, Participant};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::trace::{Gauge, InputSpec, LogCell};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Most servers one Raft cluster may have.
pub const MAX_SERVERS: u32 = 7;
/// Most entries one AppendEntries carries; the rest follow in the next round.
const MAX_ENTRIES_PER_APPEND: usize = 16;

/// An election term. Terms only grow on every server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Term(pub u64);

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A position in the log; the first entry has index 1, index 0 means "before the log".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LogIndex(pub u64);

impl LogIndex {
    pub fn next(self) -> LogIndex {
        LogIndex(self.0 + 1)
    }
    pub fn prev(self) -> LogIndex {
        LogIndex(self.0.saturating_sub(1))
    }
}

impl fmt::Display for LogIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A command for the replicated state machine: `set key=value` on the key-value map, or an
/// operation on the lock table (the consensus-backed lock service).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    Set { key: String, value: u32 },
    Lock(LockOp),
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Set { key, value } => write!(f, "set {key}={value}"),
            Command::Lock(op) => write!(f, "{op}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub term: Term,
    pub command: Command,
}

/// A planted mistake, for showing that the checker can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaftBug {
    None,
    /// Voters grant votes without comparing logs (breaks §5.4.1).
    SkipUpToDateCheck,
    /// Leaders commit any entry stored on a majority, even from older terms (breaks §5.4.2).
    CommitOldTermByCount,
    /// A restarted server forgets whom it voted for in its current term (breaks §5.2's
    /// "at most one vote per term" across crashes).
    ForgetVoteOnRestart,
}

impl RaftBug {
    pub const VALUES: [&'static str; 4] = [
        "none",
        "skip-up-to-date-check",
        "commit-old-term-by-count",
        "forget-vote-on-restart",
    ];

    pub fn parse(text: &str) -> Option<RaftBug> {
        match text {
            "none" => Some(RaftBug::None),
            "skip-up-to-date-check" => Some(RaftBug::SkipUpToDateCheck),
            "commit-old-term-by-count" => Some(RaftBug::CommitOldTermByCount),
            "forget-vote-on-restart" => Some(RaftBug::ForgetVoteOnRestart),
            _ => None,
        }
    }
}

/// Fixed settings of one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// Every server of the cluster (including this one), in id order.
    pub cluster: Vec<NodeId>,
    /// Display names of every node of the run, indexed by id.
    pub names: Vec<String>,
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

    fn name(&self, id: NodeId) -> String {
        self.names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn election_range_us(&self) -> (u64, u64) {
        let min = self.election_timeout_ms_min.max(1);
        let max = self.election_timeout_ms_max.max(min);
        (min * MS_US, max * MS_US)
    }
}

/// What survives a crash: the paper's persistent state, plus the server's fixed settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerDurable {
    pub config: ServerConfig,
    pub term: Term,
    pub voted_for: Option<NodeId>,
    pub log: Vec<Entry>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Follower => "FOLLOWER",
            Role::Candidate => "CANDIDATE",
            Role::Leader => "LEADER",
        }
    }
}

/// What a server answers a client. (Labels name servers `S1`, `S2`, … by id + 1, as the
/// Raft scenarios do.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientAnswer {
    /// Not the leader; the last leader this server heard from, if any.
    NotLeader { leader: Option<NodeId> },
    /// The command is committed and applied at this index.
    Committed { index: LogIndex },
    /// A lock operation is committed and applied at this index, with this result.
    Locked { index: LogIndex, result: LockResult },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaftMsg {
    RequestVote {
        term: Term,
        last_log_index: LogIndex,
        last_log_term: Term,
    },
    Vote {
        term: Term,
        granted: bool,
    },
    AppendEntries {
        term: Term,
        prev_log_index: LogIndex,
        prev_log_term: Term,
        entries: Vec<Entry>,
        leader_commit: LogIndex,
    },
    AppendReply {
        term: Term,
        success: bool,
        /// On success the last index the follower now matches; on failure its last index
        /// (a hint so the leader need not step back one entry at a time past the end).
        index: LogIndex,
    },
    ClientRequest {
        id: u32,
        command: Command,
    },
    ClientReply {
        id: u32,
        answer: ClientAnswer,
    },
}

impl RaftMsg {
    /// The term a server-to-server message carries.
    pub fn term(&self) -> Option<Term> {
        match self {
            RaftMsg::RequestVote { term, .. }
            | RaftMsg::Vote { term, .. }
            | RaftMsg::AppendEntries { term, .. }
            | RaftMsg::AppendReply { term, .. } => Some(*term),
            RaftMsg::ClientRequest { .. } | RaftMsg::ClientReply { .. } => None,
        }
    }
}

impl Label for RaftMsg {
    fn label(&self) -> String {
        match self {
            RaftMsg::RequestVote {
                term,
                last_log_index,
                last_log_term,
            } => format!("RequestVote term {term} (last log {last_log_index} term {last_log_term})"),
            RaftMsg::Vote { term, granted: true } => format!("vote granted · term {term}"),
            RaftMsg::Vote { term, granted: false } => format!("vote refused · term {term}"),
            RaftMsg::AppendEntries {
                term,
                prev_log_index,
                prev_log_term,
                entries,
                leader_commit,
            } => {
                if entries.is_empty() {
                    format!(
                        "heartbeat term {term} (prev {prev_log_index}/t{prev_log_term}, commit {leader_commit})"
                    )
                } else {
                    format!(
                        "AppendEntries term {term} +{} after {prev_log_index}/t{prev_log_term} (commit {leader_commit})",
                        entries.len()
                    )
                }
            }
            RaftMsg::AppendReply {
                term,
                success: true,
                index,
            } => format!("append ok · term {term} · matches up to {index}"),
            RaftMsg::AppendReply {
                term,
                success: false,
                index,
            } => format!("append refused · term {term} · my log ends at {index}"),
            RaftMsg::ClientRequest { id, command } => format!("request {id}: {command}"),
            RaftMsg::ClientReply {
                id,
                answer: ClientAnswer::Committed { index },
            } => format!("reply {id}: committed at {index}"),
            RaftMsg::ClientReply {
                id,
                answer: ClientAnswer::Locked { index, result },
            } => format!("reply {id}: {result} (entry {index})"),
            RaftMsg::ClientReply {
                id,
                answer: ClientAnswer::NotLeader { leader: Some(l) },
            } => format!("reply {id}: not the leader, try S{}", l.0 + 1),
            RaftMsg::ClientReply {
                id,
                answer: ClientAnswer::NotLeader { leader: None },
            } => format!("reply {id}: not the leader, leader unknown"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaftTimer {
    /// A follower or candidate heard nothing for a whole election timeout.
    Election,
    /// The leader's heartbeat round (a candidate re-asks silent voters on it too).
    Heartbeat,
    /// The client sends its next request.
    ClientSend,
    /// The client's request got no answer in time.
    ClientRetry,
}

impl Label for RaftTimer {
    fn label(&self) -> String {
        match self {
            RaftTimer::Election => "election timeout".into(),
            RaftTimer::Heartbeat => "heartbeat round".into(),
            RaftTimer::ClientSend => "time for the next request".into(),
            RaftTimer::ClientRetry => "no answer yet: retry".into(),
        }
    }
}

/// One Raft server.
#[derive(Clone, Debug)]
pub struct RaftServer {
    pub id: NodeId,
    pub config: ServerConfig,
    // Persistent (mirrored to the durable copy on every change).
    pub term: Term,
    pub voted_for: Option<NodeId>,
    pub log: Vec<Entry>,
    // Volatile.
    pub role: Role,
    pub leader_hint: Option<NodeId>,
    pub commit_index: LogIndex,
    pub last_applied: LogIndex,
    pub kv: BTreeMap<String, u32>,
    /// The lock table, applied from the log like `kv` (volatile: rebuilt after a restart).
    pub locks: LockTable,
    pub votes: BTreeSet<NodeId>,
    /// Peers that answered this candidacy, yes or no (the others are asked again).
    pub answered: BTreeSet<NodeId>,
    pub next_index: BTreeMap<NodeId, LogIndex>,
    pub match_index: BTreeMap<NodeId, LogIndex>,
    /// Client requests waiting for their entry to commit: index → (client, request id).
    pub pending: BTreeMap<LogIndex, (NodeId, u32)>,
    /// When the election timer fires, by this server's clock (for the timer display).
    pub election_deadline_us: Option<u64>,
    /// The length of the timeout drawn last, by this server's clock (the gauge's full turn).
    pub election_timeout_us: u64,
    /// The first election timeout after the very first start, if the scenario staggers boots.
    pub first_timeout_ms: Option<(u64, u64)>,
    /// Counters for the world's outcome (volatile; the world adds up increases).
    pub stale_appends_rejected: u64,
    pub entries_discarded: u64,
}

impl RaftServer {
    pub fn new(id: NodeId, config: ServerConfig) -> RaftServer {
        RaftServer::from_durable(
            id,
            &ServerDurable {
                config,
                term: Term(0),
                voted_for: None,
                log: Vec::new(),
            },
        )
    }

    /// The persisted state of a server that has never run.
    pub fn initial_durable(config: ServerConfig) -> ServerDurable {
        ServerDurable {
            config,
            term: Term(0),
            voted_for: None,
            log: Vec::new(),
        }
    }

    pub fn from_durable(id: NodeId, d: &ServerDurable) -> RaftServer {
        RaftServer {
            id,
            config: d.config.clone(),
            term: d.term,
            voted_for: d.voted_for,
            log: d.log.clone(),
            role: Role::Follower,
            leader_hint: None,
            commit_index: LogIndex(0),
            last_applied: LogIndex(0),
            kv: BTreeMap::new(),
            locks: LockTable::default(),
            votes: BTreeSet::new(),
            answered: BTreeSet::new(),
            next_index: BTreeMap::new(),
            match_index: BTreeMap::new(),
            pending: BTreeMap::new(),
            election_deadline_us: None,
            election_timeout_us: 0,
            first_timeout_ms: None,
            stale_appends_rejected: 0,
            entries_discarded: 0,
        }
    }

    pub fn durable(&self) -> ServerDurable {
        ServerDurable {
            config: self.config.clone(),
            term: self.term,
            voted_for: self.voted_for,
            log: self.log.clone(),
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

    fn name(&self, id: NodeId) -> String {
        self.config.name(id)
    }

    fn me(&self) -> String {
        self.name(self.id)
    }

    fn peers(&self) -> Vec<NodeId> {
        self.config
            .cluster
            .iter()
            .copied()
            .filter(|p| *p != self.id)
            .collect()
    }

    fn before_horizon(&self, ctx: &Ctx<'_, RaftNode>) -> bool {
        ctx.local_now_us < self.config.stop_at_ms * MS_US
    }

    fn persist(&self, ctx: &mut Ctx<'_, RaftNode>) {
        ctx.persist(RaftDurable::Server(self.durable()));
    }

    fn reset_election_timer(&mut self, ctx: &mut Ctx<'_, RaftNode>) {
        if !self.before_horizon(ctx) {
            ctx.cancel_timer(RaftTimer::Election);
            self.election_deadline_us = None;
            return;
        }
        let (min_us, max_us) = match self.first_timeout_ms.take() {
            Some((a, b)) => (a * MS_US, b.max(a) * MS_US),
            None => self.config.election_range_us(),
        };
        let after = between_us(ctx.rng, min_us, max_us);
        ctx.set_timer(RaftTimer::Election, after);
        self.election_deadline_us = Some(ctx.local_now_us + after);
        self.election_timeout_us = after;
    }

    /// Rule for all servers (§5.1): a higher term wins; adopt it and become a follower.
    fn adopt_term(&mut self, ctx: &mut Ctx<'_, RaftNode>, term: Term, from: NodeId) {
        let was = self.role;
        let old = self.term;
        self.term = term;
        self.voted_for = None;
        self.role = Role::Follower;
        self.votes.clear();
        self.pending.clear();
        self.persist(ctx);
        match was {
            Role::Leader => {
                ctx.cancel_timer(RaftTimer::Heartbeat);
                ctx.note(format!(
                    "{} sees term {term} from {} — newer than its own term {old}. A leader from an older term has no authority, so it steps down to follower.",
                    self.me(),
                    self.name(from)
                ));
                self.reset_election_timer(ctx);
            }
            Role::Candidate => ctx.note(format!(
                "{} gives up its candidacy in term {old}: {} is already in term {term}.",
                self.me(),
                self.name(from)
            )),
            Role::Follower => ctx.note(format!(
                "{} moves from term {old} to term {term}, learned from {}.",
                self.me(),
                self.name(from)
            )),
        }
    }

    /// `forced`: the user ran the timer out early (an input), rather than it firing.
    fn start_election(&mut self, ctx: &mut Ctx<'_, RaftNode>, forced: bool) {
        self.term = Term(self.term.0 + 1);
        self.role = Role::Candidate;
        self.voted_for = Some(self.id);
        self.leader_hint = None;
        self.votes = BTreeSet::from([self.id]);
        self.answered = BTreeSet::from([self.id]);
        self.persist(ctx);
        let why = if forced {
            "'s election timer is forced to run out now, whatever it has heard"
        } else {
            " heard no leader for a whole election timeout"
        };
        ctx.note(format!(
            "{}{why}. It becomes a candidate in term {}, votes for itself and asks the others.",
            self.me(),
            self.term
        ));
        self.reset_election_timer(ctx);
        if self.votes.len() >= self.config.majority() {
            self.become_leader(ctx);
            return;
        }
        self.ask_for_votes(ctx);
        if self.before_horizon(ctx) {
            ctx.set_timer(RaftTimer::Heartbeat, self.config.heartbeat_ms.max(1) * MS_US);
        }
    }

    fn ask_for_votes(&mut self, ctx: &mut Ctx<'_, RaftNode>) {
        for p in self.peers() {
            if !self.answered.contains(&p) {
                ctx.send(
                    p,
                    RaftMsg::RequestVote {
                        term: self.term,
                        last_log_index: self.last_index(),
                        last_log_term: self.last_term(),
                    },
                );
            }
        }
    }

    fn become_leader(&mut self, ctx: &mut Ctx<'_, RaftNode>) {
        self.role = Role::Leader;
        self.leader_hint = Some(self.id);
        ctx.cancel_timer(RaftTimer::Election);
        self.election_deadline_us = None;
        let next = self.last_index().next();
        self.next_index = self.peers().into_iter().map(|p| (p, next)).collect();
        self.match_index = self.peers().into_iter().map(|p| (p, LogIndex(0))).collect();
        ctx.note(format!(
            "{} has {} of {} votes — a majority — and is LEADER of term {}. It announces itself with a heartbeat at once.",
            self.me(),
            self.votes.len(),
            self.config.cluster.len(),
            self.term
        ));
        self.broadcast_append(ctx);
        if self.before_horizon(ctx) {
            ctx.set_timer(RaftTimer::Heartbeat, self.config.heartbeat_ms.max(1) * MS_US);
        }
        // A one-server cluster commits on its own.
        self.advance_commit(ctx);
    }

    fn send_append(&self, ctx: &mut Ctx<'_, RaftNode>, to: NodeId) {
        let next = self
            .next_index
            .get(&to)
            .copied()
            .unwrap_or(LogIndex(1))
            .max(LogIndex(1));
        let next = next.min(self.last_index().next());
        let prev = next.prev();
        let start = prev.0 as usize;
        let end = self.log.len().min(start + MAX_ENTRIES_PER_APPEND);
        ctx.send(
            to,
            RaftMsg::AppendEntries {
                term: self.term,
                prev_log_index: prev,
                prev_log_term: self.term_at(prev).unwrap_or(Term(0)),
                entries: self.log[start..end].to_vec(),
                leader_commit: self.commit_index,
            },
        );
    }

    fn broadcast_append(&self, ctx: &mut Ctx<'_, RaftNode>) {
        for p in self.peers() {
            self.send_append(ctx, p);
        }
    }

    /// §5.3/§5.4.2: the leader commits the highest index of its own term stored on a majority.
    fn advance_commit(&mut self, ctx: &mut Ctx<'_, RaftNode>) {
        if self.role != Role::Leader {
            return;
        }
        let mut n = self.last_index();
        while n > self.commit_index {
            let stored = 1 + self.match_index.values().filter(|m| **m >= n).count();
            let own_term = self.term_at(n) == Some(self.term);
            let allowed = own_term || self.config.bug == RaftBug::CommitOldTermByCount;
            if stored >= self.config.majority() && allowed {
                let old = self.commit_index;
                self.commit_index = n;
                ctx.note(format!(
                    "{} commits up to {n}: {stored} of {} servers store it{}.",
                    self.me(),
                    self.config.cluster.len(),
                    if n.0 > old.0 + 1 {
                        format!(
                            ", and every entry before it commits with it (from {})",
                            old.next()
                        )
                    } else {
                        String::new()
                    }
                ));
                break;
            }
            n = n.prev();
        }
        self.apply(ctx);
    }

    fn apply(&mut self, ctx: &mut Ctx<'_, RaftNode>) {
        while self.last_applied < self.commit_index {
            let i = self.last_applied.next();
            let Some(entry) = self.log.get(i.0 as usize - 1).cloned() else {
                break;
            };
            self.last_applied = i;
            let answer = match &entry.command {
                Command::Set { key, value } => {
                    self.kv.insert(key.clone(), *value);
                    ClientAnswer::Committed { index: i }
                }
                Command::Lock(op) => ClientAnswer::Locked {
                    index: i,
                    result: self.locks.apply(i.0, op),
                },
            };
            if let Some((client, id)) = self.pending.remove(&i) {
                ctx.note(format!(
                    "{} applies {i} ({}) and tells the client it is done.",
                    self.me(),
                    entry.command
                ));
                ctx.send(client, RaftMsg::ClientReply { id, answer });
            }
        }
    }

    fn on_request_vote(
        &mut self,
        ctx: &mut Ctx<'_, RaftNode>,
        from: NodeId,
        term: Term,
        last_log_index: LogIndex,
        last_log_term: Term,
    ) {
        let candidate = self.name(from);
        if term < self.term {
            ctx.note(format!(
                "{} refuses to vote for {candidate}: its term {term} is older than {}'s term {}.",
                self.me(),
                self.me(),
                self.term
            ));
            ctx.send(
                from,
                RaftMsg::Vote {
                    term: self.term,
                    granted: false,
                },
            );
            return;
        }
        let (my_term, my_len) = (self.last_term(), self.last_index());
        let up_to_date = last_log_term > my_term || (last_log_term == my_term && last_log_index >= my_len);
        let up_to_date = up_to_date || self.config.bug == RaftBug::SkipUpToDateCheck;
        let free = self.voted_for.is_none() || self.voted_for == Some(from);
        let granted = free && up_to_date;
        if granted {
            self.voted_for = Some(from);
            self.persist(ctx);
            self.reset_election_timer(ctx);
            ctx.note(format!(
                "{} votes for {candidate} in term {term}: it has not voted for anyone else this term and {candidate}'s log is at least as up to date as its own.",
                self.me()
            ));
        } else if !free {
            ctx.note(format!(
                "{} refuses {candidate}: it already voted for {} in term {term}, and a server votes once per term.",
                self.me(),
                self.voted_for.map(|v| self.name(v)).unwrap_or_default()
            ));
        } else {
            ctx.note(format!(
                "{} refuses {candidate}: {candidate}'s log (last term {last_log_term}, length {}) is behind its own (last term {my_term}, length {}), so {candidate} might lack committed entries.",
                self.me(),
                last_log_index.0,
                my_len.0
            ));
        }
        ctx.send(
            from,
            RaftMsg::Vote {
                term: self.term,
                granted,
            },
        );
    }

    fn on_vote(&mut self, ctx: &mut Ctx<'_, RaftNode>, from: NodeId, term: Term, granted: bool) {
        if self.role != Role::Candidate || term != self.term {
            return; // a late answer to an election that is over
        }
        self.answered.insert(from);
        if !granted {
            return;
        }
        self.votes.insert(from);
        if self.votes.len() >= self.config.majority() {
            ctx.cancel_timer(RaftTimer::Heartbeat);
            self.become_leader(ctx);
        }
    }

    fn on_append(&mut self, ctx: &mut Ctx<'_, RaftNode>, from: NodeId, m: AppendArgs) {
        let leader = self.name(from);
        if m.term < self.term {
            self.stale_appends_rejected += 1;
            ctx.note(format!(
                "{} rejects AppendEntries from {leader}: it carries term {}, but {} is in term {}. The term works as a fencing token: a deposed leader cannot write.",
                self.me(),
                m.term,
                self.me(),
                self.term
            ));
            ctx.send(
                from,
                RaftMsg::AppendReply {
                    term: self.term,
                    success: false,
                    index: self.last_index(),
                },
            );
            return;
        }
        if self.role == Role::Candidate {
            ctx.note(format!(
                "{} hears from {leader}, leader of its own term {}, and goes back to follower.",
                self.me(),
                self.term
            ));
        }
        if self.role != Role::Follower {
            ctx.cancel_timer(RaftTimer::Heartbeat);
            self.role = Role::Follower;
        }
        self.leader_hint = Some(from);
        self.reset_election_timer(ctx);
        if self.term_at(m.prev_log_index) != Some(m.prev_log_term) {
            ctx.note(format!(
                "{} cannot append after {}: its log has no entry of term {} there. The leader will step back and retry.",
                self.me(),
                m.prev_log_index,
                m.prev_log_term
            ));
            ctx.send(
                from,
                RaftMsg::AppendReply {
                    term: self.term,
                    success: false,
                    index: self.last_index(),
                },
            );
            return;
        }
        let mut changed = false;
        for (k, entry) in m.entries.iter().enumerate() {
            let index = LogIndex(m.prev_log_index.0 + 1 + k as u64);
            match self.term_at(index) {
                Some(t) if t == entry.term => continue,
                Some(_) => {
                    let dropped = self.log.len() as u64 - index.0 + 1;
                    self.entries_discarded += dropped;
                    self.log.truncate(index.0 as usize - 1);
                    ctx.note(format!(
                        "{} drops {dropped} entr{} from {index} on: they conflict with the leader's log and were never committed.",
                        self.me(),
                        if dropped == 1 { "y" } else { "ies" }
                    ));
                    self.log.push(entry.clone());
                }
                None => self.log.push(entry.clone()),
            }
            changed = true;
        }
        if changed {
            self.persist(ctx);
        }
        let matched = LogIndex(m.prev_log_index.0 + m.entries.len() as u64);
        if m.leader_commit > self.commit_index {
            let new = m.leader_commit.min(matched);
            if new > self.commit_index {
                self.commit_index = new;
                ctx.note(format!(
                    "{} learns from {leader} that entries up to {new} are committed.",
                    self.me()
                ));
            }
        }
        self.apply(ctx);
        ctx.send(
            from,
            RaftMsg::AppendReply {
                term: self.term,
                success: true,
                index: matched,
            },
        );
    }

    fn on_append_reply(
        &mut self,
        ctx: &mut Ctx<'_, RaftNode>,
        from: NodeId,
        term: Term,
        success: bool,
        index: LogIndex,
    ) {
        if self.role != Role::Leader || term != self.term {
            return;
        }
        if success {
            let m = self.match_index.entry(from).or_default();
            if index > *m {
                *m = index;
            }
            let next = self.next_index.entry(from).or_insert(LogIndex(1));
            if index.next() > *next {
                *next = index.next();
            }
            self.advance_commit(ctx);
            if self.next_index.get(&from).copied().unwrap_or_default() <= self.last_index() {
                self.send_append(ctx, from);
            }
        } else {
            let next = self.next_index.entry(from).or_insert(LogIndex(1));
            let stepped = next.prev().min(index.next()).max(LogIndex(1));
            *next = stepped;
            ctx.note(format!(
                "{}'s log does not match; {} steps back to {stepped} for it and retries.",
                self.name(from),
                self.me()
            ));
            self.send_append(ctx, from);
        }
    }

    fn on_client_request(&mut self, ctx: &mut Ctx<'_, RaftNode>, from: NodeId, id: u32, command: Command) {
        if self.role != Role::Leader {
            let hint = self.leader_hint.filter(|l| *l != self.id);
            ctx.note(format!(
                "{} is not the leader and will not take writes; it points the client to {}.",
                self.me(),
                hint.map(|l| self.name(l))
                    .unwrap_or_else(|| "nobody (it knows no leader)".into())
            ));
            ctx.send(
                from,
                RaftMsg::ClientReply {
                    id,
                    answer: ClientAnswer::NotLeader { leader: hint },
                },
            );
            return;
        }
        if self.pending.values().any(|(c, i)| *c == from && *i == id) {
            return; // already in the log and waiting to commit
        }
        let index = self.append_command(ctx, command);
        // Before committing: a one-server cluster commits (and answers) at once.
        self.pending.insert(index, (from, id));
        self.broadcast_append(ctx);
        self.advance_commit(ctx);
    }

    /// The leader appends `command` to its log and starts replicating it; no client waits
    /// for the answer (e.g. the lock service's own expiry entries). `None` if not the leader.
    pub fn propose(&mut self, ctx: &mut Ctx<'_, RaftNode>, command: Command) -> Option<LogIndex> {
        if self.role != Role::Leader {
            return None;
        }
        let index = self.append_command(ctx, command);
        self.broadcast_append(ctx);
        self.advance_commit(ctx);
        Some(index)
    }

    fn append_command(&mut self, ctx: &mut Ctx<'_, RaftNode>, command: Command) -> LogIndex {
        self.log.push(Entry {
            term: self.term,
            command: command.clone(),
        });
        self.persist(ctx);
        let index = self.last_index();
        ctx.note(format!(
            "{} appends {command} at {index} in term {}; it is not committed until a majority stores it.",
            self.me(),
            self.term
        ));
        index
    }
}

/// User inputs (`input:<node>:<word>`): a server's election timer forced to run out, a client
/// asked for one more write. Each goes through the same path as the event it imitates.
impl RaftServer {
    /// The input a follower or candidate takes; a leader runs no election timer.
    pub const TIMEOUT_INPUT: &'static str = "timeout";

    fn force_timeout(&mut self, ctx: &mut Ctx<'_, RaftNode>) -> Result<(), String> {
        if self.role == Role::Leader {
            // A leader has no election timer to run out; asking it to stand again would only
            // bump the term and depose itself, which is not what the button promises.
            return Err(format!(
                "{} is the leader; it runs no election timer, it sends heartbeats",
                self.me()
            ));
        }
        if !self.before_horizon(ctx) {
            return Err("the demo is over, so no more elections start".into());
        }
        self.election_deadline_us = None;
        self.start_election(ctx, true);
        Ok(())
    }
}

impl RaftClient {
    pub const WRITE_INPUT: &'static str = "write";

    /// One more write with a fresh command: at once if the client is idle, otherwise right
    /// after the write it is waiting on (the normal one-at-a-time path).
    fn extra_write(&mut self, ctx: &mut Ctx<'_, RaftNode>) -> Result<(), String> {
        if ctx.local_now_us >= self.config.stop_at_ms * MS_US {
            return Err("the demo is over and the client has stopped".into());
        }
        self.config.writes += 1;
        match self.outstanding {
            Some(busy) => ctx.note(format!(
                "The client is asked for one more write; it sends it once write {busy} is done."
            )),
            None => {
                // A scheduled next write (if any) is sent now instead; the extra one follows it.
                ctx.cancel_timer(RaftTimer::ClientSend);
                let id = self.next_id();
                self.outstanding = Some(id);
                self.redirected = false;
                ctx.note(format!(
                    "The client is asked for a write and sends request {id} ({}) to {}, the leader as far as it knows.",
                    RaftClient::command(id),
                    self.name(self.guess)
                ));
                self.send(ctx);
            }
        }
        Ok(())
    }
}

/// The arguments of one AppendEntries.
struct AppendArgs {
    term: Term,
    prev_log_index: LogIndex,
    prev_log_term: Term,
    entries: Vec<Entry>,
    leader_commit: LogIndex,
}

/// Settings of the client workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    pub servers: Vec<NodeId>,
    pub names: Vec<String>,
    /// How many writes to make, one after another.
    pub writes: u32,
    pub start_ms: u64,
    /// Pause between a committed write and the next one.
    pub interval_ms: u64,
    /// How long to wait for an answer before trying another server.
    pub retry_ms: u64,
    pub stop_at_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientDurable {
    pub config: ClientConfig,
}

/// A client that writes `set k=v` commands to whoever it believes leads, following redirects.
#[derive(Clone, Debug)]
pub struct RaftClient {
    pub config: ClientConfig,
    pub guess: NodeId,
    /// The request in flight, if any.
    pub outstanding: Option<u32>,
    pub committed: Vec<(u32, LogIndex)>,
    /// The id of this client's first write; the command follows from the id. Scenarios with
    /// several clients give each its own range so that their commands differ.
    pub first_id: u32,
    redirected: bool,
}

impl RaftClient {
    pub fn new(config: ClientConfig) -> RaftClient {
        let guess = config.servers.first().copied().unwrap_or(NodeId(0));
        RaftClient {
            config,
            guess,
            outstanding: None,
            committed: Vec::new(),
            first_id: 1,
            redirected: false,
        }
    }

    /// The id (and so the command) of the next write.
    pub fn next_id(&self) -> u32 {
        self.first_id.max(1) + self.committed.len() as u32
    }

    pub fn command(id: u32) -> Command {
        let keys = ["x", "y", "z"];
        Command::Set {
            key: keys[(id as usize - 1) % keys.len()].to_string(),
            value: id,
        }
    }

    fn name(&self, id: NodeId) -> String {
        self.config
            .names
            .get(id.index())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn send(&mut self, ctx: &mut Ctx<'_, RaftNode>) {
        let Some(id) = self.outstanding else { return };
        if ctx.local_now_us >= self.config.stop_at_ms * MS_US {
            ctx.note("The demo is over; the client stops retrying.");
            return;
        }
        ctx.send(
            self.guess,
            RaftMsg::ClientRequest {
                id,
                command: RaftClient::command(id),
            },
        );
        ctx.set_timer(RaftTimer::ClientRetry, self.config.retry_ms.max(1) * MS_US);
    }

    fn rotate(&mut self) {
        let s = &self.config.servers;
        let pos = s.iter().position(|x| *x == self.guess).unwrap_or(0);
        self.guess = s[(pos + 1) % s.len()];
    }
}

/// Every participant of a Raft scenario.
#[derive(Clone, Debug)]
pub enum RaftNode {
    Server(Box<RaftServer>),
    Client(RaftClient),
}

#[derive(Clone, Debug)]
pub enum RaftDurable {
    Server(ServerDurable),
    Client(ClientDurable),
}

impl RaftNode {
    pub fn server(&self) -> Option<&RaftServer> {
        match self {
            RaftNode::Server(s) => Some(s),
            RaftNode::Client(_) => None,
        }
    }
}

impl Participant for RaftNode {
    type Msg = RaftMsg;
    type Timer = RaftTimer;
    type Durable = RaftDurable;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        match self {
            RaftNode::Server(s) => {
                s.role = Role::Follower;
                ctx.note(format!(
                    "{} starts as a follower in term {} and waits to hear from a leader.",
                    s.me(),
                    s.term
                ));
                s.reset_election_timer(ctx);
            }
            RaftNode::Client(c) => {
                if c.config.writes > 0 {
                    ctx.set_timer(RaftTimer::ClientSend, c.config.start_ms * MS_US);
                }
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RaftMsg) {
        match self {
            RaftNode::Server(s) => {
                if let Some(term) = msg.term() {
                    if term > s.term {
                        s.adopt_term(ctx, term, from);
                    }
                }
                match msg {
                    RaftMsg::RequestVote {
                        term,
                        last_log_index,
                        last_log_term,
                    } => s.on_request_vote(ctx, from, term, last_log_index, last_log_term),
                    RaftMsg::Vote { term, granted } => s.on_vote(ctx, from, term, granted),
                    RaftMsg::AppendEntries {
                        term,
                        prev_log_index,
                        prev_log_term,
                        entries,
                        leader_commit,
                    } => s.on_append(
                        ctx,
                        from,
                        AppendArgs {
                            term,
                            prev_log_index,
                            prev_log_term,
                            entries,
                            leader_commit,
                        },
                    ),
                    RaftMsg::AppendReply { term, success, index } => {
                        s.on_append_reply(ctx, from, term, success, index)
                    }
                    RaftMsg::ClientRequest { id, command } => s.on_client_request(ctx, from, id, command),
                    RaftMsg::ClientReply { .. } => {}
                }
            }
            RaftNode::Client(c) => {
                let RaftMsg::ClientReply { id, answer } = msg else {
                    return;
                };
                if c.outstanding != Some(id) {
                    return; // an answer to an earlier attempt
                }
                match answer {
                    ClientAnswer::Committed { index } => {
                        c.outstanding = None;
                        c.committed.push((id, index));
                        ctx.cancel_timer(RaftTimer::ClientRetry);
                        ctx.note(format!(
                            "The client's write {id} is committed at {index}, confirmed by {}.",
                            c.name(from)
                        ));
                        if (c.committed.len() as u32) < c.config.writes {
                            ctx.set_timer(RaftTimer::ClientSend, c.config.interval_ms * MS_US);
                        }
                    }
                    ClientAnswer::NotLeader { leader } => {
                        match leader {
                            Some(l) => c.guess = l,
                            None => c.rotate(),
                        }
                        c.redirected = true;
                        ctx.set_timer(RaftTimer::ClientRetry, 10 * MS_US);
                    }
                    ClientAnswer::Locked { .. } => {}
                }
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: RaftTimer) {
        match self {
            RaftNode::Server(s) => match timer {
                RaftTimer::Election => {
                    s.election_deadline_us = None;
                    if !s.before_horizon(ctx) {
                        ctx.note(format!(
                            "{}'s timer ran out, but the demo is over: no more elections.",
                            s.me()
                        ));
                    } else if s.role != Role::Leader {
                        s.start_election(ctx, false);
                    }
                }
                RaftTimer::Heartbeat => {
                    if !s.before_horizon(ctx) {
                        ctx.note(format!(
                            "{} reaches the end of the demo and sets no more timers.",
                            s.me()
                        ));
                        return;
                    }
                    match s.role {
                        Role::Leader => s.broadcast_append(ctx),
                        Role::Candidate => s.ask_for_votes(ctx),
                        Role::Follower => return,
                    }
                    ctx.set_timer(RaftTimer::Heartbeat, s.config.heartbeat_ms.max(1) * MS_US);
                }
                RaftTimer::ClientSend | RaftTimer::ClientRetry => {}
            },
            RaftNode::Client(c) => match timer {
                RaftTimer::ClientSend => {
                    let id = c.next_id();
                    c.outstanding = Some(id);
                    c.redirected = false;
                    c.send(ctx);
                }
                RaftTimer::ClientRetry => {
                    if !c.redirected {
                        c.rotate();
                    }
                    c.redirected = false;
                    c.send(ctx);
                }
                RaftTimer::Election | RaftTimer::Heartbeat => {}
            },
        }
    }

    fn recover(id: NodeId, durable: &RaftDurable) -> Self {
        match durable {
            RaftDurable::Server(d) => {
                let mut s = RaftServer::from_durable(id, d);
                if d.config.bug == RaftBug::ForgetVoteOnRestart {
                    s.voted_for = None;
                }
                RaftNode::Server(Box::new(s))
            }
            RaftDurable::Client(d) => RaftNode::Client(RaftClient::new(d.config.clone())),
        }
    }

    fn summary(&self, local_now_us: u64) -> Vec<String> {
        match self {
            RaftNode::Server(s) => {
                let mut lines = vec![
                    format!("{} · term {}", s.role.label(), s.term),
                    format!(
                        "vote {} · log {} · commit {}",
                        s.voted_for.map(|v| s.name(v)).unwrap_or_else(|| "—".into()),
                        s.log.len(),
                        s.commit_index.0
                    ),
                ];
                if let Some(d) = s.election_deadline_us {
                    lines.push(format!(
                        "election timer {} ms left",
                        d.saturating_sub(local_now_us) / MS_US
                    ));
                }
                if !s.kv.is_empty() {
                    let kv: Vec<String> = s.kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    lines.push(kv.join(" "));
                }
                lines
            }
            RaftNode::Client(c) => vec![
                format!(
                    "CLIENT · {} of {} writes done",
                    c.committed.len(),
                    c.config.writes
                ),
                match c.outstanding {
                    Some(id) => format!("waiting on write {id} via {}", c.name(c.guess)),
                    None => "idle".into(),
                },
            ],
        }
    }

    fn durable_summary(durable: &RaftDurable) -> Vec<String> {
        match durable {
            RaftDurable::Server(d) => vec![
                format!("DOWN · term {}", d.term),
                format!(
                    "vote {} · log {} (persisted)",
                    d.voted_for
                        .map(|v| d.config.name(v))
                        .unwrap_or_else(|| "—".into()),
                    d.log.len()
                ),
            ],
            RaftDurable::Client(_) => vec!["CLIENT · DOWN".into()],
        }
    }

    fn inputs(&self) -> Vec<InputSpec> {
        let (code, label) = match self {
            RaftNode::Server(s) if s.role == Role::Leader => return Vec::new(),
            RaftNode::Server(_) => (RaftServer::TIMEOUT_INPUT, "Force election timeout"),
            RaftNode::Client(_) => (RaftClient::WRITE_INPUT, "Send a client request"),
        };
        vec![InputSpec {
            code: code.into(),
            label: label.into(),
        }]
    }

    fn on_input(&mut self, ctx: &mut Ctx<'_, Self>, input: &str) -> Result<(), String> {
        match self {
            RaftNode::Server(s) if input == RaftServer::TIMEOUT_INPUT => s.force_timeout(ctx),
            RaftNode::Server(_) => Err(format!(
                "a Raft server takes only `{}`",
                RaftServer::TIMEOUT_INPUT
            )),
            RaftNode::Client(c) if input == RaftClient::WRITE_INPUT => c.extra_write(ctx),
            RaftNode::Client(_) => Err(format!("the client takes only `{}`", RaftClient::WRITE_INPUT)),
        }
    }

    fn gauge(&self, local_now_us: u64) -> Option<Gauge> {
        let s = self.server()?;
        let deadline_us = s.election_deadline_us.filter(|_| s.role != Role::Leader)?;
        Some(Gauge {
            label: "election timeout".into(),
            remaining_us: deadline_us.saturating_sub(local_now_us),
            total_us: s.election_timeout_us.max(1),
        })
    }

    fn log_cells(&self) -> Vec<LogCell> {
        let Some(s) = self.server() else {
            return Vec::new();
        };
        cells(&s.log, s.commit_index)
    }

    fn durable_log_cells(durable: &RaftDurable) -> Vec<LogCell> {
        match durable {
            // The commit index is volatile: a server that is down knows nothing committed.
            RaftDurable::Server(d) => cells(&d.log, LogIndex(0)),
            RaftDurable::Client(_) => Vec::new(),
        }
    }
}

fn cells(log: &[Entry], commit: LogIndex) -> Vec<LogCell> {
    log.iter()
        .enumerate()
        .map(|(k, e)| LogCell {
            index: k as u64 + 1,
            term: e.term.0,
            committed: (k as u64) < commit.0,
            label: e.command.to_string(),
        })
        .collect()
}
