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

/// Everything a node's card shows besides its status: built by the participant (or from what
/// it persisted, while it is down).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Card {
    pub lines: Vec<String>,
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
