//! The contract between the kernel and a protocol.
//!
//! A participant is a pure state machine. A handler receives its state, a [`Ctx`] (its own
//! local clock reading, its own random stream, the display names of everyone, an outbox) and
//! one input; it does no I/O and reads no global state. Everything it wants done is an
//! [`Effect`] the kernel applies. Durable state is separate: only what a participant
//! [`Ctx::persist`]s survives a crash, and [`Participant::recover`] rebuilds it from that and
//! from its configuration, which the scenario's setup gives once and the engine keeps.
//!
//! Participants compose. Each has its own message, timer and durable types; one that hosts
//! another (a lock server built on a Raft server) runs it under [`Ctx::within`], which maps
//! the inner timers and persisted state into its own.

use super::ids::NodeId;
pub use super::message::Label;
use super::message::{Inbox, Message};
use super::rng::SimRng;
use super::view::{Gauge, InputSpec, LogCell, Summary, Tone};
use std::fmt::Debug;

/// The logic half of a participant; what its card shows is its [`Card`].
pub trait Participant:
    Card<<Self as Participant>::Config, <Self as Participant>::Durable> + Sized + 'static
{
    /// What it takes off the wire (see [`Inbox`]).
    type Msg: Inbox;
    type Timer: Clone + Debug + PartialEq + Label + 'static;
    /// What survives a crash.
    type Durable: Debug + 'static;
    /// What the scenario decided about this node (its plan, its cluster, its rules); never
    /// changes during a run and needs no persisting.
    type Config: 'static;

    /// Called once when the run starts, and again after every restart.
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>);
    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: Self::Msg);
    fn on_timer(&mut self, _ctx: &mut Ctx<'_, Self>, _timer: Self::Timer) {}
    /// The connection to `peer` broke because it crashed (only for peers [`Self::watches`]).
    fn on_peer_down(&mut self, _ctx: &mut Ctx<'_, Self>, _peer: NodeId) {}
    /// Whether this participant holds a connection to `peer` and learns of its crash.
    fn watches(&self, _peer: NodeId) -> bool {
        false
    }
    /// Rebuilds the participant after a restart (and at the start) from its configuration and
    /// what it last persisted.
    fn recover(config: &Self::Config, id: NodeId, durable: &Self::Durable) -> Self;
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
}

/// The view half of a participant: what its card shows, live and while the node is down, in
/// the typed view model ([`Summary`], [`Gauge`], [`LogCell`]) the picture draws from. It reads
/// the participant's state and changes nothing; each protocol's card lives in
/// `crate::presentation::cards`, apart from its logic. `Config` and `Durable` are the
/// participant's own ([`Participant::Config`], [`Participant::Durable`]), so an impl names
/// neither.
pub trait Card<Config = <Self as Participant>::Config, Durable = <Self as Participant>::Durable>
where
    Self: Sized,
{
    /// What the node's card says: one word for its state with a tone, large badges, details
    /// by priority (see [`Summary`]).
    fn summary(&self, view: &ViewCtx<'_>) -> Summary;
    /// What the card says while the node is down: what it has persisted.
    fn durable_summary(_config: &Config, _durable: &Durable, _view: &ViewCtx<'_>) -> Summary {
        Summary::new("down", Tone::Failed).detail("state kept on disk")
    }
    /// A countdown for the card (e.g. an election timer), at the node's clock reading.
    fn gauge(&self, _view: &ViewCtx<'_>) -> Option<Gauge> {
        None
    }
    /// The node's replicated log for the card, if it keeps one.
    fn log_cells(&self) -> Vec<LogCell> {
        Vec::new()
    }
    /// The persisted log while the node is down (nothing is known committed then).
    fn durable_log_cells(_durable: &Durable) -> Vec<LogCell> {
        Vec::new()
    }
}

/// The timer type of a participant that sets none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoTimer {}

impl Label for NoTimer {
    fn label(&self) -> String {
        match *self {}
    }
}

/// An effect a handler asks the kernel to apply.
pub enum Effect<P: Participant> {
    Send {
        to: NodeId,
        msg: Box<dyn Message>,
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

impl<P: Participant> Debug for Effect<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Effect::Send { to, msg } => write!(f, "Send {{ to: {to:?}, msg: {:?} }}", msg.label()),
            Effect::SetTimer {
                timer,
                after_local_us,
            } => write!(
                f,
                "SetTimer {{ timer: {timer:?}, after_local_us: {after_local_us} }}"
            ),
            Effect::CancelTimer { timer } => write!(f, "CancelTimer {{ timer: {timer:?} }}"),
            Effect::Persist(d) => write!(f, "Persist({d:?})"),
            Effect::Note(n) => write!(f, "Note({n:?})"),
        }
    }
}

impl<P: Participant> Effect<P> {
    /// The message of a `Send` effect as `M`, if it is one (for tests and hosts).
    pub fn sent<M: 'static>(&self) -> Option<(NodeId, &M)> {
        match self {
            Effect::Send { to, msg } => msg.downcast_ref::<M>().map(|m| (*to, m)),
            _ => None,
        }
    }
}

/// What a handler may see and do.
pub struct Ctx<'a, P: Participant> {
    pub node: NodeId,
    /// The node's local clock reading: the only time a participant can know.
    pub local_now_us: u64,
    pub rng: &'a mut SimRng,
    names: &'a [String],
    effects: &'a mut Vec<Effect<P>>,
}

impl<'a, P: Participant> Ctx<'a, P> {
    /// A context for one handler call. `names` are every participant's display names, by id.
    pub fn new(
        node: NodeId,
        local_now_us: u64,
        rng: &'a mut SimRng,
        names: &'a [String],
        effects: &'a mut Vec<Effect<P>>,
    ) -> Self {
        Ctx {
            node,
            local_now_us,
            rng,
            names,
            effects,
        }
    }

    /// Sends a message of any protocol; the receiver decides whether it understands it.
    pub fn send(&mut self, to: NodeId, msg: impl Message) {
        self.effects.push(Effect::Send {
            to,
            msg: Box::new(msg),
        });
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

    /// A participant's display name, e.g. `worker-A`.
    pub fn name(&self, id: NodeId) -> &'a str {
        name_of(self.names, id)
    }

    /// This node's own display name.
    pub fn me(&self) -> &'a str {
        name_of(self.names, self.node)
    }

    /// Every participant's display name, by id.
    pub fn names(&self) -> &'a [String] {
        self.names
    }

    /// Runs a hosted component's handler under a context of the component's own types: its
    /// timers become `timer(t)` and what it persists becomes `durable(d)` of this participant.
    /// Messages need no mapping: the wire carries every protocol as it is.
    pub fn within<C: Participant, R>(
        &mut self,
        timer: impl Fn(C::Timer) -> P::Timer,
        durable: impl Fn(C::Durable) -> P::Durable,
        run: impl FnOnce(&mut Ctx<'_, C>) -> R,
    ) -> R {
        let mut inner = Vec::new();
        let result = run(&mut Ctx::new(
            self.node,
            self.local_now_us,
            self.rng,
            self.names,
            &mut inner,
        ));
        for effect in inner {
            self.effects.push(match effect {
                Effect::Send { to, msg } => Effect::Send { to, msg },
                Effect::SetTimer {
                    timer: t,
                    after_local_us,
                } => Effect::SetTimer {
                    timer: timer(t),
                    after_local_us,
                },
                Effect::CancelTimer { timer: t } => Effect::CancelTimer { timer: timer(t) },
                Effect::Persist(d) => Effect::Persist(durable(d)),
                Effect::Note(n) => Effect::Note(n),
            });
        }
        result
    }
}

/// What a participant may read while drawing its card.
pub struct ViewCtx<'a> {
    pub node: NodeId,
    /// The node's local clock reading.
    pub local_now_us: u64,
    names: &'a [String],
}

impl<'a> ViewCtx<'a> {
    pub fn new(node: NodeId, local_now_us: u64, names: &'a [String]) -> Self {
        ViewCtx {
            node,
            local_now_us,
            names,
        }
    }

    pub fn name(&self, id: NodeId) -> &'a str {
        name_of(self.names, id)
    }

    pub fn me(&self) -> &'a str {
        name_of(self.names, self.node)
    }
}

fn name_of(names: &[String], id: NodeId) -> &str {
    names.get(id.index()).map_or("?", String::as_str)
}
