//! The engine: pops events in (time, seq) order, hands each to one participant, applies the
//! effects it emits, applies faults, and records one trace entry per processed event.

use super::clock::LocalClock;
use super::faults::{Action, Fault};
use super::ids::{MsgId, NodeId};
use super::network::{InFlight, LinkConfig, Network, SendOutcome};
use super::participant::{Ctx, Effect, Label, Participant};
use super::queue::EventQueue;
use super::rng::{stream, SimRng, Stream};
use crate::properties::{PropertySpec, PropertyTracker};
use crate::trace::{
    EventKind, LinkView, MessageRecord, MsgView, NodeInfo, NodeStatus, NodeView, RefusedAction, Snapshot,
    StopReason, TableView, Trace, TraceEntry,
};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Most participants one run may have.
pub const MAX_NODES: u32 = 16;

/// How long a peer takes to notice a crashed node's connection dropped (a TCP reset is
/// about one network hop).
const PEER_DOWN_NOTICE_US: u64 = 1_000;

/// Bounds on every run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_events: u64,
    pub max_time_us: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events: 20_000,
            max_time_us: 3_600 * 1_000_000,
        }
    }
}

/// How much of the trace to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recording {
    /// Every entry with its snapshot: what the UI needs.
    Full,
    /// Every entry without snapshots: the CLI's text, JSON and diagrams.
    Lines,
    /// Counts, verdicts and outcome only: sweeps and benchmarks.
    Summary,
}

/// A scenario's view onto its participants: properties, inspector tables and outcome.
pub trait World {
    type Node: Participant;
    fn properties(&self) -> Vec<PropertySpec>;
    /// Evaluates every declared property after a step; `out` is cleared by the caller.
    fn evaluate(&mut self, nodes: &Nodes<'_, Self::Node>, out: &mut Vec<bool>);
    fn tables(&self, nodes: &Nodes<'_, Self::Node>) -> Vec<TableView>;
    fn outcome(&self, nodes: &Nodes<'_, Self::Node>) -> BTreeMap<String, serde_json::Value>;
    /// A warning that holds at this step, e.g. "two workers believe they hold the lease";
    /// the timeline draws a band over the steps where it holds.
    fn highlight(&self, _nodes: &Nodes<'_, Self::Node>) -> Option<String> {
        None
    }
}

/// The participants as a world may read them: live state (absent while crashed) and what
/// each has persisted.
pub struct Nodes<'a, N: Participant> {
    pub live: &'a [Option<N>],
    pub durable: &'a [N::Durable],
    /// Each node's local clock reading now.
    pub local_now_us: &'a [u64],
    /// True simulated time now.
    pub now_us: u64,
}

enum Event<M, T> {
    Start(NodeId),
    Deliver(MsgId),
    Timer {
        node: NodeId,
        timer: T,
        generation: u64,
    },
    Fault(Fault),
    Resume {
        node: NodeId,
        generation: u64,
    },
    PeerDown {
        node: NodeId,
        peer: NodeId,
    },
    /// An input that waited out a pause, now handed over.
    Waited {
        node: NodeId,
        input: Waiting<M, T>,
    },
}

enum Waiting<M, T> {
    Message(InFlight<M>),
    Timer(T),
}

struct Draft {
    kind: EventKind,
    text: String,
    nodes: Vec<NodeId>,
    message: Option<MessageRecord>,
    fault: Option<Fault>,
    notes: Vec<String>,
    lost: Vec<MessageRecord>,
    /// Why a user input had no effect (the node refused it or was not up to take it).
    refused: Option<String>,
}

impl Draft {
    fn new(kind: EventKind, text: String, nodes: Vec<NodeId>) -> Draft {
        Draft {
            kind,
            text,
            nodes,
            message: None,
            fault: None,
            notes: Vec::new(),
            lost: Vec::new(),
            refused: None,
        }
    }
}

/// Everything needed to start a run, built by a scenario.
pub struct Setup<W: World> {
    pub world: W,
    pub nodes: Vec<(NodeInfo, W::Node, <W::Node as Participant>::Durable)>,
    pub link: LinkConfig,
    /// Faults the scenario itself scripts, at true times.
    pub scripted: Vec<(u64, Fault)>,
}

pub struct Engine<W: World> {
    world: W,
    infos: Vec<NodeInfo>,
    live: Vec<Option<W::Node>>,
    durable: Vec<<W::Node as Participant>::Durable>,
    status: Vec<NodeStatus>,
    clocks: Vec<LocalClock>,
    rngs: Vec<SimRng>,
    net: Network<<W::Node as Participant>::Msg>,
    net_rng: SimRng,
    queue: EventQueue<Event<Msg<W>, Timer<W>>>,
    timers: Vec<Vec<(<W::Node as Participant>::Timer, u64)>>,
    waiting: Vec<Vec<Waiting<Msg<W>, Timer<W>>>>,
    pause_generation: Vec<u64>,
    next_generation: u64,
    now_us: u64,
    actions: Vec<Action>,
    next_action: usize,
    tracker: PropertyTracker,
    recording: Recording,
    limits: Limits,
    entries: Vec<TraceEntry>,
    event_count: u64,
    effects: Vec<Effect<W::Node>>,
    verdicts: Vec<bool>,
    clock_readings: Vec<u64>,
    refused_actions: Vec<RefusedAction>,
}

type Msg<W> = <<W as World>::Node as Participant>::Msg;
type Timer<W> = <<W as World>::Node as Participant>::Timer;

impl<W: World> Engine<W> {
    /// Validates the action script against the participants and prepares a run.
    pub fn new(
        setup: Setup<W>,
        seed: u64,
        actions: &[Action],
        limits: Limits,
        recording: Recording,
    ) -> Result<Self, String> {
        let n = setup.nodes.len() as u32;
        assert!(
            n > 0 && n <= MAX_NODES,
            "a scenario must have 1..={MAX_NODES} participants"
        );
        let mut infos = Vec::new();
        let mut live = Vec::new();
        let mut durable = Vec::new();
        for (info, node, d) in setup.nodes {
            infos.push(info);
            live.push(Some(node));
            durable.push(d);
        }
        for (i, a) in actions.iter().enumerate() {
            validate_action(&infos, a).map_err(|e| format!("action {} (`{}`): {e}", i + 1, a.to_code()))?;
        }
        let mut actions = actions.to_vec();
        actions.sort_by_key(|a| a.at_step); // stable: same-step actions keep script order
        let tracker = PropertyTracker::new(setup.world.properties());
        let mut engine = Engine {
            world: setup.world,
            infos,
            live,
            durable,
            status: vec![NodeStatus::Up; n as usize],
            clocks: vec![LocalClock::default(); n as usize],
            rngs: (0..n).map(|i| stream(seed, Stream::Node(NodeId(i)))).collect(),
            net: Network::new(n, setup.link),
            net_rng: stream(seed, Stream::Network),
            queue: EventQueue::default(),
            timers: (0..n).map(|_| Vec::new()).collect(),
            waiting: (0..n).map(|_| Vec::new()).collect(),
            pause_generation: vec![0; n as usize],
            next_generation: 1,
            now_us: 0,
            actions,
            next_action: 0,
            tracker,
            recording,
            limits,
            entries: Vec::new(),
            event_count: 0,
            effects: Vec::new(),
            verdicts: Vec::new(),
            clock_readings: vec![0; n as usize],
            refused_actions: Vec::new(),
        };
        for i in 0..n {
            engine.queue.push(0, Event::Start(NodeId(i)));
        }
        for (at_us, fault) in setup.scripted {
            engine.queue.push(at_us, Event::Fault(fault));
        }
        Ok(engine)
    }

    /// Mutable access to one link's configuration before the run starts.
    pub fn configure_link(&mut self, from: NodeId, to: NodeId, config: LinkConfig) {
        self.net.configure(from, to, config);
    }

    /// Runs to quiescence or a limit and returns the trace.
    pub fn run(mut self, scenario: &str, seed: u64, params: BTreeMap<String, String>) -> Trace {
        let stop = loop {
            while let Some(action) = self.actions.get(self.next_action) {
                if u64::from(action.at_step) > self.event_count {
                    break;
                }
                if self.event_count >= self.limits.max_events {
                    break;
                }
                let fault = action.fault.clone();
                self.next_action += 1;
                let mut draft = self.apply_fault(fault);
                if let Some(reason) = draft.refused.take() {
                    let action = self.actions[self.next_action - 1].clone();
                    self.refused_actions.push(RefusedAction { action, reason });
                }
                self.record(draft);
            }
            if self.event_count >= self.limits.max_events {
                break StopReason::MaxEvents;
            }
            let Some(time_us) = self.queue.peek_time_us() else {
                break StopReason::Quiescent;
            };
            if time_us > self.limits.max_time_us {
                break StopReason::MaxTime;
            }
            let (time_us, event) = self.queue.pop().expect("peeked");
            self.now_us = time_us;
            if let Some(draft) = self.process(event) {
                self.record(draft);
            }
        };
        self.refresh_clock_readings();
        let nodes = Nodes {
            live: &self.live,
            durable: &self.durable,
            local_now_us: &self.clock_readings,
            now_us: self.now_us,
        };
        let outcome = self.world.outcome(&nodes);
        let last_seq = self.event_count.checked_sub(1).map(|s| s as u32);
        let unapplied_actions = self.actions[self.next_action..].to_vec();
        Trace {
            unapplied_actions,
            refused_actions: self.refused_actions,
            scenario: scenario.to_string(),
            seed,
            params,
            actions: self.actions,
            nodes: self.infos,
            entries: self.entries,
            properties: self.tracker.finish(last_seq),
            outcome,
            stop,
            event_count: self.event_count,
        }
    }

    /// Builds a text only when the trace keeps it: sweeps and benchmarks skip the formatting.
    fn text(&self, make: impl FnOnce() -> String) -> String {
        if self.recording == Recording::Summary {
            String::new()
        } else {
            make()
        }
    }

    fn name(&self, id: NodeId) -> String {
        self.infos[id.index()].name.clone()
    }

    fn process(&mut self, event: Event<Msg<W>, Timer<W>>) -> Option<Draft> {
        match event {
            Event::Start(node) => {
                self.live[node.index()].as_ref()?;
                let text = self.text(|| format!("{} starts", self.name(node)));
                let mut draft = Draft::new(EventKind::Start, text, vec![node]);
                self.invoke(node, &mut draft, |p, ctx| p.on_start(ctx));
                Some(draft)
            }
            Event::Deliver(id) => {
                if !self.net.due(id, self.now_us) {
                    return None; // dropped, or held after it was scheduled
                }
                let m = self.net.take(id)?;
                let label = self.text(|| m.msg.label());
                let record = MessageRecord {
                    id: m.id,
                    from: m.from,
                    to: m.to,
                    label,
                    sent_us: m.sent_us,
                };
                let to = m.to;
                if self.net.is_cut(m.from, m.to) {
                    let mut d = Draft::new(
                        EventKind::Undeliverable,
                        format!(
                            "{} -> {} lost in the partition: {}",
                            self.name(m.from),
                            self.name(to),
                            record.label
                        ),
                        vec![m.from, to],
                    );
                    d.message = Some(record);
                    return Some(d);
                }
                match self.status[to.index()] {
                    NodeStatus::Crashed => {
                        let mut d = Draft::new(
                            EventKind::Undeliverable,
                            format!(
                                "{} -> {} arrives at a crashed node: {}",
                                self.name(m.from),
                                self.name(to),
                                record.label
                            ),
                            vec![m.from, to],
                        );
                        d.message = Some(record);
                        Some(d)
                    }
                    NodeStatus::Paused { .. } => {
                        self.waiting[to.index()].push(Waiting::Message(m));
                        None
                    }
                    NodeStatus::Up => Some(self.deliver(m, record)),
                }
            }
            Event::Timer {
                node,
                timer,
                generation,
            } => {
                let pending = &mut self.timers[node.index()];
                let pos = pending
                    .iter()
                    .position(|(t, g)| *t == timer && *g == generation)?;
                pending.remove(pos);
                if let NodeStatus::Paused { .. } = self.status[node.index()] {
                    self.waiting[node.index()].push(Waiting::Timer(timer));
                    return None;
                }
                Some(self.fire_timer(node, timer))
            }
            Event::Fault(fault) => Some(self.apply_fault(fault)),
            Event::Resume { node, generation } => {
                if self.pause_generation[node.index()] != generation {
                    return None;
                }
                self.status[node.index()] = NodeStatus::Up;
                let held = std::mem::take(&mut self.waiting[node.index()]);
                let count = held.len();
                for input in held {
                    self.queue.push(self.now_us, Event::Waited { node, input });
                }
                let mut d = Draft::new(
                    EventKind::Resume,
                    format!("{} resumes after its pause", self.name(node)),
                    vec![node],
                );
                d.notes.push(if count == 0 {
                    format!("{} wakes up and carries on exactly where it stopped; it has no idea time passed.", self.name(node))
                } else {
                    format!(
                        "{} wakes up with {count} input(s) that piled up while it was frozen; it still trusts everything it believed before the pause.",
                        self.name(node)
                    )
                });
                Some(d)
            }
            Event::PeerDown { node, peer } => {
                if self.status[node.index()] != NodeStatus::Up {
                    return None;
                }
                let mut d = Draft::new(
                    EventKind::PeerDown,
                    format!(
                        "{} notices its connection to {} dropped",
                        self.name(node),
                        self.name(peer)
                    ),
                    vec![node, peer],
                );
                self.invoke(node, &mut d, |p, ctx| p.on_peer_down(ctx, peer));
                Some(d)
            }
            Event::Waited { node, input } => {
                if self.status[node.index()] != NodeStatus::Up {
                    return None;
                }
                match input {
                    Waiting::Message(m) => {
                        let label = self.text(|| m.msg.label());
                        let record = MessageRecord {
                            id: m.id,
                            from: m.from,
                            to: m.to,
                            label,
                            sent_us: m.sent_us,
                        };
                        Some(self.deliver(m, record))
                    }
                    Waiting::Timer(t) => Some(self.fire_timer(node, t)),
                }
            }
        }
    }

    fn deliver(&mut self, m: InFlight<Msg<W>>, record: MessageRecord) -> Draft {
        let text = self.text(|| format!("{} -> {}: {}", self.name(m.from), self.name(m.to), record.label));
        let mut d = Draft::new(EventKind::Deliver, text, vec![m.to, m.from]);
        d.message = Some(record);
        let from = m.from;
        self.invoke(m.to, &mut d, |p, ctx| p.on_message(ctx, from, m.msg));
        d
    }

    fn fire_timer(&mut self, node: NodeId, timer: Timer<W>) -> Draft {
        let text = self.text(|| format!("{}: {}", self.name(node), timer.label()));
        let mut d = Draft::new(EventKind::Timer, text, vec![node]);
        self.invoke(node, &mut d, |p, ctx| p.on_timer(ctx, timer));
        d
    }

    fn invoke(
        &mut self,
        node: NodeId,
        draft: &mut Draft,
        handler: impl FnOnce(&mut W::Node, &mut Ctx<'_, W::Node>),
    ) {
        let i = node.index();
        let local_now_us = self.clocks[i].read_us(self.now_us);
        let mut effects = std::mem::take(&mut self.effects);
        if let Some(state) = self.live[i].as_mut() {
            let mut ctx = Ctx::new(node, local_now_us, &mut self.rngs[i], &mut effects);
            handler(state, &mut ctx);
        }
        for effect in effects.drain(..) {
            self.apply_effect(node, effect, draft);
        }
        self.effects = effects;
    }

    fn apply_effect(&mut self, node: NodeId, effect: Effect<W::Node>, draft: &mut Draft) {
        let i = node.index();
        match effect {
            Effect::Send { to, msg } => {
                assert!(
                    to.0 < self.infos.len() as u32,
                    "participant sent to unknown node {to}"
                );
                let label = self.text(|| msg.label());
                let (id, outcome) = self.net.send(self.now_us, node, to, msg, &mut self.net_rng);
                for (copy, deliver_us) in self.net.take_copies() {
                    if let Some(at) = deliver_us {
                        self.queue.push(at, Event::Deliver(copy));
                    }
                }
                match outcome {
                    SendOutcome::Scheduled { deliver_us } => self.queue.push(deliver_us, Event::Deliver(id)),
                    SendOutcome::Held => {}
                    SendOutcome::LostToCut | SendOutcome::LostToChance => {
                        draft.lost.push(MessageRecord {
                            id,
                            from: node,
                            to,
                            label,
                            sent_us: self.now_us,
                        });
                    }
                }
            }
            Effect::SetTimer {
                timer,
                after_local_us,
            } => {
                let generation = self.next_generation;
                self.next_generation += 1;
                let pending = &mut self.timers[i];
                pending.retain(|(t, _)| *t != timer);
                pending.push((timer.clone(), generation));
                let at = self.now_us + self.clocks[i].true_duration_us(after_local_us);
                self.queue.push(
                    at,
                    Event::Timer {
                        node,
                        timer,
                        generation,
                    },
                );
            }
            Effect::CancelTimer { timer } => self.timers[i].retain(|(t, _)| *t != timer),
            Effect::Persist(d) => self.durable[i] = d,
            Effect::Note(text) => draft.notes.push(text),
        }
    }

    /// The one path every fault takes, scripted or injected.
    fn apply_fault(&mut self, fault: Fault) -> Draft {
        let names = |id: NodeId| {
            self.infos
                .get(id.index())
                .map(|n| n.name.clone())
                .unwrap_or_default()
        };
        let mut d = Draft::new(EventKind::Fault, fault.describe(&names), fault.nodes());
        d.fault = Some(fault.clone());
        match fault {
            Fault::Crash { node } => {
                let i = node.index();
                if self.status[i] == NodeStatus::Crashed {
                    d.notes.push(format!("{} is already down.", self.name(node)));
                    return d;
                }
                self.live[i] = None;
                self.status[i] = NodeStatus::Crashed;
                self.timers[i].clear();
                self.waiting[i].clear();
                self.pause_generation[i] = self.bump_generation();
                d.notes.push(format!(
                    "{} is gone: everything it held in memory is lost; only what it persisted survives.",
                    self.name(node)
                ));
                for j in 0..self.infos.len() {
                    let watcher = NodeId(j as u32);
                    let watches = self.live[j].as_ref().is_some_and(|p| p.watches(node));
                    if watcher != node && watches {
                        let at = self.now_us + PEER_DOWN_NOTICE_US;
                        self.queue.push(
                            at,
                            Event::PeerDown {
                                node: watcher,
                                peer: node,
                            },
                        );
                    }
                }
            }
            Fault::Restart { node } => {
                let i = node.index();
                if self.status[i] != NodeStatus::Crashed {
                    d.notes
                        .push(format!("{} is not down; nothing to restart.", self.name(node)));
                    return d;
                }
                self.live[i] = Some(W::Node::recover(node, &self.durable[i]));
                self.status[i] = NodeStatus::Up;
                d.notes.push(format!(
                    "{} comes back from its persisted state.",
                    self.name(node)
                ));
                self.invoke(node, &mut d, |p, ctx| p.on_start(ctx));
            }
            Fault::Pause { node, duration_ms } => {
                let i = node.index();
                if self.status[i] == NodeStatus::Crashed {
                    d.notes
                        .push(format!("{} is down; there is nothing to pause.", self.name(node)));
                    return d;
                }
                let mut until_us = self.now_us + duration_ms * 1_000;
                if let NodeStatus::Paused { until_us: already } = self.status[i] {
                    until_us = until_us.max(already);
                }
                let generation = self.bump_generation();
                self.pause_generation[i] = generation;
                self.status[i] = NodeStatus::Paused { until_us };
                self.queue.push(until_us, Event::Resume { node, generation });
                d.notes.push(format!(
                    "{} is frozen, not crashed: messages and timers for it wait, and nobody outside can tell the difference.",
                    self.name(node)
                ));
            }
            Fault::Partition { side } => {
                for a in 0..self.infos.len() as u32 {
                    for b in 0..self.infos.len() as u32 {
                        let (a, b) = (NodeId(a), NodeId(b));
                        if side.contains(&a) && !side.contains(&b) {
                            self.net.set_cut(a, b, true);
                            self.net.set_cut(b, a, true);
                        }
                    }
                }
            }
            Fault::CutLink { from, to } => self.net.set_cut(from, to, true),
            Fault::Heal => self.net.heal(),
            Fault::HoldLink { from, to } => self.net.hold(from, to),
            Fault::ReleaseLink { from, to } => {
                for (id, at) in self.net.release(self.now_us, from, to, &mut self.net_rng) {
                    self.queue.push(at, Event::Deliver(id));
                }
            }
            Fault::DropMessage { msg } => {
                if !self.net.drop_message(msg) {
                    d.notes.push(format!("Message {msg} was no longer in flight."));
                }
            }
            Fault::HoldMessage { msg } => {
                if !self.net.hold_message(msg) {
                    d.notes.push(format!(
                        "Message {msg} was no longer on its way (delivered, dropped or held)."
                    ));
                }
            }
            Fault::ClockJump { node, delta_ms } => {
                self.clocks[node.index()].jump(self.now_us, delta_ms * 1_000);
                d.notes.push(clock_jump_note(&self.name(node), delta_ms));
            }
            Fault::ClockDrift { node, drift_ppm } => {
                self.clocks[node.index()].set_drift(self.now_us, drift_ppm);
                let applied = self.clocks[node.index()].drift_ppm();
                d.notes.push(clock_drift_note(&self.name(node), applied));
            }
            Fault::SlowNode { node, extra_ms } => self.net.slow_sender(node, extra_ms * 1_000),
            Fault::Input { node, input } => self.apply_input(node, &input, &mut d),
        }
        d
    }

    /// Hands a user input to the node. A node that is not up, or refuses the input, leaves the
    /// run unchanged; the entry says why and the action is listed as refused.
    fn apply_input(&mut self, node: NodeId, input: &str, d: &mut Draft) {
        let name = self.name(node);
        let not_up = match self.status[node.index()] {
            NodeStatus::Up => None,
            NodeStatus::Crashed => Some(format!("{name} is down")),
            NodeStatus::Paused { .. } => Some(format!("{name} is frozen in a pause")),
        };
        let result = match not_up {
            Some(reason) => Err(reason),
            None => {
                let mut result = Err(format!("{name} is down"));
                self.invoke(node, d, |p, ctx| result = p.on_input(ctx, input));
                result
            }
        };
        if let Err(reason) = result {
            d.notes
                .push(format!("{name} does not act on `{input}`: {reason}."));
            d.refused = Some(reason);
        }
    }

    fn refresh_clock_readings(&mut self) {
        for (reading, clock) in self.clock_readings.iter_mut().zip(&self.clocks) {
            *reading = clock.read_us(self.now_us);
        }
    }

    fn bump_generation(&mut self) -> u64 {
        let g = self.next_generation;
        self.next_generation += 1;
        g
    }

    fn record(&mut self, draft: Draft) {
        let seq = self.event_count as u32;
        self.event_count += 1;
        self.refresh_clock_readings();
        let nodes = Nodes {
            live: &self.live,
            durable: &self.durable,
            local_now_us: &self.clock_readings,
            now_us: self.now_us,
        };
        self.verdicts.clear();
        if !self.tracker.is_empty() {
            self.world.evaluate(&nodes, &mut self.verdicts);
        }
        let violations = self.tracker.observe(seq, &self.verdicts);
        if self.recording == Recording::Summary {
            return;
        }
        let snapshot = (self.recording == Recording::Full).then(|| Rc::new(self.snapshot()));
        self.entries.push(TraceEntry {
            seq,
            time_us: self.now_us,
            kind: draft.kind,
            text: draft.text,
            nodes: draft.nodes,
            message: draft.message,
            fault: draft.fault,
            notes: draft.notes,
            lost: draft.lost,
            violations,
            snapshot,
        });
    }

    fn snapshot(&self) -> Snapshot {
        let previous = self.entries.last().and_then(|e| e.snapshot.clone());
        let nodes = (0..self.infos.len())
            .map(|i| {
                let local_us = self.clocks[i].read_us(self.now_us);
                let (lines, gauge, log, inputs) = match &self.live[i] {
                    Some(p) => (p.summary(local_us), p.gauge(local_us), p.log_cells(), p.inputs()),
                    None => (
                        W::Node::durable_summary(&self.durable[i]),
                        None,
                        W::Node::durable_log_cells(&self.durable[i]),
                        Vec::new(),
                    ),
                };
                // A paused node takes no input until it wakes.
                let inputs = if self.status[i] == NodeStatus::Up {
                    inputs
                } else {
                    Vec::new()
                };
                let view = NodeView {
                    id: NodeId(i as u32),
                    status: self.status[i],
                    local_time_us: self.clocks[i].read_us(self.now_us),
                    clock_offset_us: self.clocks[i].offset_us(self.now_us),
                    waiting_inputs: self.waiting[i].len() as u32,
                    lines,
                    gauge,
                    log,
                    inputs,
                };
                match previous.as_ref().and_then(|s| s.nodes.get(i)) {
                    Some(old) if **old == view => Rc::clone(old),
                    _ => Rc::new(view),
                }
            })
            .collect();
        let messages = self
            .net
            .in_flight()
            .map(|m| MsgView {
                id: m.id,
                from: m.from,
                to: m.to,
                label: m.msg.label(),
                sent_us: m.sent_us,
                deliver_us: m.deliver_us,
            })
            .collect();
        let links = self
            .net
            .abnormal_links()
            .into_iter()
            .map(|(from, to, cut, held)| LinkView { from, to, cut, held })
            .collect();
        let view = Nodes {
            live: &self.live,
            durable: &self.durable,
            local_now_us: &self.clock_readings,
            now_us: self.now_us,
        };
        let tables = self.world.tables(&view);
        let highlight = self.world.highlight(&view);
        Snapshot {
            time_us: self.now_us,
            nodes,
            messages,
            links,
            tables,
            highlight,
        }
    }
}

/// Narration for a clock step: timers keep their real deadlines, measurements shift.
fn clock_jump_note(name: &str, delta_ms: i64) -> String {
    let size = decimal(delta_ms.unsigned_abs(), 3);
    match delta_ms {
        0 => format!("{name}'s clock is stepped by nothing: no change."),
        d if d < 0 => format!(
            "{name}'s clock is stepped back {size} s, as an NTP correction can do. Its pending timers keep their real deadlines, but any interval it measures across this moment looks {size} s shorter to it."
        ),
        _ => format!(
            "{name}'s clock is stepped forward {size} s. Its pending timers keep their real deadlines, but any interval it measures across this moment looks {size} s longer to it."
        ),
    }
}

/// Narration for a change of clock rate, in words and in real seconds.
fn clock_drift_note(name: &str, drift_ppm: i64) -> String {
    let percent = decimal(drift_ppm.unsigned_abs(), 4);
    let reads = decimal((1_000_000 + drift_ppm) as u64, 6);
    match drift_ppm {
        0 => format!("{name}'s clock now keeps true time."),
        p if p < 0 => format!(
            "{name}'s clock now runs {percent}% slow: each real second reads as {reads} s on it. Its timers fire late, and it believes less time has passed than really has."
        ),
        _ => format!(
            "{name}'s clock now runs {percent}% fast: each real second reads as {reads} s on it. Its timers fire early, and it believes more time has passed than really has."
        ),
    }
}

/// `value / 10^places` in decimal without trailing zeros, e.g. `decimal(800_000, 6)` = `0.8`.
fn decimal(value: u64, places: u32) -> String {
    let unit = 10u64.pow(places);
    let frac = format!("{:0width$}", value % unit, width = places as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{}", value / unit)
    } else {
        format!("{}.{frac}", value / unit)
    }
}

fn validate_action(infos: &[NodeInfo], action: &Action) -> Result<(), String> {
    let kind = action.fault.kind();
    let nodes = action.fault.nodes();
    for n in &nodes {
        let Some(info) = infos.get(n.index()) else {
            let valid: Vec<String> = infos.iter().map(|i| format!("{} ({})", i.id.0, i.name)).collect();
            return Err(format!(
                "there is no node {}; nodes are {}",
                n.0,
                valid.join(", ")
            ));
        };
        if !info.faults.contains(&kind) {
            return Err(
                format!("this scenario does not allow {kind:?} faults on {}", info.name).to_lowercase(),
            );
        }
    }
    if nodes.is_empty() && !infos.iter().any(|i| i.faults.contains(&kind)) {
        return Err("this scenario does not allow network faults".to_string());
    }
    Ok(())
}
