//! The simulated network: one link per direction, each with a latency range, a loss ratio,
//! a duplication ratio, and two switches — cut (messages are lost) and hold (messages wait
//! until released). Random latency per message also reorders messages on a link.

use super::collections::VecMap;
use super::ids::{MsgId, NodeId};
use super::rng::{between_us, Ratio, SimRng};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkConfig {
    pub latency_min_us: u64,
    pub latency_max_us: u64,
    pub loss: Ratio,
    /// Chance that a message is delivered twice (each copy with its own latency).
    pub duplicate: Ratio,
}

impl LinkConfig {
    pub fn reliable(latency_min_us: u64, latency_max_us: u64) -> LinkConfig {
        LinkConfig {
            latency_min_us,
            latency_max_us,
            loss: Ratio::NEVER,
            duplicate: Ratio::NEVER,
        }
    }
}

#[derive(Clone, Debug)]
struct Link {
    config: LinkConfig,
    cut: bool,
    held: bool,
    /// Added to every delivery on this link (a slowed-down sender).
    extra_us: u64,
}

/// A message the network is carrying (or holding).
#[derive(Clone, Debug)]
pub struct InFlight<M> {
    pub id: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    pub msg: M,
    pub sent_us: u64,
    /// `None` while the link holds it.
    pub deliver_us: Option<u64>,
}

/// What happened to a message handed to the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOutcome {
    Scheduled { deliver_us: u64 },
    Held,
    LostToCut,
    LostToChance,
}

pub struct Network<M> {
    node_count: u32,
    links: Vec<Link>,
    in_flight: VecMap<MsgId, InFlight<M>>,
    next_msg: u64,
    /// Second copies made by the last `send`, with their delivery times (`None`: held).
    copies: Vec<(MsgId, Option<u64>)>,
}

impl<M: Clone> Network<M> {
    pub fn new(node_count: u32, config: LinkConfig) -> Network<M> {
        let link = Link {
            config,
            cut: false,
            held: false,
            extra_us: 0,
        };
        Network {
            node_count,
            links: vec![link; (node_count * node_count) as usize],
            in_flight: VecMap::new(),
            next_msg: 0,
            copies: Vec::new(),
        }
    }

    fn link(&self, from: NodeId, to: NodeId) -> &Link {
        &self.links[(from.0 * self.node_count + to.0) as usize]
    }

    fn link_mut(&mut self, from: NodeId, to: NodeId) -> &mut Link {
        &mut self.links[(from.0 * self.node_count + to.0) as usize]
    }

    pub fn configure(&mut self, from: NodeId, to: NodeId, config: LinkConfig) {
        self.link_mut(from, to).config = config;
    }

    pub fn is_cut(&self, from: NodeId, to: NodeId) -> bool {
        self.link(from, to).cut
    }

    pub fn is_held(&self, from: NodeId, to: NodeId) -> bool {
        self.link(from, to).held
    }

    /// Hands a message to the network. Draws from `rng` only for latency and for loss on
    /// lossy links, in that fixed order.
    pub fn send(
        &mut self,
        now_us: u64,
        from: NodeId,
        to: NodeId,
        msg: M,
        rng: &mut SimRng,
    ) -> (MsgId, SendOutcome) {
        let id = MsgId(self.next_msg);
        self.next_msg += 1;
        let link = self.link(from, to).clone();
        if link.cut {
            return (id, SendOutcome::LostToCut);
        }
        if link.config.loss.happens(rng) {
            return (id, SendOutcome::LostToChance);
        }
        let (deliver_us, outcome) = if link.held {
            (None, SendOutcome::Held)
        } else {
            let at = now_us
                + link.extra_us
                + between_us(rng, link.config.latency_min_us, link.config.latency_max_us);
            (Some(at), SendOutcome::Scheduled { deliver_us: at })
        };
        // Drawn after latency so links without duplication keep their old random sequence.
        if link.config.duplicate.happens(rng) {
            let copy = MsgId(self.next_msg);
            self.next_msg += 1;
            let copy_deliver_us = deliver_us.map(|_| {
                now_us
                    + link.extra_us
                    + between_us(rng, link.config.latency_min_us, link.config.latency_max_us)
            });
            self.in_flight.insert(
                copy,
                InFlight {
                    id: copy,
                    from,
                    to,
                    msg: msg.clone(),
                    sent_us: now_us,
                    deliver_us: copy_deliver_us,
                },
            );
            self.copies.push((copy, copy_deliver_us));
        }
        self.in_flight.insert(
            id,
            InFlight {
                id,
                from,
                to,
                msg,
                sent_us: now_us,
                deliver_us,
            },
        );
        (id, outcome)
    }

    /// The duplicate copies the network made since the last call, for the engine to schedule.
    pub fn take_copies(&mut self) -> Vec<(MsgId, Option<u64>)> {
        std::mem::take(&mut self.copies)
    }

    /// Takes a message off the wire for delivery at `now_us`. `None` if it was dropped
    /// meanwhile, or held (and perhaps released again) after this delivery was scheduled: its
    /// old event stays in the queue and must find nothing.
    pub fn take_if_due(&mut self, id: MsgId, now_us: u64) -> Option<InFlight<M>> {
        match self.in_flight.get(&id) {
            Some(m) if m.deliver_us == Some(now_us) => self.in_flight.remove(&id),
            _ => None,
        }
    }

    pub fn drop_message(&mut self, id: MsgId) -> bool {
        self.in_flight.remove(&id).is_some()
    }

    /// Stops a message in flight until its link is released. `false` if it is gone already
    /// (or held already).
    pub fn hold_message(&mut self, id: MsgId) -> bool {
        match self.in_flight.get_mut(&id) {
            Some(m) if m.deliver_us.is_some() => {
                m.deliver_us = None;
                true
            }
            _ => false,
        }
    }

    pub fn set_cut(&mut self, from: NodeId, to: NodeId, cut: bool) {
        self.link_mut(from, to).cut = cut;
    }

    /// Makes everything `from` sends take `extra_us` longer (0 restores normal speed).
    pub fn slow_sender(&mut self, from: NodeId, extra_us: u64) {
        for to in 0..self.node_count {
            self.link_mut(from, NodeId(to)).extra_us = extra_us;
        }
    }

    pub fn heal(&mut self) {
        for link in &mut self.links {
            link.cut = false;
        }
    }

    pub fn hold(&mut self, from: NodeId, to: NodeId) {
        self.link_mut(from, to).held = true;
    }

    /// Releases a held link; returns the ids and new delivery times of the messages it held.
    pub fn release(&mut self, now_us: u64, from: NodeId, to: NodeId, rng: &mut SimRng) -> Vec<(MsgId, u64)> {
        let (config, extra_us) = {
            let link = self.link_mut(from, to);
            link.held = false;
            (link.config, link.extra_us)
        };
        let mut released = Vec::new();
        for m in self.in_flight.values_mut() {
            if m.from == from && m.to == to && m.deliver_us.is_none() {
                let at = now_us + extra_us + between_us(rng, config.latency_min_us, config.latency_max_us);
                m.deliver_us = Some(at);
                released.push((m.id, at));
            }
        }
        released
    }

    pub fn in_flight(&self) -> impl Iterator<Item = &InFlight<M>> {
        self.in_flight.values()
    }

    /// Links currently cut or holding, as (from, to, cut, held).
    pub fn abnormal_links(&self) -> Vec<(NodeId, NodeId, bool, bool)> {
        let mut out = Vec::new();
        for from in 0..self.node_count {
            for to in 0..self.node_count {
                let l = self.link(NodeId(from), NodeId(to));
                if from != to && (l.cut || l.held) {
                    out.push((NodeId(from), NodeId(to), l.cut, l.held));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rng::{stream, Stream};

    fn net() -> (Network<&'static str>, SimRng) {
        (
            Network::new(3, LinkConfig::reliable(1_000, 2_000)),
            stream(1, Stream::Network),
        )
    }

    #[test]
    fn delivery_time_lies_in_latency_range() {
        let (mut n, mut rng) = net();
        let (_, out) = n.send(10, NodeId(0), NodeId(1), "hi", &mut rng);
        match out {
            SendOutcome::Scheduled { deliver_us } => assert!((1_010..=2_010).contains(&deliver_us)),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn one_way_cut_loses_only_that_direction() {
        let (mut n, mut rng) = net();
        n.set_cut(NodeId(0), NodeId(1), true);
        assert_eq!(
            n.send(0, NodeId(0), NodeId(1), "a", &mut rng).1,
            SendOutcome::LostToCut
        );
        assert!(matches!(
            n.send(0, NodeId(1), NodeId(0), "b", &mut rng).1,
            SendOutcome::Scheduled { .. }
        ));
        n.heal();
        assert!(matches!(
            n.send(0, NodeId(0), NodeId(1), "c", &mut rng).1,
            SendOutcome::Scheduled { .. }
        ));
    }

    #[test]
    fn a_slowed_sender_delivers_later_until_restored() {
        let (mut n, mut rng) = net();
        n.slow_sender(NodeId(0), 500_000);
        let (_, slow) = n.send(0, NodeId(0), NodeId(1), "slow", &mut rng);
        assert!(matches!(slow, SendOutcome::Scheduled { deliver_us } if deliver_us >= 501_000));
        let (_, other) = n.send(0, NodeId(1), NodeId(0), "other", &mut rng);
        assert!(matches!(other, SendOutcome::Scheduled { deliver_us } if deliver_us <= 2_000));
        n.slow_sender(NodeId(0), 0);
        let (_, fast) = n.send(0, NodeId(0), NodeId(1), "fast", &mut rng);
        assert!(matches!(fast, SendOutcome::Scheduled { deliver_us } if deliver_us <= 2_000));
    }

    #[test]
    fn held_messages_wait_until_released() {
        let (mut n, mut rng) = net();
        n.hold(NodeId(2), NodeId(0));
        let (id, out) = n.send(0, NodeId(2), NodeId(0), "x", &mut rng);
        assert_eq!(out, SendOutcome::Held);
        assert_eq!(n.in_flight().next().unwrap().deliver_us, None);
        let released = n.release(5_000, NodeId(2), NodeId(0), &mut rng);
        assert_eq!(released.len(), 1);
        assert_eq!(released[0].0, id);
        assert!(released[0].1 >= 6_000);
    }

    #[test]
    fn a_duplicating_link_delivers_a_second_copy_with_its_own_latency() {
        let (mut n, mut rng) = net();
        let always = LinkConfig {
            duplicate: Ratio {
                numerator: 1,
                denominator: 1,
            },
            ..LinkConfig::reliable(1_000, 50_000)
        };
        n.configure(NodeId(0), NodeId(1), always);
        let (id, out) = n.send(0, NodeId(0), NodeId(1), "twice", &mut rng);
        assert!(matches!(out, SendOutcome::Scheduled { .. }));
        let copies = n.take_copies();
        assert_eq!(copies.len(), 1);
        let (copy, at) = copies[0];
        assert_ne!(copy, id);
        assert!(at.is_some_and(|t| (1_000..=50_000).contains(&t)));
        assert_eq!(n.in_flight().filter(|m| m.msg == "twice").count(), 2);
        assert!(n.take_copies().is_empty(), "copies are handed out once");
        // The reverse direction keeps the default: no copies.
        n.send(0, NodeId(1), NodeId(0), "once", &mut rng);
        assert!(n.take_copies().is_empty());
    }

    #[test]
    fn links_without_duplication_draw_the_same_random_sequence_as_before() {
        // Only latency is drawn on a reliable link: the next draw from a twin generator
        // lands at the same place.
        let (mut n, mut rng) = net();
        let mut twin = stream(1, Stream::Network);
        n.send(0, NodeId(0), NodeId(1), "a", &mut rng);
        between_us(&mut twin, 1_000, 2_000);
        assert_eq!(
            between_us(&mut rng, 0, 1 << 40),
            between_us(&mut twin, 0, 1 << 40)
        );
    }
}
