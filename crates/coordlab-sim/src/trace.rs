//! The trace: what a run produced. Each processed event is one entry with a stable one-line
//! text form, the narration for that step, the properties that broke there, and the state
//! snapshot after it — the view model the UI renders. Everything here is plain data.

pub use crate::kernel::beats::{Beat, Question};
use crate::kernel::faults::{Action, Fault, FaultKind};
use crate::kernel::ids::{MsgId, NodeId};
use crate::kernel::time::format_ms;
pub use crate::kernel::view::{Badge, Detail, Gauge, Holding, InputSpec, LogCell, Summary, Tone};
use crate::properties::PropertyReport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    Start,
    Deliver,
    Timer,
    Fault,
    Resume,
    PeerDown,
    /// A message reached a node that was down; nobody received it.
    Undeliverable,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Start => "start",
            EventKind::Deliver => "deliver",
            EventKind::Timer => "timer",
            EventKind::Fault => "fault",
            EventKind::Resume => "resume",
            EventKind::PeerDown => "peer-down",
            EventKind::Undeliverable => "undeliverable",
        }
    }
}

/// The message an entry delivered (or failed to deliver).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageRecord {
    pub id: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    pub label: String,
    pub sent_us: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceEntry {
    pub seq: u32,
    pub time_us: u64,
    pub kind: EventKind,
    /// What happened, in one line.
    pub text: String,
    /// The nodes involved, first the one that acted.
    pub nodes: Vec<NodeId>,
    pub message: Option<MessageRecord>,
    pub fault: Option<Fault>,
    /// Narration for this step.
    pub notes: Vec<String>,
    /// Messages sent at this step that the network lost at once (cut link or chance).
    pub lost: Vec<MessageRecord>,
    /// Properties that broke at this step for the first time.
    pub violations: Vec<String>,
    /// The world's warning at this step (e.g. the unsafe window of two holders), so that a
    /// trace without snapshots can still mark it; the snapshot carries the same.
    #[serde(skip)]
    pub highlight: Option<String>,
    /// Who holds the scenario's lock after this step, by belief and by the authority's record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holdings: Vec<Holding>,
    /// The state after this step; absent when the run was made without snapshots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Rc<Snapshot>>,
}

impl TraceEntry {
    /// The stable one-line text form: `seq time kind text`.
    pub fn line(&self) -> String {
        format!(
            "{:>4} {:>12} {:<13} {}",
            self.seq,
            format_ms(self.time_us),
            self.kind.as_str(),
            self.text
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum NodeStatus {
    Up,
    Crashed,
    Paused { until_us: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeView {
    pub id: NodeId,
    pub status: NodeStatus,
    pub local_time_us: u64,
    pub clock_offset_us: i64,
    /// Inputs that arrived during a pause and wait for it to end.
    pub waiting_inputs: u32,
    /// What the participant's card says (or what it persisted, while it is down).
    pub summary: Summary,
    /// A countdown to draw on the card, e.g. a Raft election timer. The extra fields below are
    /// left out of the serialised form when empty, so the snapshots (and fingerprints) of
    /// scenarios that do not use them stay exactly as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gauge: Option<Gauge>,
    /// The node's replicated log, oldest entry first (Raft servers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LogCell>,
    /// The inputs a user may send this node right now (buttons in the UI).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputSpec>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MsgView {
    pub id: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    pub label: String,
    pub sent_us: u64,
    /// `None` while a held link keeps it.
    pub deliver_us: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkView {
    pub from: NodeId,
    pub to: NodeId,
    pub cut: bool,
    pub held: bool,
}

/// A table for the state inspector: the accounts table, the lock manager, a lease table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableView {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A table's column headings from string literals: one shared function, where
/// `[..].map(String::from).to_vec()` or `vec![..into()]` put the copying at every call site.
pub fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub time_us: u64,
    /// Unchanged node views are shared with the previous snapshot.
    pub nodes: Vec<Rc<NodeView>>,
    pub messages: Vec<MsgView>,
    pub links: Vec<LinkView>,
    pub tables: Vec<TableView>,
    /// The world's warning at this step, if any (e.g. the unsafe window of two holders).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub highlight: Option<String>,
}

/// An action that was applied at its step but had no effect, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedAction {
    pub action: Action,
    pub reason: String,
}

/// A participant as the scenario introduces it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub id: NodeId,
    pub name: String,
    /// The participant kind, e.g. `database`, `worker`.
    pub kind: String,
    /// Which faults a user may inject on this node.
    pub faults: Vec<FaultKind>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Nothing left to happen.
    Quiescent,
    MaxEvents,
    MaxTime,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub scenario: String,
    pub seed: u64,
    pub params: crate::scenarios::Params,
    pub actions: Vec<Action>,
    /// Actions the run never reached: it ended (or hit a limit) before their step.
    pub unapplied_actions: Vec<Action>,
    /// Actions the run reached but the node refused (an input it does not take, a node that
    /// is down), each with the reason. Absent from traces made before inputs existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_actions: Vec<RefusedAction>,
    pub nodes: Vec<NodeInfo>,
    pub entries: Vec<TraceEntry>,
    pub properties: Vec<PropertyReport>,
    /// The story's beats in order, each with the step where it happened (if it did).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beats: Vec<Beat>,
    pub outcome: BTreeMap<String, serde_json::Value>,
    pub stop: StopReason,
    /// How many events the run processed (equals `entries.len()` unless entries were not kept).
    pub event_count: u64,
}

impl Trace {
    /// The beats that happened, in order, with their steps.
    pub fn reached_beats(&self) -> impl Iterator<Item = (u32, &Beat)> {
        self.beats.iter().filter_map(|b| b.seq.map(|s| (s, b)))
    }

    pub fn node_name(&self, id: NodeId) -> &str {
        self.nodes.get(id.index()).map(|n| n.name.as_str()).unwrap_or("?")
    }

    /// A 64-bit FNV-1a hash of every entry's line, notes, violations and snapshot, and of the
    /// outcome and verdicts. Equal inputs must give equal fingerprints on every target.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv::new();
        for e in &self.entries {
            h.write(e.line().as_bytes());
            for n in &e.notes {
                h.write(n.as_bytes());
            }
            for v in &e.violations {
                h.write(v.as_bytes());
            }
            if let Some(s) = &e.snapshot {
                h.write(serde_json::to_string(s.as_ref()).unwrap_or_default().as_bytes());
            }
        }
        h.write(
            serde_json::to_string(&self.outcome)
                .unwrap_or_default()
                .as_bytes(),
        );
        h.write(
            serde_json::to_string(&self.properties)
                .unwrap_or_default()
                .as_bytes(),
        );
        h.finish()
    }
}

/// FNV-1a, 64 bit: tiny, fixed and the same everywhere (std's hasher is randomly keyed).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separator so ("ab","c") and ("a","bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
