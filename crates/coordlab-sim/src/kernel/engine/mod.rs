//! The engine: pops events in (time, seq) order, hands each to one participant, applies the
//! effects it emits, applies faults, and records one trace entry per processed event.
//!
//! There is one engine for every scenario: participants sit behind [`Slot`] trait objects,
//! messages and timers travel type-erased, so none of this code is instantiated per scenario.
//!
//! - `mod.rs` (here): the run loop, handler calls, effects, and recording an entry.
//! - [`events`]: what each kind of event does (deliver, timer, resume, peer down, …).
//! - [`faults`]: the one path every fault takes, scripted or injected.
//! - [`snapshot`]: the state after a step, as the UI draws it.

mod events;
mod faults;
mod snapshot;

use super::beats::{BeatTracker, Step};
use super::clock::LocalClock;
use super::faults::Action;
use super::hosted::{Call, Input, KernelEffect, Slot};
use super::ids::NodeId;
use super::message::Message;
use super::message::TimerKey;
use super::network::{Network, SendOutcome};
use super::queue::EventQueue;
use super::rng::{between_us, stream, SimRng, Stream};
use super::setup::Setup;
use super::timing::Timing;
use super::world::{Nodes, World};
use crate::properties::PropertyTracker;
use crate::trace::{
    EventKind, MessageRecord, NodeInfo, NodeStatus, RefusedAction, Snapshot, StopReason, Trace, TraceEntry,
};
use events::{Event, Waiting};
use std::rc::Rc;

/// Most participants one run may have.
pub const MAX_NODES: u32 = 16;

/// Most actions (injected faults and inputs) one run may have.
pub const MAX_ACTIONS: usize = 1_000;

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

/// One trace entry in the making.
struct Draft {
    kind: EventKind,
    text: String,
    nodes: Vec<NodeId>,
    message: Option<MessageRecord>,
    fault: Option<super::faults::Fault>,
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

/// A message on the wire, with its label made once when it was sent (none in a summary run,
/// which keeps no text).
struct Wire {
    msg: Box<dyn Message>,
    label: Option<Rc<str>>,
}

impl Wire {
    fn label(&self) -> String {
        self.label.as_deref().unwrap_or_default().to_string()
    }
}

impl Clone for Wire {
    fn clone(&self) -> Self {
        Wire {
            msg: self.msg.clone_message(),
            label: self.label.clone(),
        }
    }
}

pub struct Engine {
    world: Box<dyn World>,
    infos: Vec<NodeInfo>,
    names: Vec<String>,
    slots: Vec<Box<dyn Slot>>,
    status: Vec<NodeStatus>,
    clocks: Vec<LocalClock>,
    rngs: Vec<SimRng>,
    net: Network<Wire>,
    net_rng: SimRng,
    timing: Timing,
    /// Timer lateness; drawn from only when [`Timing::timer_jitter_us`] is not zero.
    timer_rng: SimRng,
    queue: EventQueue<Event>,
    timers: Vec<Vec<(Box<dyn TimerKey>, u64)>>,
    waiting: Vec<Vec<Waiting>>,
    pause_generation: Vec<u64>,
    next_generation: u64,
    now_us: u64,
    actions: Vec<Action>,
    next_action: usize,
    tracker: PropertyTracker,
    beats: BeatTracker,
    recording: Recording,
    limits: Limits,
    entries: Vec<TraceEntry>,
    event_count: u64,
    effects: Vec<KernelEffect>,
    verdicts: Vec<bool>,
    clock_readings: Vec<u64>,
    refused_actions: Vec<RefusedAction>,
}

impl Engine {
    /// Validates the action script against the participants and prepares a run.
    pub fn new(
        setup: Setup,
        seed: u64,
        actions: &[Action],
        limits: Limits,
        recording: Recording,
    ) -> Result<Self, String> {
        let n = setup.slots.len() as u32;
        assert!(
            n > 0 && n <= MAX_NODES,
            "a scenario must have 1..={MAX_NODES} participants"
        );
        if actions.len() > MAX_ACTIONS {
            return Err(format!(
                "{} actions is too many: a run takes at most {MAX_ACTIONS}",
                actions.len()
            ));
        }
        for (i, a) in actions.iter().enumerate() {
            faults::validate_action(&setup.infos, a)
                .map_err(|e| format!("action {} (`{}`): {e}", i + 1, a.to_code()))?;
        }
        let mut actions = actions.to_vec();
        super::collections::sort_by_key(&mut actions, |a| a.at_step); // stable: same-step actions keep script order
        let tracker = PropertyTracker::new(setup.world.properties());
        let mut net = Network::new(n, setup.link);
        for (from, to, config) in setup.links {
            net.configure(from, to, config);
        }
        let mut engine = Engine {
            world: setup.world,
            names: setup.infos.iter().map(|i| i.name.clone()).collect(),
            infos: setup.infos,
            slots: setup
                .slots
                .into_iter()
                .enumerate()
                .map(|(i, s)| s.unwrap_or_else(|| panic!("node {i} was reserved but never placed")))
                .collect(),
            status: vec![NodeStatus::Up; n as usize],
            clocks: vec![LocalClock::default(); n as usize],
            rngs: (0..n).map(|i| stream(seed, Stream::Node(NodeId(i)))).collect(),
            net,
            net_rng: stream(seed, Stream::Network),
            timing: setup.timing,
            timer_rng: stream(seed, Stream::Timers),
            queue: EventQueue::default(),
            timers: (0..n).map(|_| Vec::new()).collect(),
            waiting: (0..n).map(|_| Vec::new()).collect(),
            pause_generation: vec![0; n as usize],
            next_generation: 1,
            now_us: 0,
            actions,
            next_action: 0,
            tracker,
            beats: BeatTracker::new(setup.beats),
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
            engine.queue.push(at_us, Event::Fault(Box::new(fault)));
        }
        Ok(engine)
    }

    /// Applies the actions that are due and processes the next event; `Some` when the run
    /// has ended (and this call did nothing).
    fn advance(&mut self) -> Option<StopReason> {
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
            return Some(StopReason::MaxEvents);
        }
        let Some(time_us) = self.queue.peek_time_us() else {
            return Some(StopReason::Quiescent);
        };
        if time_us > self.limits.max_time_us {
            return Some(StopReason::MaxTime);
        }
        let (time_us, event) = self.queue.pop().expect("peeked");
        self.now_us = time_us;
        if let Some(draft) = self.process(event) {
            self.record(draft);
        }
        None
    }

    /// Runs until the trace holds more than `entries` entries or the run ends; false once it
    /// has ended. What a viewer uses to compute snapshots only as far as it shows them.
    pub fn run_past(&mut self, entries: usize) -> bool {
        while self.entries.len() <= entries {
            if self.advance().is_some() {
                return false;
            }
        }
        true
    }

    /// The snapshot after entry `i`, if the run has reached it and records snapshots.
    pub fn snapshot_at(&self, i: usize) -> Option<Rc<Snapshot>> {
        self.entries.get(i).and_then(|e| e.snapshot.clone())
    }

    /// Runs to quiescence or a limit and returns the trace.
    pub fn run(mut self, scenario: &str, seed: u64, params: crate::scenarios::Params) -> Trace {
        let stop = loop {
            if let Some(stop) = self.advance() {
                break stop;
            }
        };
        self.refresh_clock_readings();
        let outcome = self.world.outcome(&Nodes {
            slots: &self.slots,
            names: &self.names,
            local_now_us: &self.clock_readings,
            now_us: self.now_us,
        });
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
            beats: self.beats.finish(),
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

    fn name(&self, id: NodeId) -> &str {
        &self.names[id.index()]
    }

    /// Runs one handler of `node` (if it is up) and applies what it emitted.
    fn invoke(&mut self, node: NodeId, draft: &mut Draft, input: Input<'_>) -> Result<(), String> {
        let i = node.index();
        let mut effects = std::mem::take(&mut self.effects);
        let call = Call {
            node,
            local_now_us: self.clocks[i].read_us(self.now_us),
            rng: &mut self.rngs[i],
            names: &self.names,
            out: &mut effects,
        };
        let result = self.slots[i].handle(call, input);
        // Sends after the handler's first durable write leave once the write is done.
        let mut depart_us = self.now_us;
        for effect in effects.drain(..) {
            if let KernelEffect::DurableWrite = effect {
                depart_us = self.now_us + self.timing.durable_write_us;
                continue;
            }
            self.apply_effect(node, effect, depart_us, draft);
        }
        self.effects = effects;
        result
    }

    /// Applies one effect of `node`'s handler; a send leaves the node at `depart_us` (now, or
    /// after a durable write). The link's state (cut, held) is read when the handler ran.
    fn apply_effect(&mut self, node: NodeId, effect: KernelEffect, depart_us: u64, draft: &mut Draft) {
        let i = node.index();
        match effect {
            KernelEffect::DurableWrite => {}
            KernelEffect::Send { to, msg } => {
                assert!(
                    to.0 < self.infos.len() as u32,
                    "participant sent to unknown node {to}"
                );
                let label: Option<Rc<str>> =
                    (self.recording != Recording::Summary).then(|| Rc::from(msg.label()));
                let wire = Wire {
                    msg,
                    label: label.clone(),
                };
                let (id, outcome) = self.net.send(depart_us, node, to, wire, &mut self.net_rng);
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
                            label: label.as_deref().unwrap_or_default().to_string(),
                            sent_us: depart_us,
                        });
                    }
                }
            }
            KernelEffect::SetTimer {
                timer,
                after_local_us,
            } => {
                let generation = self.bump_generation();
                let late_us = match self.timing.timer_jitter_us {
                    0 => 0, // no draw: runs without jitter keep their random sequences
                    jitter => between_us(&mut self.timer_rng, 0, jitter),
                };
                let at = self.now_us + self.clocks[i].true_duration_us(after_local_us) + late_us;
                let pending = &mut self.timers[i];
                pending.retain(|(t, _)| !t.same(timer.as_ref()));
                pending.push((timer, generation));
                self.queue.push(at, Event::Timer { node, generation });
            }
            KernelEffect::CancelTimer { timer } => self.timers[i].retain(|(t, _)| !t.same(timer.as_ref())),
            KernelEffect::Note(text) => draft.notes.push(text),
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

    fn record(&mut self, mut draft: Draft) {
        let seq = self.event_count as u32;
        self.event_count += 1;
        self.refresh_clock_readings();
        let nodes = Nodes {
            slots: &self.slots,
            names: &self.names,
            local_now_us: &self.clock_readings,
            now_us: self.now_us,
        };
        self.verdicts.clear();
        if !self.tracker.is_empty() {
            self.world.evaluate(&nodes, &mut self.verdicts);
        }
        let violations = self.tracker.observe(seq, &self.verdicts);
        let world_notes = self.world.take_notes();
        self.beats.observe(
            seq,
            &nodes,
            &Step {
                kind: draft.kind,
                nodes: &draft.nodes,
                fault: draft.fault.as_ref(),
                notes: &draft.notes,
            },
        );
        if self.recording == Recording::Summary {
            return;
        }
        draft.notes.extend(world_notes);
        let snapshot = (self.recording == Recording::Full).then(|| Rc::new(self.snapshot()));
        let nodes = Nodes {
            slots: &self.slots,
            names: &self.names,
            local_now_us: &self.clock_readings,
            now_us: self.now_us,
        };
        let highlight = match &snapshot {
            Some(s) => s.highlight.clone(),
            None => self.world.highlight(&nodes),
        };
        let holdings = self.world.holdings(&nodes);
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
            highlight,
            holdings,
            snapshot,
        });
    }
}
