//! How one engine runs every kind of participant: each node sits in a [`Slot`], a trait object
//! the engine calls without knowing the participant's types. [`Hosted`] is the one adapter
//! from a typed [`Participant`] to a slot: it keeps the node's configuration, its live state
//! (gone while crashed) and what it persisted, unwraps what arrives for it, and turns the
//! typed effects of its handlers into the engine's untyped ones.

use super::ids::NodeId;
use super::message::{Inbox, Message, TimerKey};
use super::participant::{Ctx, Effect, Participant, ViewCtx};
use super::rng::SimRng;
use super::view::Card;
use std::any::Any;

/// What the engine lends a node for one handler call.
pub(crate) struct Call<'a> {
    pub node: NodeId,
    pub local_now_us: u64,
    pub rng: &'a mut SimRng,
    pub names: &'a [String],
    pub out: &'a mut Vec<KernelEffect>,
}

/// An effect as the engine applies it. Persisted state never leaves the slot; only the fact
/// that the handler wrote it does ([`KernelEffect::DurableWrite`], where it wrote it among
/// its sends).
pub(crate) enum KernelEffect {
    /// The handler persisted here: what it sends after this waits for the write.
    DurableWrite,
    Send {
        to: NodeId,
        msg: Box<dyn Message>,
    },
    SetTimer {
        timer: Box<dyn TimerKey>,
        after_local_us: u64,
    },
    CancelTimer {
        timer: Box<dyn TimerKey>,
    },
    Note(String),
}

/// What a handler call is about.
pub(crate) enum Input<'a> {
    Start,
    Message { from: NodeId, msg: Box<dyn Message> },
    Timer(Box<dyn TimerKey>),
    PeerDown(NodeId),
    User(&'a str),
}

/// A node as the engine sees it.
pub(crate) trait Slot {
    /// Runs one handler if the node is up; effects go to `call.out`. `Err` is a refused user
    /// input (or a node with no live state to take it).
    fn handle(&mut self, call: Call<'_>, input: Input<'_>) -> Result<(), String>;
    fn watches(&self, peer: NodeId) -> bool;
    /// Drops everything volatile; what was persisted stays.
    fn crash(&mut self);
    /// Rebuilds the live state from the configuration and what was persisted.
    fn restart(&mut self, id: NodeId);
    /// The card: from the live state, or from what was persisted while the node is down.
    fn card(&self, view: &ViewCtx<'_>) -> Card;
    fn live_any(&self) -> Option<&dyn Any>;
    fn durable_any(&self) -> &dyn Any;
    fn config_any(&self) -> &dyn Any;
}

pub(crate) struct Hosted<P: Participant> {
    config: P::Config,
    live: Option<P>,
    durable: P::Durable,
    /// Reused between calls so a handler call allocates nothing for its outbox.
    effects: Vec<Effect<P>>,
}

impl<P: Participant> Hosted<P> {
    pub fn new(config: P::Config, live: P, durable: P::Durable) -> Self {
        Hosted {
            config,
            live: Some(live),
            durable,
            effects: Vec::new(),
        }
    }
}

impl<P: Participant> Slot for Hosted<P> {
    fn handle(&mut self, call: Call<'_>, input: Input<'_>) -> Result<(), String> {
        let Some(state) = self.live.as_mut() else {
            return Err("it is down".into());
        };
        let mut effects = std::mem::take(&mut self.effects);
        let result = {
            let mut ctx = Ctx::new(call.node, call.local_now_us, call.rng, call.names, &mut effects);
            match input {
                Input::Start => {
                    state.on_start(&mut ctx);
                    Ok(())
                }
                Input::Message { from, msg } => {
                    if let Some(msg) = P::Msg::accept(msg) {
                        state.on_message(&mut ctx, from, msg);
                    }
                    Ok(())
                }
                Input::Timer(timer) => {
                    let timer = timer
                        .into_any()
                        .downcast::<P::Timer>()
                        .expect("the engine hands a node only its own timers");
                    state.on_timer(&mut ctx, *timer);
                    Ok(())
                }
                Input::PeerDown(peer) => {
                    state.on_peer_down(&mut ctx, peer);
                    Ok(())
                }
                Input::User(text) => state.on_input(&mut ctx, text),
            }
        };
        for effect in effects.drain(..) {
            match effect {
                Effect::Persist(d) => {
                    self.durable = d;
                    call.out.push(KernelEffect::DurableWrite);
                }
                Effect::Send { to, msg } => call.out.push(KernelEffect::Send { to, msg }),
                Effect::SetTimer {
                    timer,
                    after_local_us,
                } => call.out.push(KernelEffect::SetTimer {
                    timer: Box::new(timer),
                    after_local_us,
                }),
                Effect::CancelTimer { timer } => call.out.push(KernelEffect::CancelTimer {
                    timer: Box::new(timer),
                }),
                Effect::Note(text) => call.out.push(KernelEffect::Note(text)),
            }
        }
        self.effects = effects;
        result
    }

    fn watches(&self, peer: NodeId) -> bool {
        self.live.as_ref().is_some_and(|p| p.watches(peer))
    }

    fn crash(&mut self) {
        self.live = None;
    }

    fn restart(&mut self, id: NodeId) {
        self.live = Some(P::recover(&self.config, id, &self.durable));
    }

    fn card(&self, view: &ViewCtx<'_>) -> Card {
        match &self.live {
            Some(p) => Card {
                summary: p.summary(view),
                gauge: p.gauge(view),
                log: p.log_cells(),
                inputs: p.inputs(),
            },
            None => Card {
                summary: P::durable_summary(&self.config, &self.durable, view),
                gauge: None,
                log: P::durable_log_cells(&self.durable),
                inputs: Vec::new(),
            },
        }
    }

    fn live_any(&self) -> Option<&dyn Any> {
        self.live.as_ref().map(|p| p as &dyn Any)
    }

    fn durable_any(&self) -> &dyn Any {
        &self.durable
    }

    fn config_any(&self) -> &dyn Any {
        &self.config
    }
}
