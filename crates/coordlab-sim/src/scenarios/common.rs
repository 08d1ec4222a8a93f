//! What scenarios of every chapter share: the faults a user may inject on each kind of node,
//! and the integer parameter.

use super::{ParamKind, ParamSpec};
use crate::json;
use crate::kernel::beats::{BeatSpec, Step};
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Participant;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::view::Holding;
use crate::kernel::world::Nodes;
use crate::properties::{PropertyKind, PropertySpec};
use crate::protocols::job::{JobRunner, LockClient};
use crate::protocols::redis_locks::redis_job::JobDurable;
use serde_json::Value;
use std::collections::BTreeMap;

/// Faults a user may inject on a worker: everything, including its clock.
pub const WORKER_FAULTS: [FaultKind; 5] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
    FaultKind::Clock,
];

/// Faults a user may inject on a node whose clock plays no part: all but a clock fault.
pub const CLOCKLESS_FAULTS: [FaultKind; 4] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
];

/// Places lock workers of type `P` at their reserved ids, each `(id, name, plan)` with the
/// worker faults and a job not yet done. Their ids are reserved first because their plans
/// name the ledger (and more) added after them.
pub fn place_fresh_workers<'n, P: Participant<Durable = JobDurable>>(
    setup: &mut Setup,
    workers: impl IntoIterator<Item = (NodeId, &'n str, P::Config)>,
) {
    for (id, name, plan) in workers {
        setup.place::<P>(id, name, "worker", &WORKER_FAULTS, plan, JobDurable::default());
    }
}

/// The job runners with lock client `L` among `workers` that are up and believe they hold the
/// lock, with their ids.
pub fn runner_believers<'a, L: LockClient>(
    nodes: &Nodes<'a>,
    workers: &[NodeId],
) -> Vec<(NodeId, &'a JobRunner<L>)> {
    workers
        .iter()
        .filter_map(|id| Some((*id, nodes.live::<JobRunner<L>>(*id)?)))
        .filter(|(_, w)| w.believes_it_holds())
        .collect()
}

/// The holdings of the job runners with lock client `L` among `workers`: each that is up and
/// believes it holds the lock, or that the authority's record names (`granted_to`).
pub fn runner_holdings<L: LockClient>(
    nodes: &Nodes<'_>,
    workers: impl IntoIterator<Item = NodeId>,
    granted_to: Option<NodeId>,
) -> Vec<Holding> {
    Holding::of(workers, granted_to, |node| {
        nodes
            .live::<JobRunner<L>>(node)
            .is_some_and(JobRunner::believes_it_holds)
    })
}

/// The names of the lock clients (of type `P`) among `ids` whose job is recorded as done.
pub fn finished_by<P: Participant<Durable = JobDurable>>(nodes: &Nodes<'_>, ids: &[NodeId]) -> Value {
    let finished: Vec<&str> = ids
        .iter()
        .filter(|id| nodes.durable::<P>(**id).is_some_and(|d| d.finished))
        .map(|id| nodes.name(*id))
        .collect();
    Value::from(finished)
}

/// An integer parameter from `min` to `max`, in `unit`.
pub fn int_param(
    key: &'static str,
    label: &'static str,
    help: &'static str,
    default: &'static str,
    min: i64,
    max: i64,
    unit: &'static str,
) -> ParamSpec {
    ParamSpec::new(key, label, help, default, ParamKind::Int { min, max, unit })
}

/// A crashed worker's row in a "what each worker believes" table: it holds nothing, the
/// `unknown` columns about its lease (token, granted by, …) are dashes, and it does nothing.
/// Shared so a down worker reads the same in every story's table.
pub fn down_worker_row(name: &str, unknown: usize) -> Vec<String> {
    let mut row = vec![name.to_string(), "no".to_string()];
    row.extend(std::iter::repeat_n("—".to_string(), unknown));
    row.push("down".to_string());
    row
}

/// A property that must hold after every event.
pub const fn always(name: &'static str, description: &'static str) -> PropertySpec {
    PropertySpec {
        name,
        kind: PropertyKind::Always,
        description,
    }
}

/// A property that must have held by the end of the run.
pub const fn eventually(name: &'static str, description: &'static str) -> PropertySpec {
    PropertySpec {
        name,
        kind: PropertyKind::Eventually,
        description,
    }
}

/// A beat's title and the text under it.
pub type BeatText<'t> = (&'t str, &'t str);

/// Declares the next beat of a story whose wording turns on one yes/no of the run: `[yes, no]`
/// is the title and text where `cond` holds and where it does not; the beat itself (its key
/// and when it happens) is the same either way.
pub fn beat_either<'s>(
    setup: &'s mut Setup,
    key: &'static str,
    cond: bool,
    [yes, no]: [BeatText<'_>; 2],
    when: impl FnMut(&Nodes<'_>, &Step<'_>) -> bool + 'static,
) -> &'s mut BeatSpec {
    let (title, text) = if cond { yes } else { no };
    setup.beat(key, title, text, when)
}

/// How many workers at once believed they held the lock, followed step by step, and for how
/// long two or more did (true time): the unsafe window every lock story reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HolderCount {
    pub max: u32,
    /// When the current stretch of two or more began.
    opened_us: Option<u64>,
    /// Total length of earlier, closed stretches.
    closed_total_us: u64,
}

impl HolderCount {
    pub fn observe(&mut self, holders: u32, now_us: u64) {
        self.max = self.max.max(holders);
        match (holders >= 2, self.opened_us) {
            (true, None) => self.opened_us = Some(now_us),
            (false, Some(opened)) => {
                self.closed_total_us += now_us - opened;
                self.opened_us = None;
            }
            _ => {}
        }
    }

    /// How long two or more believed they held the lock, in total, in ms.
    pub fn unsafe_window_ms(&self, now_us: u64) -> u64 {
        (self.closed_total_us + self.opened_us.map_or(0, |opened| now_us - opened)) / MS_US
    }

    /// What the outcome reports of the holders: the most at once, and the unsafe window.
    pub fn report(&self, out: &mut BTreeMap<String, Value>, now_us: u64) {
        out.insert("max_concurrent_holders".into(), json!(self.max));
        out.insert("unsafe_window_ms".into(), json!(self.unsafe_window_ms(now_us)));
    }
}
