//! The participant and world of one election-downtime trial.
//!
//! [`TrialServer`] is the real [`RaftNode`] server with two additions that only the
//! experiment needs: the old leader starts *as* leader and sends its one heartbeat round, and
//! every server notes the last leader whose AppendEntries it accepted. All Raft behaviour —
//! timers, votes, terms, logs — is the unchanged server's.
//!
//! [`DowntimeWorld`] watches every step and records the first moment a leader of some term is
//! acknowledged by every other surviving server: the end of the downtime.

use crate::kernel::engine::{Nodes, World};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Effect, Participant};
use crate::properties::{PropertyKind, PropertySpec};
use crate::protocols::raft::{RaftDurable, RaftMsg, RaftNode, RaftServer, RaftTimer, Role, Term};
use crate::trace::TableView;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// One server of a trial.
#[derive(Clone, Debug)]
pub struct TrialServer {
    pub raft: RaftNode,
    /// The term and sender of the last AppendEntries this server accepted (one whose term was
    /// not older than its own): who it currently takes to be leader.
    pub accepted: Option<(Term, NodeId)>,
    /// The old leader: on start it takes the leader role and broadcasts one heartbeat.
    pub leads_at_start: bool,
}

impl TrialServer {
    pub fn new(server: RaftServer, leads_at_start: bool) -> TrialServer {
        TrialServer {
            raft: RaftNode::Server(Box::new(server)),
            accepted: None,
            leads_at_start,
        }
    }

    pub fn server(&self) -> Option<&RaftServer> {
        self.raft.server()
    }

    /// The old leader's start: it already leads its term (it won it before the trial began)
    /// and sends every follower the heartbeat a freshly elected leader sends, which assumes
    /// the follower's log matches its own. Followers whose logs are shorter refuse the
    /// entries but still accept the leader, which is all that matters here: every follower
    /// resets its election timer on it. No heartbeat timer is set, because the crash always
    /// comes before the next round would be due.
    fn announce(&mut self, ctx: &mut Ctx<'_, TrialServer>) {
        let RaftNode::Server(s) = &mut self.raft else {
            return;
        };
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
            s.config
                .names
                .get(s.id.index())
                .map_or("the leader", String::as_str),
            s.term
        ));
    }
}

/// Runs the inner server's handler under a context of its own type, then re-emits its
/// effects (the two participant types share messages, timers and persisted state).
fn relay(
    ctx: &mut Ctx<'_, TrialServer>,
    node: &mut RaftNode,
    run: impl FnOnce(&mut RaftNode, &mut Ctx<'_, RaftNode>),
) {
    let mut inner: Vec<Effect<RaftNode>> = Vec::new();
    run(
        node,
        &mut Ctx::new(ctx.node, ctx.local_now_us, ctx.rng, &mut inner),
    );
    for effect in inner {
        match effect {
            Effect::Send { to, msg } => ctx.send(to, msg),
            Effect::SetTimer {
                timer,
                after_local_us,
            } => ctx.set_timer(timer, after_local_us),
            Effect::CancelTimer { timer } => ctx.cancel_timer(timer),
            Effect::Persist(d) => ctx.persist(d),
            Effect::Note(text) => ctx.note(text),
        }
    }
}

impl Participant for TrialServer {
    type Msg = RaftMsg;
    type Timer = RaftTimer;
    type Durable = RaftDurable;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.leads_at_start {
            self.announce(ctx);
        } else {
            relay(ctx, &mut self.raft, |n, c| n.on_start(c));
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RaftMsg) {
        if self.leads_at_start {
            // The old leader only broadcasts and then crashes: acting on the answers would
            // have it ship the missing entry to S4 and S5 before the crash, and the logs
            // would no longer differ.
            return;
        }
        let own_term = self.server().map_or(Term(0), |s| s.term);
        // Raft accepts a leader's AppendEntries unless its term is older than the receiver's
        // (§5.1); a log mismatch refuses the entries, not the leader.
        let accepted = match &msg {
            RaftMsg::AppendEntries { term, .. } if *term >= own_term => Some((*term, from)),
            _ => None,
        };
        relay(ctx, &mut self.raft, |n, c| n.on_message(c, from, msg));
        if accepted.is_some() {
            self.accepted = accepted;
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: RaftTimer) {
        if self.leads_at_start {
            return; // it set none; see on_message
        }
        relay(ctx, &mut self.raft, |n, c| n.on_timer(c, timer));
    }

    fn recover(id: NodeId, durable: &RaftDurable) -> Self {
        TrialServer {
            raft: RaftNode::recover(id, durable),
            accepted: None,
            leads_at_start: false,
        }
    }

    fn summary(&self, local_now_us: u64) -> Vec<String> {
        self.raft.summary(local_now_us)
    }

    fn durable_summary(durable: &RaftDurable) -> Vec<String> {
        RaftNode::durable_summary(durable)
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
    pub leaders: BTreeMap<Term, NodeId>,
    two_leaders: bool,
    pub recovered: Option<Recovery>,
}

impl DowntimeWorld {
    pub fn new(crashed: NodeId) -> DowntimeWorld {
        DowntimeWorld {
            crashed,
            leaders: BTreeMap::new(),
            two_leaders: false,
            recovered: None,
        }
    }

    /// A live leader that every other live server has accepted in its term, if there is one.
    fn acknowledged_leader(&self, nodes: &Nodes<'_, TrialServer>) -> Option<(NodeId, Term)> {
        let live: Vec<(NodeId, &TrialServer)> = nodes
            .live
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.as_ref().map(|n| (NodeId(i as u32), n)))
            .collect();
        live.iter().find_map(|(id, n)| {
            let s = n.server().filter(|s| s.role == Role::Leader)?;
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

impl World for DowntimeWorld {
    type Node = TrialServer;

    fn properties(&self) -> Vec<PropertySpec> {
        vec![PropertySpec {
            name: ELECTION_SAFETY,
            kind: PropertyKind::Always,
            description: "At most one leader per term, over the whole trial (§5.2).",
        }]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_, TrialServer>, out: &mut Vec<bool>) {
        for (i, n) in nodes.live.iter().enumerate() {
            let Some(s) = n.as_ref().and_then(|n| n.server()) else {
                continue;
            };
            if s.role == Role::Leader {
                let id = NodeId(i as u32);
                if *self.leaders.entry(s.term).or_insert(id) != id {
                    self.two_leaders = true;
                }
            }
        }
        // The old leader leads from the start, so "a leader everyone follows" only counts
        // once it is down (it is never restarted, so that is for good).
        if self.recovered.is_none() && nodes.live[self.crashed.index()].is_none() {
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

    fn tables(&self, _nodes: &Nodes<'_, TrialServer>) -> Vec<TableView> {
        Vec::new()
    }

    fn outcome(&self, _nodes: &Nodes<'_, TrialServer>) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        if let Some(r) = self.recovered {
            out.insert("recovered_us".into(), json!(r.at_us));
            out.insert("leader".into(), json!(r.leader.0));
            out.insert("term".into(), json!(r.term.0));
        }
        out
    }
}
