//! The pieces of a node's card that a participant draws itself: a countdown, its log, the
//! inputs it takes. They live here, below both the participant contract and the trace, so
//! the kernel and the trace share them without depending on each other.

use serde::{Deserialize, Serialize};

/// A countdown by the node's own clock: `remaining_us` of `total_us` are left.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gauge {
    /// What runs out, e.g. `election timeout`.
    pub label: String,
    pub remaining_us: u64,
    pub total_us: u64,
}

/// One entry of a replicated log as the card shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogCell {
    /// 1-based position in the log.
    pub index: u64,
    pub term: u64,
    /// Whether this node knows the entry is committed.
    pub committed: bool,
    /// The command, e.g. `set x=1`.
    pub label: String,
}

/// An input a node accepts from the user, e.g. `timeout` / "Force election timeout".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputSpec {
    /// The word in the fault code `input:<node>:<code>`.
    pub code: String,
    /// The button's text.
    pub label: String,
}

/// One participant's hold on the scenario's lock or lease at a step, from both sides: whether
/// the participant believes it holds it, and whether the authority's record (the lease row, the
/// Redis key, the lock server) says it does. The space-time view draws the two as bars along
/// the participant's lane, so a zombie's belief outliving the store's record is visible.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holding {
    pub node: crate::kernel::ids::NodeId,
    /// The participant thinks it holds the lock (by its own clock and the replies it has).
    pub believes: bool,
    /// The authority's record names this participant as the holder, unexpired.
    pub granted: bool,
}

impl Holding {
    /// The holdings of `workers`, in node order: each that `believes` it holds the lock or is
    /// the one the authority's record names (`granted_to`); the others are left out.
    pub fn of(
        workers: impl IntoIterator<Item = crate::kernel::ids::NodeId>,
        granted_to: Option<crate::kernel::ids::NodeId>,
        believes: impl Fn(crate::kernel::ids::NodeId) -> bool,
    ) -> Vec<Holding> {
        let mut out: Vec<Holding> = workers
            .into_iter()
            .filter_map(|node| {
                let (believes, granted) = (believes(node), granted_to == Some(node));
                (believes || granted).then_some(Holding {
                    node,
                    believes,
                    granted,
                })
            })
            .collect();
        // A world may keep its workers in another order (a queue).
        crate::kernel::collections::sort_by_key(&mut out, |h| h.node);
        out
    }
}

/// How a participant's state reads at a glance: the colour and the icon of its card. Always
/// drawn beside [`Summary::word`], so colour is never the only signal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tone {
    /// At rest: idle, a follower, a replica, a free lock, a store that holds nothing.
    #[default]
    Quiet,
    /// Reaching for it: asking for a lease, a candidate, connecting, claiming.
    Asking,
    /// Queued behind someone else: waiting, blocked, backing off.
    Waiting,
    /// Holds it: the lock's holder, the leader, the primary, a held lease row.
    Holds,
    /// Finished as meant to.
    Done,
    /// Stopped short: refused, gave up, rolled back, a lease lost or expired.
    Failed,
}

impl Tone {
    /// The word for the tone in markup (`class`) and in the trace.
    pub fn code(self) -> &'static str {
        match self {
            Tone::Quiet => "quiet",
            Tone::Asking => "asking",
            Tone::Waiting => "waiting",
            Tone::Holds => "holds",
            Tone::Done => "done",
            Tone::Failed => "failed",
        }
    }
}

/// A large figure on a card: a fencing token, a term, a balance, a generation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Badge {
    /// What the figure is, in a word or two: `token`, `term`, `balance`.
    pub label: String,
    /// The figure itself, short: `33`, `4`, `₹70`.
    pub value: String,
}

/// A secondary fact on a card, shown where there is room (and always in the inspector).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detail {
    pub text: String,
    /// 0 is shown first; higher numbers only when there is room to spare (a countdown that
    /// changes every step is usually 1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub priority: u8,
}

fn is_zero(p: &u8) -> bool {
    *p == 0
}

/// What a participant's card says about its state, as data: one large word with its tone,
/// large badges, and details in order of importance. The renderer picks how much of it fits
/// the space it has; sentences belong in the narration, not here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// One short word (two at most) for the state: `leader`, `holder`, `waiting`, `primary`.
    pub word: String,
    pub tone: Tone,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub badges: Vec<Badge>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Detail>,
}

impl Summary {
    pub fn new(word: impl Into<String>, tone: Tone) -> Summary {
        Summary {
            word: word.into(),
            tone,
            badges: Vec::new(),
            details: Vec::new(),
        }
    }

    /// Adds a large figure, e.g. `.badge("token", 33)`.
    pub fn badge(mut self, label: &str, value: impl std::fmt::Display) -> Summary {
        self.badges.push(Badge {
            label: label.to_string(),
            value: value.to_string(),
        });
        self
    }

    /// Adds a detail shown whenever the card has room for one.
    pub fn detail(self, text: impl Into<String>) -> Summary {
        self.detail_at(0, text)
    }

    /// Adds a detail shown only when the card has room to spare.
    pub fn minor(self, text: impl Into<String>) -> Summary {
        self.detail_at(1, text)
    }

    pub fn detail_at(mut self, priority: u8, text: impl Into<String>) -> Summary {
        self.details.push(Detail {
            text: text.into(),
            priority,
        });
        self
    }

    /// Everything on the card as one line of words, for screen readers and the inspector.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.word.clone()];
        parts.extend(self.badges.iter().map(|b| format!("{} {}", b.label, b.value)));
        parts.extend(self.details.iter().map(|d| d.text.clone()));
        parts.join("; ")
    }
}

/// Everything a node's card shows besides its status: built by the participant (or from what
/// it persisted, while it is down).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Card {
    pub summary: Summary,
    pub gauge: Option<Gauge>,
    pub log: Vec<LogCell>,
    pub inputs: Vec<InputSpec>,
}

#[cfg(test)]
mod tests {
    use super::Holding;
    use crate::kernel::ids::NodeId;

    #[test]
    fn holdings_leave_out_those_with_neither_and_come_in_node_order() {
        let workers = [NodeId(4), NodeId(2), NodeId(3)];
        let held = Holding::of(workers, Some(NodeId(4)), |n| n == NodeId(2));
        assert_eq!(
            held,
            vec![
                Holding {
                    node: NodeId(2),
                    believes: true,
                    granted: false
                },
                Holding {
                    node: NodeId(4),
                    believes: false,
                    granted: true
                },
            ]
        );
    }
}
