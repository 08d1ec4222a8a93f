//! Everything needed to start a run, as a scenario builds it: the participants with their
//! display names, kinds, allowed faults and configuration; the network; faults the scenario
//! scripts itself; and the world that checks it.

use super::beats::{BeatSpec, Step};
use super::faults::{Fault, FaultKind};
use super::hosted::{Hosted, Slot};
use super::ids::NodeId;
use super::network::LinkConfig;
use super::participant::Participant;
use super::timing::Timing;
use super::world::{Nodes, QuietWorld, World};
use crate::trace::NodeInfo;

pub struct Setup {
    pub(crate) world: Box<dyn World>,
    pub(crate) infos: Vec<NodeInfo>,
    /// One per id handed out; `None` while a [reserved](Setup::reserve) id awaits its node.
    pub(crate) slots: Vec<Option<Box<dyn Slot>>>,
    /// Every link's configuration, unless [`Setup::link`] overrides one direction.
    pub link: LinkConfig,
    pub(crate) links: Vec<(NodeId, NodeId, LinkConfig)>,
    /// Durable writes and timer lateness; none unless the scenario sets them.
    pub timing: Timing,
    /// Faults the scenario itself scripts, at true times.
    pub(crate) scripted: Vec<(u64, Fault)>,
    /// Parameters the scenario derived from others, recorded in the trace with the rest.
    pub(crate) derived_params: crate::scenarios::Params,
    /// The story's beats, in order.
    pub(crate) beats: Vec<BeatSpec>,
}

impl Setup {
    pub fn new(link: LinkConfig) -> Setup {
        Setup {
            world: Box::new(QuietWorld),
            infos: Vec::new(),
            slots: Vec::new(),
            link,
            links: Vec::new(),
            timing: Timing::default(),
            scripted: Vec::new(),
            derived_params: crate::scenarios::Params::new(),
            beats: Vec::new(),
        }
    }

    /// Names the world that checks this run.
    pub fn set_world(&mut self, world: impl World + 'static) {
        self.world = Box::new(world);
    }

    /// Adds a participant that starts from `durable` as it would after a restart, and returns
    /// its id (ids count up from 0 in the order nodes are added or reserved).
    pub fn add<P: Participant>(
        &mut self,
        name: impl Into<String>,
        kind: &str,
        faults: &[FaultKind],
        config: P::Config,
        durable: P::Durable,
    ) -> NodeId {
        let id = self.reserve();
        self.place::<P>(id, name, kind, faults, config, durable);
        id
    }

    /// Hands out the next id for a participant [placed](Setup::place) later: for nodes whose
    /// configuration names nodes added after them (workers that write to a ledger added next).
    /// Every reserved id must be placed before the run starts.
    pub fn reserve(&mut self) -> NodeId {
        let id = NodeId(self.infos.len() as u32);
        self.infos.push(NodeInfo {
            id,
            name: String::new(),
            kind: String::new(),
            faults: Vec::new(),
        });
        self.slots.push(None);
        id
    }

    /// Puts a participant at a [reserved](Setup::reserve) id, starting from `durable` as it
    /// would after a restart.
    pub fn place<P: Participant>(
        &mut self,
        id: NodeId,
        name: impl Into<String>,
        kind: &str,
        faults: &[FaultKind],
        config: P::Config,
        durable: P::Durable,
    ) {
        let live = P::recover(&config, id, &durable);
        self.place_live(id, name, kind, faults, config, live, durable);
    }

    /// Puts a participant whose starting state is not just a recovery from `durable` at a
    /// [reserved](Setup::reserve) id.
    #[allow(clippy::too_many_arguments)]
    pub fn place_live<P: Participant>(
        &mut self,
        id: NodeId,
        name: impl Into<String>,
        kind: &str,
        faults: &[FaultKind],
        config: P::Config,
        live: P,
        durable: P::Durable,
    ) {
        let slot: Box<dyn Slot> = Box::new(Hosted::new(config, live, durable));
        self.put(id, name.into(), kind, faults, slot);
    }

    /// The part of placing a node that is the same for every participant type, written once
    /// rather than in each type's copy of `place_live` (about 0.3 KiB of code a type in a
    /// browser bundle).
    fn put(&mut self, id: NodeId, name: String, kind: &str, faults: &[FaultKind], slot: Box<dyn Slot>) {
        let at = &mut self.slots[id.index()];
        assert!(at.is_none(), "node {} is placed twice", id.0);
        *at = Some(slot);
        self.infos[id.index()] = NodeInfo {
            id,
            name,
            kind: kind.to_string(),
            faults: faults.to_vec(),
        };
    }

    /// The display names of the participants added so far, by id.
    pub fn names(&self) -> Vec<String> {
        self.infos.iter().map(|i| i.name.clone()).collect()
    }

    pub fn infos(&self) -> &[NodeInfo] {
        &self.infos
    }

    /// Configures one direction of one link, overriding [`Setup::link`].
    pub fn link(&mut self, from: NodeId, to: NodeId, config: LinkConfig) {
        self.links.push((from, to, config));
    }

    /// A fault the scenario itself applies at true time `at_us`.
    pub fn script(&mut self, at_us: u64, fault: Fault) {
        self.scripted.push((at_us, fault));
    }

    /// Records a parameter the scenario derived from the others (e.g. identical timeouts make
    /// the maximum equal the minimum), so the trace shows what the run really used.
    pub fn derive_param(&mut self, key: &str, value: impl Into<String>) {
        self.derived_params.insert(key.to_string(), value.into());
    }

    /// Declares the next beat of the story: it happens at the first step (after the beats
    /// declared before it) where `when` holds. Returns it, to attach a question.
    pub fn beat(
        &mut self,
        key: &'static str,
        title: &str,
        text: &str,
        when: impl FnMut(&Nodes<'_>, &Step<'_>) -> bool + 'static,
    ) -> &mut BeatSpec {
        self.beats.push(BeatSpec {
            key,
            title: title.to_string(),
            text: text.to_string(),
            question: None,
            focus: Vec::new(),
            when: Box::new(when),
        });
        self.beats.last_mut().expect("just pushed")
    }
}
