//! A scenario's view onto its participants: the properties it checks after every event, the
//! inspector tables, the outcome, the warning band, and narration of its own. A world reads
//! participants through [`Nodes`], typed by the participant it expects at an id.

use super::hosted::Slot;
use super::ids::NodeId;
use super::participant::Participant;
use crate::properties::PropertySpec;
use crate::trace::TableView;
use std::collections::BTreeMap;

pub trait World {
    fn properties(&self) -> Vec<PropertySpec>;
    /// Evaluates every declared property after a step, pushing one verdict each onto `out`
    /// (cleared by the caller).
    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>);
    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView>;
    /// The run's outcome fields, read once when it ends.
    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value>;
    /// A warning that holds at this step, e.g. "two workers believe they hold the lease";
    /// the timeline draws a band over the steps where it holds.
    fn highlight(&self, _nodes: &Nodes<'_>) -> Option<String> {
        None
    }
    /// Who holds the scenario's lock at this step, as each holder believes and as the authority
    /// records it: only participants with either side true. Empty where no lock is modelled.
    fn holdings(&self, _nodes: &Nodes<'_>) -> Vec<crate::kernel::view::Holding> {
        Vec::new()
    }
    /// Narration the world adds to the step it just evaluated ("S3 is now leader of term 2,
    /// and a majority of 3 is up"), after the participants' own.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A world with nothing to check: the default until a setup names its own.
pub struct QuietWorld;

impl World for QuietWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        Vec::new()
    }
    fn evaluate(&mut self, _nodes: &Nodes<'_>, _out: &mut Vec<bool>) {}
    fn tables(&self, _nodes: &Nodes<'_>) -> Vec<crate::trace::TableView> {
        Vec::new()
    }
    fn outcome(&self, _nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        BTreeMap::new()
    }
}

/// The participants as a world may read them: live state (absent while crashed), what each
/// has persisted, and each one's configuration.
pub struct Nodes<'a> {
    pub(crate) slots: &'a [Box<dyn Slot>],
    pub(crate) names: &'a [String],
    /// Each node's local clock reading now.
    pub local_now_us: &'a [u64],
    /// True simulated time now.
    pub now_us: u64,
}

impl<'a> Nodes<'a> {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Every node's id, in order.
    pub fn ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.slots.len() as u32).map(NodeId)
    }

    /// The ids of the nodes that are `P`s, up or down.
    pub fn ids_of<P: Participant>(&self) -> Vec<NodeId> {
        self.ids().filter(|id| self.durable::<P>(*id).is_some()).collect()
    }

    /// Node `id`'s live state, if it is up and is a `P`.
    pub fn live<P: Participant>(&self, id: NodeId) -> Option<&'a P> {
        self.slots.get(id.index())?.live_any()?.downcast_ref()
    }

    /// What node `id` last persisted, if it is a `P`.
    pub fn durable<P: Participant>(&self, id: NodeId) -> Option<&'a P::Durable> {
        self.slots.get(id.index())?.durable_any().downcast_ref()
    }

    /// Node `id`'s configuration, if it is a `P`.
    pub fn config<P: Participant>(&self, id: NodeId) -> Option<&'a P::Config> {
        self.slots.get(id.index())?.config_any().downcast_ref()
    }

    /// Whether node `id` has live state (it is up or paused, not crashed).
    pub fn is_live(&self, id: NodeId) -> bool {
        self.slots.get(id.index()).is_some_and(|s| s.live_any().is_some())
    }

    pub fn name(&self, id: NodeId) -> &'a str {
        self.names.get(id.index()).map_or("?", String::as_str)
    }

    pub fn names(&self) -> &'a [String] {
        self.names
    }
}
