//! What each kind of event does when it is popped from the queue.

use super::{Draft, Engine, Wire};
use crate::kernel::faults::Fault;
use crate::kernel::hosted::Input;
use crate::kernel::ids::{MsgId, NodeId};
use crate::kernel::message::TimerKey;
use crate::kernel::network::InFlight;
use crate::trace::{EventKind, MessageRecord, NodeStatus};

/// How long a peer takes to notice a crashed node's connection dropped (a TCP reset is
/// about one network hop).
pub(super) const PEER_DOWN_NOTICE_US: u64 = 1_000;

pub(super) enum Event {
    Start(NodeId),
    Deliver(MsgId),
    Timer {
        node: NodeId,
        generation: u64,
    },
    /// Boxed, like [`Event::Waited`]'s input: both are rare, and a small event keeps the
    /// queue's moves cheap.
    Fault(Box<Fault>),
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
        input: Box<Waiting>,
    },
}

/// An input that arrived while its node was paused.
pub(super) enum Waiting {
    Message(InFlight<Wire>),
    Timer(Box<dyn TimerKey>),
}

/// The trace's record of a message leaving the network, delivered or not.
fn record_of(m: &InFlight<Wire>) -> MessageRecord {
    MessageRecord {
        id: m.id,
        from: m.from,
        to: m.to,
        label: m.msg.label(),
        sent_us: m.sent_us,
    }
}

impl Engine {
    /// The event of a message that reached no handler: a partition or a crash stopped it.
    /// Both cases read the same in the trace but for `why`, so they share one wording.
    fn undeliverable(&self, m: &InFlight<Wire>, why: &str) -> Draft {
        let record = record_of(m);
        let text = self.text(|| {
            format!(
                "{} -> {} {why}: {}",
                self.name(record.from),
                self.name(record.to),
                record.label
            )
        });
        let mut d = Draft::new(EventKind::Undeliverable, text, vec![record.from, record.to]);
        d.message = Some(record);
        d
    }

    pub(super) fn process(&mut self, event: Event) -> Option<Draft> {
        match event {
            Event::Start(node) => {
                if self.status[node.index()] == NodeStatus::Crashed {
                    return None;
                }
                let text = self.text(|| format!("{} starts", self.name(node)));
                let mut draft = Draft::new(EventKind::Start, text, vec![node]);
                let _ = self.invoke(node, &mut draft, Input::Start);
                Some(draft)
            }
            Event::Deliver(id) => {
                let m = self.net.take_if_due(id, self.now_us)?; // None: dropped, or held after it was scheduled
                let to = m.to;
                if self.net.is_cut(m.from, m.to) {
                    return Some(self.undeliverable(&m, "lost in the partition"));
                }
                match self.status[to.index()] {
                    NodeStatus::Crashed => Some(self.undeliverable(&m, "arrives at a crashed node")),
                    NodeStatus::Paused { .. } => {
                        self.waiting[to.index()].push(Waiting::Message(m));
                        None
                    }
                    NodeStatus::Up => Some(self.deliver(m)),
                }
            }
            Event::Timer { node, generation } => {
                let pending = &mut self.timers[node.index()];
                let pos = pending.iter().position(|(_, g)| *g == generation)?;
                let (timer, _) = pending.remove(pos);
                if let NodeStatus::Paused { .. } = self.status[node.index()] {
                    self.waiting[node.index()].push(Waiting::Timer(timer));
                    return None;
                }
                Some(self.fire_timer(node, timer))
            }
            Event::Fault(fault) => Some(self.apply_fault(*fault)),
            Event::Resume { node, generation } => {
                if self.pause_generation[node.index()] != generation {
                    return None;
                }
                self.status[node.index()] = NodeStatus::Up;
                let held = std::mem::take(&mut self.waiting[node.index()]);
                let count = held.len();
                for input in held {
                    self.queue.push(
                        self.now_us,
                        Event::Waited {
                            node,
                            input: Box::new(input),
                        },
                    );
                }
                let name = self.name(node);
                let mut d = Draft::new(
                    EventKind::Resume,
                    format!("{name} resumes after its pause"),
                    vec![node],
                );
                d.notes.push(if count == 0 {
                    format!("{name} wakes up and carries on exactly where it stopped; it has no idea time passed.")
                } else {
                    format!(
                        "{name} wakes up with {count} input(s) that piled up while it was frozen; it still trusts everything it believed before the pause."
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
                let _ = self.invoke(node, &mut d, Input::PeerDown(peer));
                Some(d)
            }
            Event::Waited { node, input } => {
                if self.status[node.index()] != NodeStatus::Up {
                    return None;
                }
                match *input {
                    Waiting::Message(m) => Some(self.deliver(m)),
                    Waiting::Timer(t) => Some(self.fire_timer(node, t)),
                }
            }
        }
    }

    fn deliver(&mut self, m: InFlight<Wire>) -> Draft {
        let record = record_of(&m);
        let text = self.text(|| format!("{} -> {}: {}", self.name(m.from), self.name(m.to), record.label));
        let mut d = Draft::new(EventKind::Deliver, text, vec![m.to, m.from]);
        d.message = Some(record);
        let _ = self.invoke(
            m.to,
            &mut d,
            Input::Message {
                from: m.from,
                msg: m.msg.msg,
            },
        );
        d
    }

    fn fire_timer(&mut self, node: NodeId, timer: Box<dyn TimerKey>) -> Draft {
        let text = self.text(|| format!("{}: {}", self.name(node), timer.label()));
        let mut d = Draft::new(EventKind::Timer, text, vec![node]);
        let _ = self.invoke(node, &mut d, Input::Timer(timer));
        d
    }
}
