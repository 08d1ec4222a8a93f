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

/// Everything a node's card shows besides its status: built by the participant (or from what
/// it persisted, while it is down).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Card {
    pub lines: Vec<String>,
    pub gauge: Option<Gauge>,
    pub log: Vec<LogCell>,
    pub inputs: Vec<InputSpec>,
}
