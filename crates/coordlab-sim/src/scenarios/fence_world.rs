//! What the `services` bundle's lease stories check and show: the lease tables, what each
//! worker believes, the ledger, and four properties — one holder at a time, no step debited
//! twice, no stale write landing, and the job finishing.

use super::common::{always, down_worker_row, finished_by, runner_holdings};
use super::property_library as library;
use crate::json;
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::properties::PropertySpec;
use crate::protocols::lease::fence_worker::{FenceLock, FencePlan, FenceWorker, FenceWorkerConfig};
use crate::protocols::lease::fenced_resource::{LedgerIntro, ResourceDurable};
use crate::protocols::lease::placed_lease::{PlacedDurable, PlacedGrant, PlacedLease};
use crate::protocols::redis_locks::redis_job::JobDurable;
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceProperty {
    OneHolder,
    OneGrant,
    NoDoubleDebit,
    NoStaleWrite,
    TokensUnique,
    JobCompletes,
}

impl FenceProperty {
    pub fn spec(self) -> PropertySpec {
        match self {
            FenceProperty::OneHolder => always(
                "one-holder",
                "At most one worker at a time believes it holds the lease.",
            ),
            FenceProperty::OneGrant => always(
                "one-grant",
                "The lease is never granted while another worker's grant is unexpired, counting every table.",
            ),
            FenceProperty::NoDoubleDebit => library::no_double_debit_spec(),
            FenceProperty::NoStaleWrite => library::no_stale_write_spec(),
            FenceProperty::TokensUnique => always(
                "tokens-unique",
                "No token is handed to two different holders, by any copy of the store.",
            ),
            FenceProperty::JobCompletes => library::job_completes_spec(),
        }
    }
}

/// Workers A and B of a fencing story and the ledger they write to.
#[derive(Clone, Copy, Debug)]
pub struct FenceCast {
    pub a: NodeId,
    pub b: NodeId,
    pub ledger: NodeId,
}

impl FenceCast {
    /// Reserves the ids of workers A and B, first in every fencing story, and adds the ledger
    /// after them. The workers name their lease tables, added next: [`FenceCast::place`]
    /// puts each worker in once those exist.
    pub fn reserve(setup: &mut Setup, intro: LedgerIntro, opening_balance: i64) -> FenceCast {
        let [a, b] = [setup.reserve(), setup.reserve()];
        let ledger = library::add_ledger(setup, intro, opening_balance);
        FenceCast { a, b, ledger }
    }

    /// Puts worker `id` (A or B), not yet finished, in its reserved place.
    pub fn place(setup: &mut Setup, id: NodeId, name: &str, faults: &[FaultKind], config: FenceWorkerConfig) {
        let fresh = JobDurable::default();
        setup.place::<FenceWorker>(id, name, "worker", faults, FencePlan::from(config), fresh);
    }
}

/// The token worker `w` was granted, while it still believes it holds the lease: what the
/// fencing stories' beats wait on (a worker that knows it lost the lease shows none).
pub fn held_token(n: &Nodes<'_>, w: NodeId) -> Option<u64> {
    n.live::<FenceWorker>(w)
        .filter(|f| f.believes_it_holds())
        .and_then(|f| f.granted)
        .map(|t| t.0)
}

pub struct FenceWorld {
    /// The lease tables, primary first.
    pub stores: Vec<NodeId>,
    pub workers: Vec<NodeId>,
    pub ledger: NodeId,
    pub opening_balance: i64,
    pub job_total: i64,
    pub properties: Vec<FenceProperty>,
    pub max_holders: u32,
    /// For each ledger write seen so far, when its writer had last been granted the lease
    /// (read right after the write, so a later grant does not change it).
    pub write_grants: Vec<Option<u64>>,
}

impl FenceWorld {
    /// The world of a story whose two workers are `cast`'s A and B, writing to its ledger,
    /// before anything has run: no holder seen yet, no ledger write matched to a grant.
    pub fn for_cast(
        cast: FenceCast,
        stores: Vec<NodeId>,
        opening_balance: i64,
        job_total: i64,
        properties: Vec<FenceProperty>,
    ) -> FenceWorld {
        FenceWorld {
            stores,
            workers: vec![cast.a, cast.b],
            ledger: cast.ledger,
            opening_balance,
            job_total,
            properties,
            max_holders: 0,
            write_grants: Vec::new(),
        }
    }

    fn ledger<'a>(&self, n: &Nodes<'a>) -> Option<&'a ResourceDurable> {
        library::ledger_row(n, self.ledger)
    }

    fn table<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a PlacedDurable> {
        n.live::<PlacedLease>(id)
            .map(|s| &s.durable)
            .or_else(|| n.durable::<PlacedLease>(id))
    }

    /// Every grant any lease table has made, primary's first: the grant properties and the
    /// ledger's write-to-grant matching all look across tables, since a failover's copy
    /// may grant the same name again.
    fn grants<'s, 'a: 's>(&'s self, n: &'s Nodes<'a>) -> impl Iterator<Item = &'a PlacedGrant> + 's {
        self.stores
            .iter()
            .filter_map(move |s| Self::table(n, *s))
            .flat_map(|t| t.grants.iter())
    }

    fn believers(&self, n: &Nodes<'_>) -> Vec<NodeId> {
        self.workers
            .iter()
            .copied()
            .filter(|w| {
                n.live::<FenceWorker>(*w)
                    .is_some_and(FenceWorker::believes_it_holds)
            })
            .collect()
    }

    /// When `worker` was first granted the lease (store clock), over every table.
    fn granted_at(&self, n: &Nodes<'_>, worker: NodeId) -> Option<u64> {
        self.grants(n)
            .filter(|g| g.owner == worker)
            .map(|g| g.at_us)
            .max()
    }

    fn stale_write_landed(&self, n: &Nodes<'_>) -> bool {
        let Some(r) = self.ledger(n) else { return false };
        let mut newest: Option<u64> = None;
        for (w, at) in r.writes.iter().zip(&self.write_grants) {
            let at = *at;
            if let (true, Some(at), Some(newest)) = (w.accepted, at, newest) {
                if at < newest {
                    return true;
                }
            }
            newest = newest.max(at);
        }
        false
    }

    fn check(&self, p: FenceProperty, n: &Nodes<'_>) -> bool {
        match p {
            FenceProperty::OneHolder => self.believers(n).len() <= 1,
            FenceProperty::NoDoubleDebit => {
                library::no_double_debit(self.ledger(n), self.opening_balance, self.job_total)
            }
            FenceProperty::NoStaleWrite => !self.stale_write_landed(n),
            FenceProperty::OneGrant => {
                let grants: Vec<_> = self.grants(n).collect();
                grants.iter().all(|g| {
                    grants
                        .iter()
                        .all(|h| h.owner == g.owner || h.at_us > g.at_us || h.expires_at_us <= g.at_us)
                })
            }
            FenceProperty::TokensUnique => {
                let grants: Vec<_> = self.grants(n).collect();
                grants
                    .iter()
                    .all(|g| grants.iter().all(|h| g.token != h.token || g.owner == h.owner))
            }
            FenceProperty::JobCompletes => self
                .workers
                .iter()
                .any(|w| n.durable::<FenceWorker>(*w).is_some_and(|d| d.finished)),
        }
    }
}

impl World for FenceWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        self.properties.iter().map(|p| p.spec()).collect()
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.max_holders = self.max_holders.max(self.believers(nodes).len() as u32);
        if let Some(r) = self.ledger(nodes) {
            for w in r.writes.iter().skip(self.write_grants.len()) {
                // The grant whose token the write carries, if it is the writer's own (a write
                // may arrive after its writer was granted again); else the writer's latest.
                let own = self
                    .grants(nodes)
                    .filter(|g| g.owner == w.worker && g.token == w.token)
                    .map(|g| g.at_us)
                    .max();
                let at = own.or_else(|| self.granted_at(nodes, w.worker));
                self.write_grants.push(at);
            }
        }
        for p in &self.properties {
            out.push(self.check(*p, nodes));
        }
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        let b = self.believers(nodes);
        (b.len() >= 2).then(|| {
            let names: Vec<&str> = b.iter().map(|w| nodes.name(*w)).collect();
            format!(
                "Two holders: {} each believe they hold the lease",
                names.join(" and ")
            )
        })
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        // The shared primary's row names the holder the store would stand by.
        let granted = self.stores.first().and_then(|s| {
            let row = &Self::table(nodes, *s)?.row;
            let now = nodes.local_now_us.get(s.index()).copied().unwrap_or(0);
            row.owner.filter(|_| row.expires_at_us > now)
        });
        runner_holdings::<FenceLock>(nodes, self.workers.iter().copied(), granted)
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let mut tables = Vec::new();
        let rows = self
            .stores
            .iter()
            .filter_map(|s| {
                let t = Self::table(nodes, *s)?;
                let now = nodes.local_now_us.get(s.index()).copied().unwrap_or(0);
                let left = if t.row.owner.is_some() && t.row.expires_at_us > now {
                    crate::presentation::durations::seconds((t.row.expires_at_us - now) / 1_000)
                } else {
                    "expired".into()
                };
                let up = if nodes.is_live(*s) { "" } else { " (down)" };
                Some(vec![
                    format!("{}{up}", nodes.name(*s)),
                    t.row
                        .owner
                        .map_or("earlier-run".into(), |o| nodes.name(o).to_string()),
                    t.row.token.to_string(),
                    left,
                ])
            })
            .collect();
        tables.push(TableView {
            title: "lease row, as each copy has it".into(),
            columns: columns(&["table", "owner", "fence_token", "TTL left"]),
            rows,
        });
        tables.push(TableView {
            title: "what each worker believes".into(),
            columns: columns(&["worker", "holds it?", "doing"]),
            rows: self
                .workers
                .iter()
                .map(|w| match nodes.live::<FenceWorker>(*w) {
                    Some(fw) => vec![
                        nodes.name(*w).to_string(),
                        if fw.believes_it_holds() { "yes" } else { "no" }.into(),
                        fw.status_text(),
                    ],
                    None => down_worker_row(nodes.name(*w), 0),
                })
                .collect(),
        });
        if let Some(r) = self.ledger(nodes) {
            tables.push(library::account_state_table(r));
            tables.push(TableView {
                title: "writes".into(),
                columns: columns(&["worker", "step", "fence", "result"]),
                rows: r
                    .writes
                    .iter()
                    .map(|w| {
                        vec![
                            nodes.name(w.worker).to_string(),
                            w.step.to_string(),
                            w.token.to_string(),
                            if w.accepted {
                                "✓ accepted".into()
                            } else {
                                format!("✗ refused: {} > {}", w.highest_before, w.token)
                            },
                        ]
                    })
                    .collect(),
            });
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        if let Some(r) = self.ledger(nodes) {
            let entry = |w: &crate::protocols::lease::fenced_resource::WriteRecord| json!({"worker": nodes.name(w.worker), "token": w.token.0, "step": w.step});
            out.insert(
                "accepted_writes".into(),
                r.writes.iter().filter(|w| w.accepted).map(entry).collect(),
            );
            out.insert(
                "rejected_writes".into(),
                r.writes.iter().filter(|w| !w.accepted).map(entry).collect(),
            );
            out.insert("balance".into(), json!(r.balance));
        }
        let grants: Vec<serde_json::Value> = self
            .stores
            .iter()
            .filter_map(|s| Some((s, Self::table(nodes, *s)?)))
            .flat_map(|(s, t)| {
                t.grants.iter().map(move |g| {
                    json!({"worker": nodes.name(g.owner), "token": g.token.0, "table": nodes.name(*s)})
                })
            })
            .collect();
        out.insert("grants".into(), grants.into());
        out.insert(
            "finished_by".into(),
            finished_by::<FenceWorker>(nodes, &self.workers),
        );
        out.insert("max_concurrent_holders".into(), json!(self.max_holders));
        out
    }
}
