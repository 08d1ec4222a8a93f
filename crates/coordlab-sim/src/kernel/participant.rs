//! The contract between the kernel and a protocol.
//!
//! A participant is a pure state machine. A handler receives its state, a [`Ctx`] (its own
//! local clock reading, its own random stream, an outbox) and one input; it does no I/O and
//! reads no global state. Everything it wants done is an [`Effect`] the kernel applies.
//! Durable state is separate: only what a participant [`Ctx::persist`]s survives a crash.

use super::ids::NodeId;
use super::rng::SimRng;
use crate::trace::{Gauge, InputSpec, LogCell};
use std::fmt::Debug;

/// What a message or timer looks like on screen and in the trace.
pub trait Label {
    /// One short line, e.g. `SELECT balance … FOR UPDATE`.
    fn label(&self) -> String;
}

pub trait Participant: Sized {
    type Msg: Clone + Debug + Label;
    type Timer: Clone + Debug + PartialEq + Label;
    type Durable: Clone + Debug;

    /// Called once when the run starts, and again after every restart.
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>);
    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: Self::Msg);
    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: Self::Timer);
    /// The connection to `peer` broke because it crashed (only for peers [`Self::watches`]).
    fn on_peer_down(&mut self, _ctx: &mut Ctx<'_, Self>, _peer: NodeId) {}
    /// Whether this participant holds a connection to `peer` and learns of its crash.
    fn watches(&self, _peer: NodeId) -> bool {
        false
    }
    /// Rebuilds a participant after a restart from what it last persisted.
    fn recover(id: NodeId, durable: &Self::Durable) -> Self;
    /// A few lines for the node's card in the topology view, at the node's clock reading.
    fn summary(&self, local_now_us: u64) -> Vec<String>;
    /// The card's lines while the node is down: what it has persisted.
    fn durable_summary(durable: &Self::Durable) -> Vec<String>;

    /// The inputs a user may send this node in its current state (the UI shows one button
    /// each). Most participants take none.
    fn inputs(&self) -> Vec<InputSpec> {
        Vec::new()
    }
    /// A user input, injected like a fault (`input:<node>:<word>`). `Err` explains a refusal;
    /// a participant that refuses must leave its state and the outbox untouched.
    fn on_input(&mut self, _ctx: &mut Ctx<'_, Self>, _input: &str) -> Result<(), String> {
        Err("this node takes no input".into())
    }
    /// A countdown for the card (e.g. an election timer), at the node's clock reading.
    fn gauge(&self, _local_now_us: u64) -> Option<Gauge> {
        None
    }
    /// The node's replicated log for the card, if it keeps one.
    fn log_cells(&self) -> Vec<LogCell> {
        Vec::new()
    }
    /// The persisted log while the node is down (nothing is known committed then).
    fn durable_log_cells(_durable: &Self::Durable) -> Vec<LogCell> {
        Vec::new()
    }
}

/// An effect a handler asks the kernel to apply.
#[derive(Clone, Debug)]
pub enum Effect<P: Participant> {
    Send {
        to: NodeId,
        msg: P::Msg,
    },
    /// Fires after `after_local_us` by the node's own clock; replaces a pending equal timer.
    SetTimer {
        timer: P::Timer,
        after_local_us: u64,
    },
    CancelTimer {
        timer: P::Timer,
    },
    Persist(P::Durable),
    /// A sentence of narration, shown for this step.
    Note(String),
}

/// What a handler may see and do.
pub struct Ctx<'a, P: Participant> {
    pub node: NodeId,
    /// The node's local clock reading: the only time a participant can know.
    pub local_now_us: u64,
    pub rng: &'a mut SimRng,
    pub(crate) effects: &'a mut Vec<Effect<P>>,
}

impl<'a, P: Participant> Ctx<'a, P> {
    pub fn new(
        node: NodeId,
        local_now_us: u64,
        rng: &'a mut SimRng,
        effects: &'a mut Vec<Effect<P>>,
    ) -> Self {
        Ctx {
            node,
            local_now_us,
            rng,
            effects,
        }
    }

    pub fn send(&mut self, to: NodeId, msg: P::Msg) {
        self.effects.push(Effect::Send { to, msg });
    }

    pub fn set_timer(&mut self, timer: P::Timer, after_local_us: u64) {
        self.effects.push(Effect::SetTimer {
            timer,
            after_local_us,
        });
    }

    pub fn cancel_timer(&mut self, timer: P::Timer) {
        self.effects.push(Effect::CancelTimer { timer });
    }

    pub fn persist(&mut self, durable: P::Durable) {
        self.effects.push(Effect::Persist(durable));
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.effects.push(Effect::Note(text.into()));
    }
}
