//! What the lease chapter's scenarios check and show: the properties a scenario can declare,
//! the inspector tables, the outcome fields and the "unsafe window" highlight. The world only
//! reads the participants [`super::lease_setup::build`] put in place.

use super::common::{always, finished_by, runner_holdings, HolderCount};
use super::property_library as library;
use crate::json;
use crate::kernel::collections::{VecMap, VecSet};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::Participant;
use crate::kernel::time::MS_US;
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::presentation::durations::seconds;
use crate::properties::PropertySpec;
use crate::protocols::job::Phase;
use crate::protocols::lease::fenced_resource::{FencedResource, ResourceDurable, WriteRecord};
use crate::protocols::lease::job_table::{JobDurable, JobTable};
use crate::protocols::lease::lease_msg::RejectReason;
use crate::protocols::lease::lease_store::{
    sequence_name, GrantKind, LeaseStore, StoreDurable, TokenSource, EARLIER_OWNER,
};
use crate::protocols::lease::lease_worker::{Coordination, Fencing, LeaseLock, LeaseWorker};
use crate::protocols::lease::payment_rail::{PaymentRail, RailDurable};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

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
            LeaseProperty::FenceMonotonic => library::fence_monotonic_spec(),
            LeaseProperty::TokensIncrease => library::tokens_increase_spec(),
            LeaseProperty::NoDoubleDebit => library::no_double_debit_spec(),
            LeaseProperty::NoDoublePayment => always(
                "no-double-payment",
                "The rail sends at most one job's worth of money and never pays the same step twice.",
            ),
            LeaseProperty::NoOverlappingGrants => always(
                "no-overlapping-grants",
                "The store never grants the lease while another owner's grant is still valid.",
            ),
            LeaseProperty::JobCompletes => library::job_completes_spec(),
        }
    }
}

/// Where everyone is, and what the scenario checks.
pub struct LeaseWorld {
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
    /// Report `conflicts` even without a job table (as 0), so the lock-free alternatives
    /// compare field by field.
    pub report_conflicts: bool,
    pub holders: HolderCount,
    /// How many of the ledger's writes the world has looked at, for its own narration.
    pub writes_seen: usize,
    /// The world's narration for the step just evaluated.
    pub notes: Vec<String>,
    /// Explain, where they happen, the double runs a lease does not prevent: an older
    /// holder's write landing after the new holder read the progress, and a copy that runs
    /// the job again after another copy finished it.
    pub explain_double_runs: bool,
    pub explainer: Explainer,
}

/// What the world has already explained, and the notes for the step it just evaluated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Explainer {
    /// Ledger writes already looked at.
    writes_seen: usize,
    /// Who believed they held the lease after the previous step.
    believers: Vec<NodeId>,
    notes: Vec<String>,
}

/// The player's highlight while two or more workers (`believers`) each believe they own
/// `lease`.
pub(super) fn unsafe_window_highlight(
    nodes: &Nodes<'_>,
    believers: &[NodeId],
    lease: &str,
) -> Option<String> {
    (believers.len() >= 2).then(|| {
        let names: Vec<&str> = believers.iter().map(|b| nodes.name(*b)).collect();
        format!(
            "Unsafe window: {} each believe they own {lease}",
            names.join(" and ")
        )
    })
}

/// What node `id` holds now: its live copy, or what it persisted while it is down.
fn held<'a, P: Participant>(
    nodes: &Nodes<'a>,
    id: Option<NodeId>,
    live: impl Fn(&'a P) -> &'a P::Durable,
) -> Option<&'a P::Durable> {
    let id = id?;
    nodes.live::<P>(id).map(live).or_else(|| nodes.durable::<P>(id))
}

impl LeaseWorld {
    fn store_durable<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a StoreDurable> {
        held::<LeaseStore>(nodes, self.store, |s| &s.durable)
    }

    fn live_store<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a LeaseStore> {
        nodes.live::<LeaseStore>(self.store?)
    }

    fn resource<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a ResourceDurable> {
        held::<FencedResource>(nodes, self.resource, |r| &r.durable)
    }

    fn rail<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a RailDurable> {
        held::<PaymentRail>(nodes, self.rail, |r| &r.durable)
    }

    fn jobs<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a JobDurable> {
        held::<JobTable>(nodes, self.jobs, |j| &j.durable)
    }

    fn believers(&self, nodes: &Nodes<'_>) -> Vec<NodeId> {
        self.workers
            .iter()
            .copied()
            .filter(|w| {
                nodes
                    .live::<LeaseWorker>(*w)
                    .is_some_and(LeaseWorker::believes_it_holds)
            })
            .collect()
    }

    /// The worker the store's row for the lease names, if that grant is still in force by the
    /// store's own clock: the store alone decides expiry, so a worker whose clock or pause
    /// says otherwise does not change the answer. A crashed store answers from its disk, which
    /// is what it will serve when it comes back. A released row has `expires_at = now()` of
    /// the release, so it grants nobody from then on.
    pub(super) fn granted_to(&self, nodes: &Nodes<'_>) -> Option<NodeId> {
        let store = self.store?;
        let row = self.store_durable(nodes)?.rows.get(self.lease.as_str())?;
        let store_now = nodes.local_now_us.get(store.index()).copied().unwrap_or(0);
        row.owner
            .filter(|_| !row.released && row.expires_at_us > store_now)
    }

    fn finished(nodes: &Nodes<'_>, worker: NodeId) -> bool {
        nodes.durable::<LeaseWorker>(worker).is_some_and(|d| d.finished)
    }

    fn paid_total(rail: &RailDurable) -> i64 {
        rail.payments.iter().filter(|p| p.applied).map(|p| p.amount).sum()
    }

    fn check(&self, p: LeaseProperty, nodes: &Nodes<'_>) -> bool {
        match p {
            LeaseProperty::FenceMonotonic => library::fence_monotonic(self.resource(nodes)),
            LeaseProperty::TokensIncrease => self.store_durable(nodes).is_none_or(|d| {
                let mut last: VecMap<&str, FencingToken> = VecMap::new();
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
            LeaseProperty::NoDoubleDebit => {
                library::no_double_debit(self.resource(nodes), self.opening_balance, self.job_total)
            }
            LeaseProperty::NoDoublePayment => self.rail(nodes).is_none_or(|r| {
                let mut paid_steps = VecSet::new();
                Self::paid_total(r) <= self.job_total
                    && r.payments
                        .iter()
                        .filter(|p| p.applied)
                        .all(|p| paid_steps.insert(p.step))
            }),
            LeaseProperty::NoOverlappingGrants => self
                .store_durable(nodes)
                .is_none_or(|d| d.overlapping_grants == 0),
            // A committed run key is the job done, even if the worker that committed it
            // crashed before it heard so.
            LeaseProperty::JobCompletes => {
                self.workers.iter().any(|w| Self::finished(nodes, *w))
                    || self.resource(nodes).is_some_and(|r| !r.runs.is_empty())
            }
        }
    }

    /// A refused write whose writer was granted the lease after the holder of the higher
    /// token: the numbers no longer follow the order of the grants (a deleted row restarted
    /// the counter), so the fence refused the newer holder. Says so at the refusal.
    fn narrate_inverted_refusals(&mut self, nodes: &Nodes<'_>) {
        let (Some(r), Some(store)) = (self.resource(nodes), self.store_durable(nodes)) else {
            return;
        };
        for w in r.writes.iter().skip(self.writes_seen) {
            let Some(RejectReason::StaleToken { token, highest, .. }) = &w.reason else {
                continue;
            };
            let Some(mine) = store
                .grants
                .iter()
                .rev()
                .find(|g| g.token == *token && g.owner == w.worker)
            else {
                continue;
            };
            // Its own renewal raised the token: it fenced itself out, a different story.
            let own_higher = store
                .grants
                .iter()
                .any(|g| g.owner == w.worker && g.token == *highest && g.at_us >= mine.at_us);
            let theirs = store
                .grants
                .iter()
                .rev()
                .find(|g| g.token == *highest && g.owner != w.worker);
            if let (false, Some(theirs)) = (own_higher, theirs) {
                if theirs.at_us < mine.at_us {
                    self.notes.push(format!(
                        "The refusal says {token} < {highest}, \"a newer holder exists\", but here the newer holder is {}: its grant came after {}'s. A deleted row restarted the counter, so the numbers no longer follow the order of the grants, and the fence sided with the older holder.",
                        nodes.name(w.worker),
                        nodes.name(theirs.owner)
                    ));
                }
            }
        }
        self.writes_seen = r.writes.len();
    }

    /// Notes on what the last step did that the participants cannot see themselves.
    fn explain(&mut self, nodes: &Nodes<'_>, believers: &[NodeId]) {
        let writes = self.resource(nodes).map_or(&[][..], |r| &r.writes[..]);
        for w in &writes[self.explainer.writes_seen.min(writes.len())..] {
            if let Some(note) = self.fencing_gap(nodes, w) {
                self.explainer.notes.push(note);
            }
        }
        self.explainer.writes_seen = writes.len();
        for b in believers {
            if !self.explainer.believers.contains(b) {
                if let Some(note) = self.repeat_run(nodes, *b) {
                    self.explainer.notes.push(note);
                }
            }
        }
        self.explainer.believers = believers.to_vec();
    }

    /// A fenced write that passes only because the newer holder's token has not reached
    /// the ledger yet, while that holder already works on this step: it will be done twice.
    fn fencing_gap(&self, nodes: &Nodes<'_>, w: &WriteRecord) -> Option<String> {
        let plan = &nodes.config::<LeaseWorker>(w.worker)?.plan;
        let fenced = match plan.fencing {
            Fencing::WritePredicate => true,
            Fencing::FirstWriteOnly => w.step == 1,
            _ => false,
        };
        if !w.accepted || !fenced || w.token < w.highest_before {
            return None;
        }
        self.workers.iter().find_map(|&other| {
            let o = nodes.live::<LeaseWorker>(other)?;
            let newer = o.belief.filter(|b| b.token > w.token)?.token;
            let step = match o.phase {
                Phase::Checking { step } | Phase::Working { step } | Phase::Writing { step } => step,
                _ => return None,
            };
            (o.believes_it_holds() && step <= w.step).then(|| {
                let (writer, holder) = (nodes.name(w.worker), nodes.name(other));
                format!(
                    "The predicate lets {writer}'s token {} through: {holder} holds {newer}, but {newer} has not reached the ledger yet. {holder} read the job's progress before this write landed, so it will do step {} again. This is the gap between a new holder's progress read and its first write.",
                    w.token, w.step
                )
            })
        })
    }

    /// A worker that just got the lease, will not ask how far the job got, and has no run
    /// key, while another copy already finished the job: it runs the job again.
    fn repeat_run(&self, nodes: &Nodes<'_>, worker: NodeId) -> Option<String> {
        let plan = &nodes.config::<LeaseWorker>(worker)?.plan;
        if plan.coordination() != Coordination::Lease || plan.check_progress || plan.run_key().is_some() {
            return None;
        }
        let done = self
            .workers
            .iter()
            .find(|&&o| o != worker && Self::finished(nodes, o))?;
        Some(format!(
            "{} already finished this job and let go of the lease, so the lease is free and {} runs the job a second time. A lease keeps copies from overlapping; it does not remember that a run happened.",
            nodes.name(*done),
            nodes.name(worker)
        ))
    }

    fn lease_table(&self, nodes: &Nodes<'_>, store: &StoreDurable) -> TableView {
        let store_now = self.store.map(|s| nodes.local_now_us[s.index()]).unwrap_or(0);
        let mut rows: Vec<Vec<String>> = store
            .rows
            .iter()
            .map(|(name, r)| {
                let left = if r.released {
                    "released".to_string()
                } else if r.expires_at_us > store_now {
                    seconds((r.expires_at_us - store_now) / MS_US)
                } else {
                    "expired".to_string()
                };
                let (owner, acquired, expires) = match r.owner {
                    Some(o) => (
                        nodes.name(o).to_string(),
                        seconds(r.acquired_at_us / MS_US),
                        seconds(r.expires_at_us / MS_US),
                    ),
                    None => (EARLIER_OWNER.to_string(), "earlier".into(), "earlier".into()),
                };
                vec![name.clone(), owner, r.token.to_string(), acquired, expires, left]
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
        TableView {
            title: "lease".into(),
            columns: columns(&[
                "name",
                "owner",
                "fence_token",
                "acquired_at",
                "expires_at",
                "TTL left",
            ]),
            rows,
        }
    }

    /// The last statement the store ran, with its values bound, and, with a sequence, the
    /// sequence's last value.
    fn statement_table(store: &LeaseStore) -> Option<TableView> {
        let last = store.last_statement.as_ref()?;
        let mut rows: Vec<Vec<String>> = last.sql.iter().map(|line| vec![line.clone()]).collect();
        rows.push(vec![format!(
            "{} — now() = {} by the store's clock",
            last.result,
            seconds(last.at_us / MS_US)
        )]);
        if store.config.tokens == TokenSource::Sequence {
            for (lease, value) in &store.durable.sequences {
                rows.push(vec![format!("{}: last value {value}", sequence_name(lease))]);
            }
        }
        Some(TableView {
            title: "last statement on lease".into(),
            columns: columns(&["SQL, values bound"]),
            rows,
        })
    }

    fn beliefs_table(&self, nodes: &Nodes<'_>) -> TableView {
        let mut beliefs = TableView {
            title: "what each worker believes".into(),
            columns: columns(&["worker", "holds it?", "token", "left by its clock", "doing"]),
            rows: Vec::new(),
        };
        for w in &self.workers {
            let name = nodes.name(*w).to_string();
            let row = match nodes.live::<LeaseWorker>(*w) {
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
                    vec![name, holds, token, left, worker.phase_text()]
                }
                None => vec![name, "no".into(), "—".into(), "—".into(), "down".into()],
            };
            beliefs.rows.push(row);
        }
        beliefs
    }

    fn ledger_tables(nodes: &Nodes<'_>, r: &ResourceDurable) -> Vec<TableView> {
        let account = library::account_state_table(r);
        let writes = TableView {
            title: "writes".into(),
            columns: columns(&["worker", "step", "token", "result"]),
            rows: r
                .writes
                .iter()
                .map(|w| {
                    let result = match (&w.reason, w.accepted, w.token < w.highest_before) {
                        (Some(reason), _, _) => format!("✗ rejected: {}", reason.text()),
                        (None, true, _) if w.carries_no_token() => "✓ accepted — no token to check".into(),
                        (None, true, true) => {
                            format!("✓ accepted — STALE ({} < {})", w.token, w.highest_before)
                        }
                        _ => "✓ accepted".into(),
                    };
                    vec![
                        nodes.name(w.worker).to_string(),
                        w.step.to_string(),
                        w.token_text(),
                        result,
                    ]
                })
                .collect(),
        };
        let mut tables = vec![account, writes];
        if !r.runs.is_empty() || r.run_conflicts > 0 {
            let mut rows: Vec<Vec<String>> = r
                .runs
                .iter()
                .map(|(k, who)| vec![k.clone(), format!("committed by {}", nodes.name(*who))])
                .collect();
            if r.run_conflicts > 0 {
                rows.push(vec![
                    "duplicate inserts".into(),
                    format!("{} rolled back", r.run_conflicts),
                ]);
            }
            tables.push(TableView {
                title: "job_run".into(),
                columns: columns(&["job_key", "state"]),
                rows,
            });
        }
        tables
    }

    pub(super) fn payments_table(nodes: &Nodes<'_>, r: &RailDurable) -> TableView {
        TableView {
            title: "payments".into(),
            columns: columns(&["from", "step", "amount", "idempotency key", "result"]),
            rows: r
                .payments
                .iter()
                .map(|p| {
                    vec![
                        nodes.name(p.from).to_string(),
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
        }
    }

    fn job_table(nodes: &Nodes<'_>, j: &JobDurable) -> TableView {
        let mut rows: Vec<Vec<String>> = j
            .runs
            .iter()
            .map(|(k, who)| {
                vec![
                    format!("job_run {k}"),
                    format!("inserted by {}", nodes.name(*who)),
                ]
            })
            .collect();
        rows.extend(j.claimed_by.iter().map(|(k, who)| {
            vec![
                format!("job {k}"),
                format!("running, claimed by {}", nodes.name(*who)),
            ]
        }));
        if rows.is_empty() {
            rows.push(vec!["job".into(), "pending".into()]);
        }
        TableView {
            title: "job table".into(),
            columns: columns(&["row", "state"]),
            rows,
        }
    }
}

impl World for LeaseWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        self.properties.iter().map(|p| p.spec()).collect()
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.narrate_inverted_refusals(nodes);
        let believers = self.believers(nodes);
        self.holders.observe(believers.len() as u32, nodes.now_us);
        if self.explain_double_runs {
            self.explain(nodes, &believers);
        }
        for p in &self.properties {
            out.push(self.check(*p, nodes));
        }
    }

    fn take_notes(&mut self) -> Vec<String> {
        let mut notes = std::mem::take(&mut self.notes);
        notes.append(&mut self.explainer.notes);
        notes
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        unsafe_window_highlight(nodes, &self.believers(nodes), &self.lease)
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        runner_holdings::<LeaseLock>(nodes, self.workers.iter().copied(), self.granted_to(nodes))
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let mut tables = Vec::new();
        if let Some(store) = self.store_durable(nodes) {
            tables.push(self.lease_table(nodes, store));
        }
        if let Some(statement) = self.live_store(nodes).and_then(Self::statement_table) {
            tables.push(statement);
        }
        tables.push(self.beliefs_table(nodes));
        if let Some(r) = self.resource(nodes) {
            tables.extend(Self::ledger_tables(nodes, r));
        }
        if let Some(r) = self.rail(nodes) {
            tables.push(Self::payments_table(nodes, r));
        }
        if let Some(j) = self.jobs(nodes) {
            tables.push(Self::job_table(nodes, j));
        }
        if let (Some(bucket_ms), Some(store)) = (self.histogram_bucket_ms, self.live_store(nodes)) {
            tables.push(histogram(&store.acquire_requests_us, bucket_ms));
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        if let Some(r) = self.resource(nodes) {
            let write =
                |w: &WriteRecord| write_entry(nodes.name(w.worker), w.token.0, w.step, w.reason.as_ref());
            let (accepted, rejected): (Vec<&WriteRecord>, Vec<&WriteRecord>) =
                r.writes.iter().partition(|w| w.accepted);
            out.insert(
                "accepted_writes".into(),
                serde_json::Value::Array(accepted.into_iter().map(write).collect()),
            );
            out.insert(
                "rejected_writes".into(),
                serde_json::Value::Array(rejected.into_iter().map(write).collect()),
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
        if let Some(store) = self.store_durable(nodes) {
            let grants: Vec<serde_json::Value> = store
                .grants
                .iter()
                .map(|g| {
                    let kind = match g.kind {
                        GrantKind::New => "new",
                        GrantKind::Renewal => "renewal",
                        GrantKind::Takeover => "takeover",
                    };
                    grant(nodes.name(g.owner), g.token.0, kind)
                })
                .collect();
            out.insert("grants".into(), serde_json::Value::Array(grants));
            out.insert("overlapping_grants".into(), json!(store.overlapping_grants));
        }
        match self.jobs(nodes) {
            Some(j) => {
                out.insert("conflicts".into(), json!(j.conflicts));
            }
            None if self.report_conflicts => {
                let rolled_back = self.resource(nodes).map_or(0, |r| r.run_conflicts);
                out.insert("conflicts".into(), json!(rolled_back));
            }
            None => {}
        }
        out.insert(
            "finished_by".into(),
            finished_by::<LeaseWorker>(nodes, &self.workers),
        );
        self.holders.report(&mut out, nodes.now_us);
        if let (Some(bucket_ms), Some(store)) = (self.histogram_bucket_ms, self.live_store(nodes)) {
            out.insert("acquire_requests".into(), json!(store.acquire_requests_us.len()));
            out.insert(
                "peak_requests_per_bucket".into(),
                json!(peak_per_bucket(&store.acquire_requests_us, bucket_ms)),
            );
        }
        out
    }
}

/// An `accepted_writes` or `rejected_writes` entry of the outcome.
fn write_entry(worker: &str, token: u64, step: u32, reason: Option<&RejectReason>) -> serde_json::Value {
    let mut v = json!({"worker": worker, "token": token, "step": step});
    if let Some(reason) = reason {
        v["reason"] = json!(reason.text());
    }
    v
}

/// An `accepted_writes` entry, as a scenario expects it.
pub fn accepted(worker: &str, token: u64, step: u32) -> serde_json::Value {
    write_entry(worker, token, step, None)
}

/// A `rejected_writes` entry: refused because the ledger had seen token `highest`.
pub fn rejected(worker: &str, token: u64, step: u32, highest: u64) -> serde_json::Value {
    let reason = RejectReason::StaleToken {
        token: FencingToken(token),
        highest: FencingToken(highest),
        by_writer: false,
    };
    write_entry(worker, token, step, Some(&reason))
}

/// A `grants` entry: `kind` is `new`, `renewal` or `takeover`.
pub fn grant(worker: &str, token: u64, kind: &str) -> serde_json::Value {
    json!({"worker": worker, "token": token, "kind": kind})
}

/// Acquire requests per time bucket (index = time / bucket width).
fn buckets(requests_us: &[u64], bucket_ms: u64) -> VecMap<u64, u32> {
    let mut buckets: VecMap<u64, u32> = VecMap::new();
    for t in requests_us {
        *buckets.get_or_insert_with(t / (bucket_ms * MS_US), Default::default) += 1;
    }
    buckets
}

/// The tallest bar of the acquire-request histogram: the most requests in one bucket.
fn peak_per_bucket(requests_us: &[u64], bucket_ms: u64) -> u32 {
    buckets(requests_us, bucket_ms)
        .values()
        .copied()
        .max()
        .unwrap_or(0)
}

/// Acquire requests per time bucket, as a table with a bar per bucket.
fn histogram(requests_us: &[u64], bucket_ms: u64) -> TableView {
    let rows = buckets(requests_us, bucket_ms)
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
        columns: columns(&["window", "requests", ""]),
        rows,
    }
}
