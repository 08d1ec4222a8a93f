//! Driving one participant by hand, for unit tests of its state machine: feed it one input,
//! look at the effects it emitted. No engine, no network, no other nodes.

use super::ids::NodeId;
use super::participant::{Ctx, Effect, Participant};
use super::rng::{stream, SimRng, Stream};

pub struct Harness<P: Participant> {
    pub node: P,
    pub id: NodeId,
    /// The node's local clock reading for the next call.
    pub now_us: u64,
    pub rng: SimRng,
    pub names: Vec<String>,
}

impl<P: Participant> Harness<P> {
    /// A harness for `node` as participant `id`, among participants called `names`.
    pub fn new(id: NodeId, node: P, names: &[&str]) -> Harness<P> {
        Harness {
            node,
            id,
            now_us: 0,
            rng: stream(1, Stream::Node(id)),
            names: names.iter().map(|n| n.to_string()).collect(),
        }
    }

    /// Runs `f` on the participant under a fresh context and returns what it emitted.
    pub fn call(&mut self, f: impl FnOnce(&mut P, &mut Ctx<'_, P>)) -> Vec<Effect<P>> {
        let mut effects = Vec::new();
        let mut ctx = Ctx::new(self.id, self.now_us, &mut self.rng, &self.names, &mut effects);
        f(&mut self.node, &mut ctx);
        effects
    }

    pub fn start(&mut self) -> Vec<Effect<P>> {
        self.call(|p, ctx| p.on_start(ctx))
    }

    pub fn deliver(&mut self, from: NodeId, msg: P::Msg) -> Vec<Effect<P>> {
        self.call(|p, ctx| p.on_message(ctx, from, msg))
    }

    pub fn fire(&mut self, timer: P::Timer) -> Vec<Effect<P>> {
        self.call(|p, ctx| p.on_timer(ctx, timer))
    }

    pub fn peer_down(&mut self, peer: NodeId) -> Vec<Effect<P>> {
        self.call(|p, ctx| p.on_peer_down(ctx, peer))
    }
}

/// Every message of type `M` among `effects`, with its destination.
pub fn sent<P: Participant, M: Clone + 'static>(effects: &[Effect<P>]) -> Vec<(NodeId, M)> {
    effects
        .iter()
        .filter_map(|e| e.sent::<M>())
        .map(|(to, m)| (to, m.clone()))
        .collect()
}

/// Every state `effects` persisted, in order.
pub fn persisted<P: Participant>(effects: &[Effect<P>]) -> Vec<&P::Durable> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Persist(d) => Some(d),
            _ => None,
        })
        .collect()
}

/// Every timer `effects` set, with its delay by the node's clock.
pub fn timers_set<P: Participant>(effects: &[Effect<P>]) -> Vec<(P::Timer, u64)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SetTimer {
                timer,
                after_local_us,
            } => Some((timer.clone(), *after_local_us)),
            _ => None,
        })
        .collect()
}

/// The narration in `effects`, joined into one text.
pub fn narration<P: Participant>(effects: &[Effect<P>]) -> String {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Note(n) => Some(n.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}
