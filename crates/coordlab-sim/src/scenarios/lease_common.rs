//! What the lease chapter's scenarios share: the participant enum (lease store, workers,
//! fenced ledger row, payment rail, job table), the properties, the inspector tables, the
//! outcome fields and the "unsafe window" highlight. Each scenario file only decides who
//! takes part, with which plan, and which properties it checks.

use crate::kernel::engine::{Nodes, World};
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::properties::{PropertyKind, PropertySpec};
use crate::protocols::fenced_resource::{FencedResource, ResourceDurable};
use crate::protocols::job_table::{JobDurable, JobTable};
use crate::protocols::lease_msg::{seconds, LeaseMsg};
use crate::protocols::lease_store::{GrantKind, LeaseStore, StoreConfig, StoreDurable};
use crate::protocols::lease_worker::{LeaseTimer, LeaseWorker, WorkerDurable, WorkerPlan};
use crate::protocols::payment_rail::{PaymentRail, RailDurable};
use crate::trace::{NodeInfo, TableView};
use serde_json::json;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub enum LeaseNode {
    Store(LeaseStore),
    Worker(LeaseWorker),
    Resource(FencedResource),
    Rail(PaymentRail),
    Jobs(JobTable),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseDurable {
    Store(StoreDurable, StoreConfig, Vec<String>),
    Worker(WorkerDurable),
    Resource(ResourceDurable, Vec<String>),
    Rail(RailDurable, Vec<String>),
    Jobs(JobDurable, Vec<String>),
}

impl From<WorkerDurable> for LeaseDurable {
    fn from(d: WorkerDurable) -> Self {
        LeaseDurable::Worker(d)
    }
}

// The configuration part of a durable value never changes after setup; the engine keeps the
// last persisted value per node, so these conversions carry placeholders that `persist_into`
// fills from the node's existing durable state.
impl From<StoreDurable> for LeaseDurable {
    fn from(d: StoreDurable) -> Self {
        LeaseDurable::Store(
            d,
            StoreConfig {
                renewal_increments_token: false,
            },
            Vec::new(),
        )
    }
}
impl From<ResourceDurable> for LeaseDurable {
    fn from(d: ResourceDurable) -> Self {
        LeaseDurable::Resource(d, Vec::new())
    }
}
impl From<RailDurable> for LeaseDurable {
    fn from(d: RailDurable) -> Self {
        LeaseDurable::Rail(d, Vec::new())
    }
}
impl From<JobDurable> for LeaseDurable {
    fn from(d: JobDurable) -> Self {
        LeaseDurable::Jobs(d, Vec::new())
    }
}

impl Participant for LeaseNode {
    type Msg = LeaseMsg;
    type Timer = LeaseTimer;
    type Durable = LeaseDurable;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        match self {
            LeaseNode::Worker(w) => w.start(ctx),
            LeaseNode::Store(s) => ctx.note(format!(
                "The lease store is up: one table, one row per lockable name; {} row(s) now.",
                s.durable.rows.len()
            )),
            LeaseNode::Resource(r) => ctx.note(format!(
                "The ledger holds account 42 at ₹{}. It remembers the highest fencing token any write has carried ({}).",
                r.durable.balance,
                if r.durable.last_token.0 == 0 {
                    "none yet".to_string()
                } else {
                    r.durable.last_token.to_string()
                }
            )),
            LeaseNode::Rail(_) => ctx.note(
                "The payment rail is up. It has never heard of leases or fencing tokens.",
            ),
            LeaseNode::Jobs(j) => ctx.note(match j.durable.runs.len() + j.durable.claimed_by.len() {
                0 => "The job table is up and nothing is claimed yet. A claim is one row, and the database alone decides who gets it.".to_string(),
                n => format!("The job table is up with {n} claimed job(s)."),
            }),
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        match self {
            LeaseNode::Store(s) => {
                let (config, names) = (s.config, s.names.clone());
                let expiry = relay(
                    ctx,
                    |c| s.handle(c, from, msg),
                    |d| match d {
                        LeaseDurable::Store(d, _, _) => LeaseDurable::Store(d, config, names.clone()),
                        other => other,
                    },
                );
                if let Some((timer, after_us)) = expiry {
                    ctx.set_timer(
                        LeaseTimer::Expiry {
                            lease: timer.lease,
                            token: timer.token,
                        },
                        after_us,
                    );
                }
            }
            LeaseNode::Worker(w) => w.message(ctx, from, msg),
            LeaseNode::Resource(r) => {
                let names = r.names.clone();
                relay(ctx, |c| r.handle(c, from, msg), |d| with_names(d, &names));
            }
            LeaseNode::Rail(r) => {
                let names = r.names.clone();
                relay(ctx, |c| r.handle(c, from, msg), |d| with_names(d, &names));
            }
            LeaseNode::Jobs(j) => {
                let names = j.names.clone();
                relay(ctx, |c| j.handle(c, from, msg), |d| with_names(d, &names));
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: LeaseTimer) {
        match (self, timer) {
            (LeaseNode::Store(s), LeaseTimer::Expiry { lease, token }) => {
                s.expiry_due(ctx, &crate::protocols::lease_store::ExpiryTimer { lease, token })
            }
            (LeaseNode::Worker(w), t) => w.timer(ctx, t),
            _ => {}
        }
    }

    fn recover(_id: NodeId, durable: &LeaseDurable) -> Self {
        match durable {
            LeaseDurable::Store(d, config, names) => {
                LeaseNode::Store(LeaseStore::recover(names.clone(), *config, d))
            }
            LeaseDurable::Worker(d) => LeaseNode::Worker(LeaseWorker::recover(d)),
            LeaseDurable::Resource(d, names) => LeaseNode::Resource(FencedResource {
                names: names.clone(),
                durable: d.clone(),
            }),
            LeaseDurable::Rail(d, names) => LeaseNode::Rail(PaymentRail {
                names: names.clone(),
                durable: d.clone(),
            }),
            LeaseDurable::Jobs(d, names) => LeaseNode::Jobs(JobTable {
                names: names.clone(),
                durable: d.clone(),
            }),
        }
    }

    fn summary(&self, local_now_us: u64) -> Vec<String> {
        match self {
            LeaseNode::Store(s) => s.summary(local_now_us),
            LeaseNode::Worker(w) => w.summary(local_now_us),
            LeaseNode::Resource(r) => r.summary(),
            LeaseNode::Rail(r) => r.summary(),
            LeaseNode::Jobs(j) => j.summary(),
        }
    }

    fn durable_summary(durable: &LeaseDurable) -> Vec<String> {
        match durable {
            LeaseDurable::Worker(d) => {
                vec![
                    "down".into(),
                    if d.finished {
                        "job done".into()
                    } else {
                        "job not done".into()
                    },
                ]
            }
            _ => vec!["down".into(), "state kept on disk".into()],
        }
    }
}

/// Runs a participant's handler under its own context, then re-emits its effects with the
/// persisted state completed by `fill` (see [`forward`]).
fn relay<R>(
    ctx: &mut Ctx<'_, LeaseNode>,
    run: impl FnOnce(&mut Ctx<'_, LeaseNode>) -> R,
    fill: impl Fn(LeaseDurable) -> LeaseDurable,
) -> R {
    let mut inner = Vec::new();
    let result = run(&mut Ctx::new(ctx.node, ctx.local_now_us, ctx.rng, &mut inner));
    forward(ctx, inner, fill);
    result
}

/// Puts the participant names back into a persisted resource, rail or job table.
fn with_names(d: LeaseDurable, names: &[String]) -> LeaseDurable {
    match d {
        LeaseDurable::Resource(d, _) => LeaseDurable::Resource(d, names.to_vec()),
        LeaseDurable::Rail(d, _) => LeaseDurable::Rail(d, names.to_vec()),
        LeaseDurable::Jobs(d, _) => LeaseDurable::Jobs(d, names.to_vec()),
        other => other,
    }
}

/// Re-emits effects collected under a participant-specific context, mapping persisted state
/// into this enum with its configuration.
fn forward(
    ctx: &mut Ctx<'_, LeaseNode>,
    effects: Vec<crate::kernel::participant::Effect<LeaseNode>>,
    fill: impl Fn(LeaseDurable) -> LeaseDurable,
) {
    use crate::kernel::participant::Effect;
    for e in effects {
        match e {
            Effect::Persist(d) => ctx.persist(fill(d)),
            Effect::Send { to, msg } => ctx.send(to, msg),
            Effect::SetTimer {
                timer,
                after_local_us,
            } => ctx.set_timer(timer, after_local_us),
            Effect::CancelTimer { timer } => ctx.cancel_timer(timer),
            Effect::Note(n) => ctx.note(n),
        }
    }
}

/// The checks a lease scenario can declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseProperty {
    FenceMonotonic,
    TokensIncrease,
    NoDoubleDebit,
    NoDoublePayment,
    NoOverlappingGrants,
    JobCompletes,
}

impl LeaseProperty {
    pub fn spec(self) -> PropertySpec {
        match self {
            LeaseProperty::FenceMonotonic => PropertySpec {
                name: "fence-monotonic",
                kind: PropertyKind::Always,
                description: "The ledger never accepts a write whose token is lower than the highest it has seen.",
            },
            LeaseProperty::TokensIncrease => PropertySpec {
                name: "tokens-increase",
                kind: PropertyKind::Always,
                description: "Each change of holder gets a higher token; a renewal keeps the token.",
            },
            LeaseProperty::NoDoubleDebit => PropertySpec {
                name: "no-double-debit",
                kind: PropertyKind::Always,
                description: "The account is debited at most once for the job: the legitimate holders' writes, nothing more.",
            },
            LeaseProperty::NoDoublePayment => PropertySpec {
                name: "no-double-payment",
                kind: PropertyKind::Always,
                description: "The rail sends at most one job's worth of money and never pays the same step twice.",
            },
            LeaseProperty::NoOverlappingGrants => PropertySpec {
                name: "no-overlapping-grants",
                kind: PropertyKind::Always,
                description: "The store never grants the lease while another owner's grant is still valid.",
            },
            LeaseProperty::JobCompletes => PropertySpec {
                name: "job-completes",
                kind: PropertyKind::Eventually,
                description: "Some worker finishes the job.",
            },
        }
    }
}

/// Where everyone is, and what the scenario checks.
pub struct LeaseWorld {
    pub names: Vec<String>,
    pub store: Option<NodeId>,
    pub workers: Vec<NodeId>,
    pub resource: Option<NodeId>,
    pub rail: Option<NodeId>,
    pub jobs: Option<NodeId>,
    pub lease: String,
    pub opening_balance: i64,
    pub job_total: i64,
    pub properties: Vec<LeaseProperty>,
    /// Bucket width for the acquire-request histogram (the stampede view); None to hide it.
    pub histogram_bucket_ms: Option<u64>,
    pub max_concurrent_holders: u32,
    /// When the current stretch of two or more believers began (true time).
    pub window_opened_us: Option<u64>,
    /// Total length of earlier, closed stretches.
    pub window_closed_total_us: u64,
}

impl LeaseWorld {
    fn store<'a>(
        &self,
        nodes: &'a Nodes<'_, LeaseNode>,
    ) -> Option<(Option<&'a LeaseStore>, &'a StoreDurable)> {
        let i = self.store?.index();
        let live = match &nodes.live[i] {
            Some(LeaseNode::Store(s)) => Some(s),
            _ => None,
        };
        match (&nodes.durable[i], live) {
            (_, Some(s)) => Some((Some(s), &s.durable)),
            (LeaseDurable::Store(d, ..), None) => Some((None, d)),
            _ => None,
        }
    }

    fn resource<'a>(&self, nodes: &'a Nodes<'_, LeaseNode>) -> Option<&'a ResourceDurable> {
        let i = self.resource?.index();
        match (&nodes.live[i], &nodes.durable[i]) {
            (Some(LeaseNode::Resource(r)), _) => Some(&r.durable),
            (_, LeaseDurable::Resource(d, _)) => Some(d),
            _ => None,
        }
    }

    fn rail<'a>(&self, nodes: &'a Nodes<'_, LeaseNode>) -> Option<&'a RailDurable> {
        let i = self.rail?.index();
        match (&nodes.live[i], &nodes.durable[i]) {
            (Some(LeaseNode::Rail(r)), _) => Some(&r.durable),
            (_, LeaseDurable::Rail(d, _)) => Some(d),
            _ => None,
        }
    }

    fn jobs<'a>(&self, nodes: &'a Nodes<'_, LeaseNode>) -> Option<&'a JobDurable> {
        let i = self.jobs?.index();
        match (&nodes.live[i], &nodes.durable[i]) {
            (Some(LeaseNode::Jobs(j)), _) => Some(&j.durable),
            (_, LeaseDurable::Jobs(d, _)) => Some(d),
            _ => None,
        }
    }

    fn worker<'a>(nodes: &'a Nodes<'_, LeaseNode>, id: NodeId) -> Option<&'a LeaseWorker> {
        match &nodes.live[id.index()] {
            Some(LeaseNode::Worker(w)) => Some(w),
            _ => None,
        }
    }

    fn believers(&self, nodes: &Nodes<'_, LeaseNode>) -> Vec<NodeId> {
        self.workers
            .iter()
            .copied()
            .filter(|w| Self::worker(nodes, *w).is_some_and(LeaseWorker::believes_it_holds))
            .collect()
    }

    fn name(&self, id: NodeId) -> String {
        self.names.get(id.index()).cloned().unwrap_or_default()
    }

    fn paid_total(rail: &RailDurable) -> i64 {
        rail.payments.iter().filter(|p| p.applied).map(|p| p.amount).sum()
    }

    fn check(&self, p: LeaseProperty, nodes: &Nodes<'_, LeaseNode>) -> bool {
        match p {
            LeaseProperty::FenceMonotonic => self.resource(nodes).is_none_or(|r| {
                r.writes
                    .iter()
                    .all(|w| !w.accepted || w.token >= w.highest_before)
            }),
            LeaseProperty::TokensIncrease => self.store(nodes).is_none_or(|(_, d)| {
                let mut last: BTreeMap<&str, FencingToken> = BTreeMap::new();
                d.grants.iter().all(|g| {
                    let ok = match (g.kind, last.get(g.lease.as_str())) {
                        (_, None) => true,
                        (GrantKind::Renewal, Some(prev)) => g.token == *prev,
                        (_, Some(prev)) => g.token > *prev,
                    };
                    last.insert(&g.lease, g.token);
                    ok
                })
            }),
            LeaseProperty::NoDoubleDebit => self
                .resource(nodes)
                .is_none_or(|r| r.balance >= self.opening_balance - self.job_total),
            LeaseProperty::NoDoublePayment => self.rail(nodes).is_none_or(|r| {
                let mut paid_steps = std::collections::BTreeSet::new();
                Self::paid_total(r) <= self.job_total
                    && r.payments
                        .iter()
                        .filter(|p| p.applied)
                        .all(|p| paid_steps.insert(p.step))
            }),
            LeaseProperty::NoOverlappingGrants => {
                self.store(nodes).is_none_or(|(_, d)| d.overlapping_grants == 0)
            }
            LeaseProperty::JobCompletes => self.workers.iter().any(|w| match &nodes.durable[w.index()] {
                LeaseDurable::Worker(d) => d.finished,
                _ => false,
            }),
        }
    }
}

impl World for LeaseWorld {
    type Node = LeaseNode;

    fn properties(&self) -> Vec<PropertySpec> {
        self.properties.iter().map(|p| p.spec()).collect()
    }

    fn evaluate(&mut self, nodes: &Nodes<'_, LeaseNode>, out: &mut Vec<bool>) {
        let holders = self.believers(nodes).len() as u32;
        self.max_concurrent_holders = self.max_concurrent_holders.max(holders);
        match (holders >= 2, self.window_opened_us) {
            (true, None) => self.window_opened_us = Some(nodes.now_us),
            (false, Some(opened)) => {
                self.window_closed_total_us += nodes.now_us - opened;
                self.window_opened_us = None;
            }
            _ => {}
        }
        for p in &self.properties {
            out.push(self.check(*p, nodes));
        }
    }

    fn highlight(&self, nodes: &Nodes<'_, LeaseNode>) -> Option<String> {
        let believers = self.believers(nodes);
        (believers.len() >= 2).then(|| {
            let names: Vec<String> = believers.iter().map(|b| self.name(*b)).collect();
            format!(
                "Unsafe window: {} each believe they own {}",
                names.join(" and "),
                self.lease
            )
        })
    }

    fn tables(&self, nodes: &Nodes<'_, LeaseNode>) -> Vec<TableView> {
        let mut tables = Vec::new();
        if let Some((_, store)) = self.store(nodes) {
            let store_now = self.store.map(|s| nodes.local_now_us[s.index()]).unwrap_or(0);
            let mut rows: Vec<Vec<String>> = store
                .rows
                .iter()
                .map(|(name, r)| {
                    let left = if r.expires_at_us > store_now {
                        seconds((r.expires_at_us - store_now) / MS_US)
                    } else {
                        "expired".to_string()
                    };
                    vec![
                        name.clone(),
                        self.name(r.owner),
                        r.token.to_string(),
                        seconds(r.acquired_at_us / MS_US),
                        seconds(r.expires_at_us / MS_US),
                        left,
                    ]
                })
                .collect();
            if rows.is_empty() {
                rows.push(vec![
                    self.lease.clone(),
                    "(no row)".into(),
                    "—".into(),
                    "—".into(),
                    "—".into(),
                    "—".into(),
                ]);
            }
            tables.push(TableView {
                title: "lease".into(),
                columns: [
                    "name",
                    "owner",
                    "fence_token",
                    "acquired_at",
                    "expires_at",
                    "TTL left",
                ]
                .map(String::from)
                .to_vec(),
                rows,
            });
        }
        let mut beliefs = TableView {
            title: "what each worker believes".into(),
            columns: ["worker", "holds it?", "token", "left by its clock", "doing"]
                .map(String::from)
                .to_vec(),
            rows: Vec::new(),
        };
        for w in &self.workers {
            let row = match Self::worker(nodes, *w) {
                Some(worker) => {
                    let now = nodes.local_now_us[w.index()];
                    let (holds, token, left) = match worker.belief {
                        Some(b) if worker.believes_it_holds() => (
                            "yes".to_string(),
                            if b.token.0 == 0 {
                                "—".into()
                            } else {
                                b.token.to_string()
                            },
                            if b.expires_local_us == u64::MAX {
                                "—".into()
                            } else if b.expires_local_us > now {
                                seconds((b.expires_local_us - now) / MS_US)
                            } else {
                                "0 s (still acting)".into()
                            },
                        ),
                        _ => ("no".into(), "—".into(), "—".into()),
                    };
                    vec![
                        worker.name.clone(),
                        holds,
                        token,
                        left,
                        worker.summary(now)[0].clone(),
                    ]
                }
                None => vec![self.name(*w), "no".into(), "—".into(), "—".into(), "down".into()],
            };
            beliefs.rows.push(row);
        }
        tables.push(beliefs);
        if let Some(r) = self.resource(nodes) {
            tables.push(TableView {
                title: "account_state".into(),
                columns: ["account_id", "balance", "last_token", "steps done"]
                    .map(String::from)
                    .to_vec(),
                rows: vec![vec![
                    "42".into(),
                    format!("₹{}", r.balance),
                    r.last_token.to_string(),
                    r.steps_done.to_string(),
                ]],
            });
            tables.push(TableView {
                title: "writes".into(),
                columns: ["worker", "step", "token", "result"].map(String::from).to_vec(),
                rows: r
                    .writes
                    .iter()
                    .map(|w| {
                        let result = match (&w.reason, w.accepted, w.token < w.highest_before) {
                            (Some(reason), _, _) => format!("✗ rejected: {}", reason.text()),
                            (None, true, true) => {
                                format!("✓ accepted — STALE ({} < {})", w.token, w.highest_before)
                            }
                            _ => "✓ accepted".into(),
                        };
                        vec![
                            self.name(w.worker),
                            w.step.to_string(),
                            w.token.to_string(),
                            result,
                        ]
                    })
                    .collect(),
            });
        }
        if let Some(r) = self.rail(nodes) {
            tables.push(TableView {
                title: "payments".into(),
                columns: ["from", "step", "amount", "idempotency key", "result"]
                    .map(String::from)
                    .to_vec(),
                rows: r
                    .payments
                    .iter()
                    .map(|p| {
                        vec![
                            self.name(p.from),
                            p.step.to_string(),
                            format!("₹{}", p.amount),
                            p.key.clone().unwrap_or_else(|| "—".into()),
                            if p.applied {
                                "✓ sent".into()
                            } else {
                                "✗ replay, ignored".into()
                            },
                        ]
                    })
                    .collect(),
            });
        }
        if let Some(j) = self.jobs(nodes) {
            let mut rows: Vec<Vec<String>> = j
                .runs
                .iter()
                .map(|(k, who)| vec![format!("job_run {k}"), format!("inserted by {}", self.name(*who))])
                .collect();
            rows.extend(j.claimed_by.iter().map(|(k, who)| {
                vec![
                    format!("job {k}"),
                    format!("running, claimed by {}", self.name(*who)),
                ]
            }));
            if rows.is_empty() {
                rows.push(vec!["job".into(), "pending".into()]);
            }
            tables.push(TableView {
                title: "job table".into(),
                columns: vec!["row".into(), "state".into()],
                rows,
            });
        }
        if let (Some(bucket_ms), Some((Some(store), _))) = (self.histogram_bucket_ms, self.store(nodes)) {
            tables.push(histogram(&store.acquire_requests_us, bucket_ms));
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_, LeaseNode>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        if let Some(r) = self.resource(nodes) {
            let write = |w: &crate::protocols::fenced_resource::WriteRecord| {
                let mut v = json!({"worker": self.name(w.worker), "token": w.token.0, "step": w.step});
                if let Some(reason) = &w.reason {
                    v["reason"] = json!(reason.text());
                }
                v
            };
            out.insert(
                "accepted_writes".into(),
                json!(r
                    .writes
                    .iter()
                    .filter(|w| w.accepted)
                    .map(write)
                    .collect::<Vec<_>>()),
            );
            out.insert(
                "rejected_writes".into(),
                json!(r
                    .writes
                    .iter()
                    .filter(|w| !w.accepted)
                    .map(write)
                    .collect::<Vec<_>>()),
            );
            out.insert("balance".into(), json!(r.balance));
        }
        if let Some(r) = self.rail(nodes) {
            out.insert("paid_total".into(), json!(Self::paid_total(r)));
            out.insert(
                "payments_sent".into(),
                json!(r.payments.iter().filter(|p| p.applied).count()),
            );
            out.insert(
                "replays_recognised".into(),
                json!(r.payments.iter().filter(|p| !p.applied).count()),
            );
        }
        if let Some((_, store)) = self.store(nodes) {
            let grants: Vec<serde_json::Value> = store
                .grants
                .iter()
                .map(|g| {
                    let kind = match g.kind {
                        GrantKind::New => "new",
                        GrantKind::Renewal => "renewal",
                        GrantKind::Takeover => "takeover",
                    };
                    json!({"worker": self.name(g.owner), "token": g.token.0, "kind": kind})
                })
                .collect();
            out.insert("grants".into(), json!(grants));
            out.insert("overlapping_grants".into(), json!(store.overlapping_grants));
        }
        if let Some(j) = self.jobs(nodes) {
            out.insert("conflicts".into(), json!(j.conflicts));
        }
        let finished: Vec<String> = self
            .workers
            .iter()
            .filter(|w| matches!(&nodes.durable[w.index()], LeaseDurable::Worker(d) if d.finished))
            .map(|w| self.name(*w))
            .collect();
        out.insert("finished_by".into(), json!(finished));
        out.insert(
            "max_concurrent_holders".into(),
            json!(self.max_concurrent_holders),
        );
        // How long two or more workers at once believed they held the lease, in total.
        let open_us = self.window_opened_us.map_or(0, |opened| nodes.now_us - opened);
        out.insert(
            "unsafe_window_ms".into(),
            json!((self.window_closed_total_us + open_us) / MS_US),
        );
        if let (Some(bucket_ms), Some((Some(store), _))) = (self.histogram_bucket_ms, self.store(nodes)) {
            out.insert("acquire_requests".into(), json!(store.acquire_requests_us.len()));
            out.insert(
                "peak_requests_per_bucket".into(),
                json!(peak_per_bucket(&store.acquire_requests_us, bucket_ms)),
            );
        }
        out
    }
}

/// The tallest bar of the acquire-request histogram: the most requests in one bucket.
fn peak_per_bucket(requests_us: &[u64], bucket_ms: u64) -> u32 {
    let mut buckets: BTreeMap<u64, u32> = BTreeMap::new();
    for t in requests_us {
        *buckets.entry(t / (bucket_ms * MS_US)).or_default() += 1;
    }
    buckets.values().copied().max().unwrap_or(0)
}

/// Acquire requests per time bucket, as a table with a bar per bucket.
fn histogram(requests_us: &[u64], bucket_ms: u64) -> TableView {
    let mut buckets: BTreeMap<u64, u32> = BTreeMap::new();
    for t in requests_us {
        *buckets.entry(t / (bucket_ms * MS_US)).or_default() += 1;
    }
    let rows = buckets
        .iter()
        .map(|(b, n)| {
            let from_ms = b * bucket_ms;
            vec![
                format!("{}–{}", seconds(from_ms), seconds(from_ms + bucket_ms)),
                n.to_string(),
                "█".repeat(*n as usize),
            ]
        })
        .collect();
    TableView {
        title: format!("acquire requests per {} ms", bucket_ms),
        columns: vec!["window".into(), "requests".into(), "".into()],
        rows,
    }
}

/// Faults a user may inject on a lease worker.
pub const WORKER_FAULTS: [FaultKind; 5] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
    FaultKind::Clock,
];

/// How a scenario introduces participant `id`.
pub fn node_info(names: &[String], id: NodeId, kind: &str, faults: Vec<FaultKind>) -> NodeInfo {
    NodeInfo {
        id,
        name: names[id.index()].clone(),
        kind: kind.into(),
        faults,
    }
}

/// A fresh worker with its plan, and the durable state it starts from.
pub fn worker_node(name: &str, plan: WorkerPlan) -> (LeaseNode, LeaseDurable) {
    let d = WorkerDurable {
        name: name.to_string(),
        plan,
        finished: false,
    };
    (
        LeaseNode::Worker(LeaseWorker::recover(&d)),
        LeaseDurable::Worker(d),
    )
}

/// A lease store whose per-lease token sequences start at `last_tokens`.
pub fn store_node(
    names: &[String],
    config: StoreConfig,
    last_tokens: BTreeMap<String, FencingToken>,
) -> (LeaseNode, LeaseDurable) {
    let store = LeaseStore::new(names.to_vec(), config, last_tokens);
    let durable = LeaseDurable::Store(store.durable.clone(), config, names.to_vec());
    (LeaseNode::Store(store), durable)
}

/// The fenced ledger row with its opening balance.
pub fn ledger_node(names: &[String], opening_balance: i64) -> (LeaseNode, LeaseDurable) {
    let ledger = FencedResource::new(names.to_vec(), opening_balance);
    let durable = LeaseDurable::Resource(ledger.durable.clone(), names.to_vec());
    (LeaseNode::Resource(ledger), durable)
}

/// A payment rail that knows no tokens.
pub fn rail_node(names: &[String]) -> (LeaseNode, LeaseDurable) {
    let rail = PaymentRail::new(names.to_vec());
    let durable = LeaseDurable::Rail(rail.durable.clone(), names.to_vec());
    (LeaseNode::Rail(rail), durable)
}

/// A job table for the lock-free alternatives.
pub fn jobs_node(names: &[String]) -> (LeaseNode, LeaseDurable) {
    let jobs = JobTable::new(names.to_vec());
    let durable = LeaseDurable::Jobs(jobs.durable.clone(), names.to_vec());
    (LeaseNode::Jobs(jobs), durable)
}
