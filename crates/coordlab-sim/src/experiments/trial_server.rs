//! The participant and world of one election-downtime trial.
//!
//! [`TrialServer`] hosts the real [`RaftServer`] with two additions that only the experiment
//! needs: the old leader starts *as* leader and sends its one heartbeat round, and every
//! server notes the last leader whose AppendEntries it accepted. All Raft behaviour —
//! timers, votes, terms, logs — is the unchanged server's, run under [`Ctx::within`].
//!
//! [`DowntimeWorld`] watches every step and records the first moment a leader of some term is
//! acknowledged by every other surviving server: the end of the downtime.

use crate::json;
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Card, Ctx, Participant, ViewCtx};
use crate::kernel::view::Summary;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertyKind, PropertySpec};
use crate::protocols::raft::{RaftMsg, RaftServer, RaftTimer, Role, ServerConfig, ServerDurable, Term};
use crate::trace::TableView;
use serde_json::Value;
use std::collections::BTreeMap;

/// One server of a trial.
#[derive(Clone, Debug)]
pub struct TrialServer {
    pub server: RaftServer,
    /// The term and sender of the last AppendEntries this server accepted (one whose term was
    /// not older than its own): who it currently takes to be leader.
    pub accepted: Option<(Term, NodeId)>,
    /// The old leader: on start it takes the leader role and broadcasts one heartbeat.
    pub leads_at_start: bool,
}

impl TrialServer {
    pub fn new(server: RaftServer, leads_at_start: bool) -> TrialServer {
        TrialServer {
            server,
            accepted: None,
            leads_at_start,
        }
    }

    /// The old leader's start: it already leads its term (it won it before the trial began)
    /// and sends every follower the heartbeat a freshly elected leader sends, which assumes
    /// the follower's log matches its own. Followers whose logs are shorter refuse the
    /// entries but still accept the leader, which is all that matters here: every follower
    /// resets its election timer on it. No heartbeat timer is set, because the crash always
    /// comes before the next round would be due.
    fn announce(&mut self, ctx: &mut Ctx<'_, TrialServer>) {
        let s = &mut self.server;
        s.role = Role::Leader;
        s.leader_hint = Some(s.id);
        let beat = RaftMsg::AppendEntries {
            term: s.term,
            prev_log_index: s.last_index(),
            prev_log_term: s.last_term(),
            entries: Vec::new(),
            leader_commit: s.commit_index,
        };
        for peer in s.config.cluster.iter().copied().filter(|p| *p != s.id) {
            ctx.send(peer, beat.clone());
        }
        ctx.note(format!(
            "{} leads term {} and sends its heartbeat to every follower.",
            ctx.me(),
            s.term
        ));
    }

    /// Runs one handler of the hosted server; its timers and persisted state are this
    /// participant's own types, so they pass through unchanged.
    fn raft<R>(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        run: impl FnOnce(&mut RaftServer, &mut Ctx<'_, RaftServer>) -> R,
    ) -> R {
        self.server.run_hosted(ctx, |t| t, run)
    }
}

impl Participant for TrialServer {
    type Msg = RaftMsg;
    type Timer = RaftTimer;
    type Durable = ServerDurable;
    type Config = ServerConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.leads_at_start {
            self.announce(ctx);
        } else {
            self.raft(ctx, |s, c| s.on_start(c));
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RaftMsg) {
        if self.leads_at_start {
            // The old leader only broadcasts and then crashes: acting on the answers would
            // have it ship the missing entry to S4 and S5 before the crash, and the logs
            // would no longer differ.
            return;
        }
        // Raft accepts a leader's AppendEntries unless its term is older than the receiver's
        // (§5.1); a log mismatch refuses the entries, not the leader.
        let accepted = match &msg {
            RaftMsg::AppendEntries { term, .. } if *term >= self.server.term => Some((*term, from)),
            _ => None,
        };
        self.raft(ctx, |s, c| s.on_message(c, from, msg));
        if accepted.is_some() {
            self.accepted = accepted;
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: RaftTimer) {
        if self.leads_at_start {
            return; // it set none; see on_message
        }
        self.raft(ctx, |s, c| s.on_timer(c, timer));
    }

    fn recover(config: &ServerConfig, id: NodeId, durable: &ServerDurable) -> Self {
        TrialServer::new(RaftServer::recover(config, id, durable), false)
    }
}

impl Card for TrialServer {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        self.server.summary(view)
    }

    fn durable_summary(config: &ServerConfig, durable: &ServerDurable, view: &ViewCtx<'_>) -> Summary {
        RaftServer::durable_summary(config, durable, view)
    }
}

/// The moment the downtime ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovery {
    pub at_us: u64,
    pub leader: NodeId,
    pub term: Term,
}

/// Watches one trial for the end of its downtime.
pub struct DowntimeWorld {
    /// The old leader, crashed and never restarted.
    pub crashed: NodeId,
    /// Every leader ever seen, by term (the first one seen).
    pub leaders: VecMap<Term, NodeId>,
    two_leaders: bool,
    pub recovered: Option<Recovery>,
    /// The first moment after the crash that a survivor stood for election: the crash
    /// detected.
    pub first_candidacy_us: Option<u64>,
    /// The first moment after the crash that a survivor became leader: the election won.
    pub elected_us: Option<u64>,
}

impl DowntimeWorld {
    pub fn new(crashed: NodeId) -> DowntimeWorld {
        DowntimeWorld {
            crashed,
            leaders: VecMap::new(),
            two_leaders: false,
            recovered: None,
            first_candidacy_us: None,
            elected_us: None,
        }
    }

    /// A live leader that every other live server has accepted in its term, if there is one.
    fn acknowledged_leader(&self, nodes: &Nodes<'_>) -> Option<(NodeId, Term)> {
        let live = trial_servers(nodes);
        live.iter().find_map(|(id, n)| {
            let s = &n.server;
            if s.role != Role::Leader {
                return None;
            }
            let followed = live
                .iter()
                .filter(|(other, _)| other != id)
                .all(|(_, o)| o.accepted == Some((s.term, *id)));
            followed.then_some((*id, s.term))
        })
    }
}

/// The one property a trial checks: Raft's Election Safety, over the whole run.
pub const ELECTION_SAFETY: &str = "election-safety";

/// Every live server of a trial, with its id.
fn trial_servers<'a>(nodes: &Nodes<'a>) -> Vec<(NodeId, &'a TrialServer)> {
    (0..nodes.len() as u32)
        .filter_map(|i| nodes.live::<TrialServer>(NodeId(i)).map(|n| (NodeId(i), n)))
        .collect()
}

impl World for DowntimeWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![PropertySpec {
            name: ELECTION_SAFETY,
            kind: PropertyKind::Always,
            description: "At most one leader per term, over the whole trial (§5.2).",
        }]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        for (id, n) in trial_servers(nodes) {
            let s = &n.server;
            if s.role == Role::Leader && *self.leaders.get_or_insert_with(s.term, || id) != id {
                self.two_leaders = true;
            }
        }
        // The old leader leads from the start, so "a leader everyone follows" only counts
        // once it is down (it is never restarted, so that is for good).
        if !nodes.is_live(self.crashed) {
            for (id, n) in trial_servers(nodes) {
                if id == self.crashed {
                    continue;
                }
                match n.server.role {
                    Role::Candidate => {
                        self.first_candidacy_us.get_or_insert(nodes.now_us);
                    }
                    Role::Leader => {
                        self.elected_us.get_or_insert(nodes.now_us);
                    }
                    Role::Follower => {}
                }
            }
        }
        if self.recovered.is_none() && !nodes.is_live(self.crashed) {
            if let Some((leader, term)) = self.acknowledged_leader(nodes) {
                self.recovered = Some(Recovery {
                    at_us: nodes.now_us,
                    leader,
                    term,
                });
            }
        }
        out.push(!self.two_leaders);
    }

    fn tables(&self, _nodes: &Nodes<'_>) -> Vec<TableView> {
        Vec::new()
    }

    fn outcome(&self, _nodes: &Nodes<'_>) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        if let Some(r) = self.recovered {
            out.insert("recovered_us".into(), json!(r.at_us));
            out.insert("leader".into(), json!(r.leader.0));
            out.insert("term".into(), json!(r.term.0));
        }
        if let Some(at) = self.first_candidacy_us {
            out.insert("first_candidacy_us".into(), json!(at));
        }
        if let Some(at) = self.elected_us {
            out.insert("elected_us".into(), json!(at));
        }
        // The first leader elected after the crash; if everyone came to follow a later one,
        // that first leader was deposed before its heartbeat reached them all.
        if let Some((term, _)) = self.leaders.iter().find(|(_, id)| **id != self.crashed) {
            out.insert("first_new_term".into(), json!(term.0));
        }
        out
    }
}
