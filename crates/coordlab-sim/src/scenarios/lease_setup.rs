//! How a lease-chapter scenario is put together: one [`LeasePlan`] says who takes part and
//! what each worker does, and [`build`] adds the nodes in the chapter's fixed order — the
//! lease store, the workers, where their writes go (the ledger or the payment rail), the job
//! table if a worker claims through one — wires each worker to them, and sets the
//! [`LeaseWorld`] that checks the run. A scenario file is then its info, its expectation, its
//! parameters and its plan; the small helpers at the end serve its info and expectation.

use super::common::{int_param, HolderCount, WORKER_FAULTS};
use super::lease_world::{Explainer, LeaseProperty, LeaseWorld};
use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params};
use crate::kernel::collections::VecMap;
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease::fenced_resource::{FencedResource, LedgerIntro};
use crate::protocols::lease::job_table::JobTable;
use crate::protocols::lease::lease_store::{LeaseStore, ReleaseStyle, StoreConfig, TokenSource};
use crate::protocols::lease::lease_worker::{LeaseWorker, Sink, WorkerConfig, WorkerPlan};
use crate::protocols::lease::payment_rail::PaymentRail;
use crate::protocols::redis_locks::redis_job::JobDurable;
use serde_json::Value;

/// What a lease scenario file uses, in one `use super::lease_setup::prelude::*;`: the plan
/// and its builders, the properties, the beats' readers of the store and the ledger, and the
/// kernel and registry types every scenario names.
pub(super) mod prelude {
    pub(in crate::scenarios) use super::super::lease_table_beats::{
        acquire_requests, granted_to, grants, holders, released,
    };
    pub(in crate::scenarios) use super::super::lease_world::LeaseProperty::*;
    pub(in crate::scenarios) use super::super::{CheckQuestion, CourseNotes, Expectation, Listing, Params};
    pub(in crate::scenarios) use super::{
        build, chosen, count, expect, holds_if, int, off_on, worker, worker_pair, LeasePair, LeasePlan,
        StorePlan,
    };
    pub(in crate::scenarios) use crate::json;
    pub(in crate::scenarios) use crate::kernel::faults::Fault;
    pub(in crate::scenarios) use crate::kernel::ids::NodeId;
    pub(in crate::scenarios) use crate::kernel::setup::Setup;
    pub(in crate::scenarios) use crate::properties::Verdict::Holds;
    pub(in crate::scenarios) use crate::protocols::job::AMOUNT_PER_STEP;
    pub(in crate::scenarios) use crate::protocols::lease::lease_worker::{Fencing, Sink, WorkerPlan};
}

pub use super::property_library::{balance_after, OPENING_BALANCE};

/// Faults a user may inject on the lease store (more with [`StorePlan::clock_faults`]).
pub(super) const STORE_FAULTS: [FaultKind; 4] = [
    FaultKind::Pause,
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Network,
];
/// Faults a user may inject on the ledger or the rail: they are never down, only slow or cut off.
pub(super) const SINK_FAULTS: [FaultKind; 2] = [FaultKind::Pause, FaultKind::Network];

/// The lease store of a scenario.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StorePlan {
    /// The renewal bug: a renewal by the owner increments the token as if it were a takeover.
    pub renewal_increments_token: bool,
    /// How many tokens the store issued for the lease before the story starts: the table
    /// starts with an earlier run's expired row at this `fence_token`, so the first grant
    /// takes it over with the next one (32 makes it 33).
    pub tokens_issued: u64,
    /// Where tokens come from: the row's counter (the default) or a sequence per name.
    pub tokens: TokenSource,
    /// What a release does to the row: expire it, keeping its counter (the default), or
    /// delete it.
    pub release: ReleaseStyle,
    /// Whether a user may also step or skew the store's clock.
    pub clock_faults: bool,
}

impl StorePlan {
    /// A store that has already issued `tokens` tokens for the lease (32: the first grant
    /// gets 33), with the correct renewal rule.
    pub fn with_tokens_issued(tokens: u64) -> StorePlan {
        StorePlan {
            tokens_issued: tokens,
            ..StorePlan::default()
        }
    }
}

/// Who takes part in a lease scenario and what it checks.
pub struct LeasePlan {
    /// The lease store, the first node; `None` for a scenario that has none.
    pub store: Option<StorePlan>,
    /// The workers by display name, in order after the store. They share one job: the
    /// first one's lease, job key and sink are the scenario's.
    pub workers: Vec<(String, WorkerPlan)>,
    /// What a user may inject on each worker.
    pub worker_faults: &'static [FaultKind],
    /// The ledger's opening balance.
    pub opening_balance: i64,
    pub properties: Vec<LeaseProperty>,
    /// Bucket width (ms) of the acquire-request histogram; `None` to hide it.
    pub histogram_bucket_ms: Option<u64>,
    /// Whether the world explains the double runs a lease lets through where they happen
    /// (see [`LeaseWorld::explain_double_runs`]).
    pub explain_double_runs: bool,
}

impl Default for LeasePlan {
    /// A lease store, no workers yet, every worker fault, the usual opening balance, nothing
    /// checked.
    fn default() -> Self {
        LeasePlan {
            store: Some(StorePlan::default()),
            workers: Vec::new(),
            worker_faults: &WORKER_FAULTS,
            opening_balance: OPENING_BALANCE,
            properties: Vec::new(),
            histogram_bucket_ms: None,
            explain_double_runs: false,
        }
    }
}

/// Who a lease scenario's [`build`] added, by role.
#[derive(Clone, Debug)]
pub struct LeaseCast {
    /// The lease store, if the plan has one.
    pub store: Option<NodeId>,
    /// The workers, in the plan's order.
    pub workers: Vec<NodeId>,
    /// Where the workers write: the ledger (a fenced resource)...
    pub ledger: Option<NodeId>,
    /// ...or the payment rail.
    pub rail: Option<NodeId>,
    /// The job table, if a worker claims through one.
    pub jobs: Option<NodeId>,
}

impl LeaseCast {
    /// The lease store; for a plan that has one.
    pub fn store(&self) -> NodeId {
        self.store.expect("this lease scenario has a store")
    }

    /// The ledger; for a plan whose workers write to one.
    pub fn ledger(&self) -> NodeId {
        self.ledger.expect("this lease scenario writes to a ledger")
    }

    /// The story's two leading workers with the store and where they write, for beats to
    /// copy into their predicates; for a plan with a store and at least two workers.
    pub fn pair(&self) -> LeasePair {
        LeasePair {
            store: self.store(),
            a: self.workers[0],
            b: self.workers[1],
            sink: self.ledger.or(self.rail).expect("a worker writes somewhere"),
        }
    }
}

/// Workers A and B of a lease story, the store they ask and where they write.
#[derive(Clone, Copy, Debug)]
pub struct LeasePair {
    pub store: NodeId,
    pub a: NodeId,
    pub b: NodeId,
    /// The ledger, or the payment rail.
    pub sink: NodeId,
}

/// The participants, network and world of a lease scenario, and who they are. Faults it
/// scripts itself are added to the returned setup with [`Setup::script`].
pub fn build(plan: LeasePlan) -> (Setup, LeaseCast) {
    let job = plan
        .workers
        .first()
        .map(|(_, p)| p.clone())
        .expect("a lease scenario has at least one worker");
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let store = plan.store.map(|s| add_store(&mut setup, &s, &job.lease));
    // The workers come next, but their configuration names where they write and the job
    // table, added after them: their ids are reserved now and the workers placed last.
    let workers: Vec<NodeId> = plan.workers.iter().map(|_| setup.reserve()).collect();
    let (ledger, rail) = match job.sink() {
        Sink::Resource => {
            let (intro, ledger) = (
                LedgerIntro::RemembersHighest,
                FencedResource::initial(plan.opening_balance),
            );
            let id = setup.add::<FencedResource>("ledger", "resource", &SINK_FAULTS, intro, ledger);
            (Some(id), None)
        }
        Sink::Rail { .. } => {
            let rail = PaymentRail::initial();
            let id = setup.add::<PaymentRail>("payment-rail", "rail", &SINK_FAULTS, (), rail);
            (None, Some(id))
        }
    };
    let sink_node = ledger.or(rail).expect("a worker writes to a ledger or a rail");
    let needs_jobs = plan
        .workers
        .iter()
        .any(|(_, p)| p.coordination().needs_job_table());
    let jobs = needs_jobs
        .then(|| setup.add::<JobTable>("job-db", "job-table", &STORE_FAULTS, (), JobTable::initial()));
    for (&id, (name, worker_plan)) in workers.iter().zip(plan.workers) {
        // A claim in the job table replaces the lease. (A run key goes to the ledger, with
        // the debit it guards.)
        let authority = if worker_plan.coordination().needs_job_table() {
            jobs
        } else {
            store
        };
        let config = WorkerConfig::new(worker_plan, authority, sink_node);
        let fresh = JobDurable::default();
        setup.place::<LeaseWorker>(id, name, "worker", plan.worker_faults, config, fresh);
    }
    let cast = LeaseCast {
        store,
        workers,
        ledger,
        rail,
        jobs,
    };
    setup.set_world(LeaseWorld {
        store,
        workers: cast.workers.clone(),
        resource: ledger,
        rail,
        jobs,
        lease: job.lease.clone(),
        opening_balance: plan.opening_balance,
        job_total: job.job_total(),
        properties: plan.properties,
        histogram_bucket_ms: plan.histogram_bucket_ms,
        // The alternatives are compared by their conflicts, partitioning (no table) included;
        // so is a run key, by the transactions it rolled back.
        report_conflicts: job.coordination().is_alternative() || job.run_key().is_some(),
        holders: HolderCount::default(),
        writes_seen: 0,
        notes: Vec::new(),
        explain_double_runs: plan.explain_double_runs,
        explainer: Explainer::default(),
    });
    (setup, cast)
}

pub(super) fn add_store(setup: &mut Setup, plan: &StorePlan, lease: &str) -> NodeId {
    let mut faults = STORE_FAULTS.to_vec();
    if plan.clock_faults {
        faults.push(FaultKind::Clock);
    }
    let mut issued = VecMap::new();
    if plan.tokens_issued > 0 {
        issued.insert(lease.to_string(), FencingToken(plan.tokens_issued));
    }
    let config = StoreConfig {
        renewal_increments_token: plan.renewal_increments_token,
        tokens: plan.tokens,
        release: plan.release,
    };
    setup.add::<LeaseStore>(
        "lease-store",
        "lease-store",
        &faults,
        config,
        LeaseStore::initial(issued),
    )
}

/// A named worker for [`LeasePlan::workers`].
pub fn worker(name: impl Into<String>, plan: WorkerPlan) -> (String, WorkerPlan) {
    (name.into(), plan)
}

/// worker-A running `a`, and worker-B running the same job from `b_start_after_ms`: the
/// pair of a two-worker lease story.
pub fn worker_pair(a: WorkerPlan, b_start_after_ms: (u64, u64)) -> Vec<(String, WorkerPlan)> {
    let b = WorkerPlan {
        start_after_ms: b_start_after_ms,
        ..a.clone()
    };
    vec![worker("worker-A", a), worker("worker-B", b)]
}

/// Text compiled into the registry: a parameter's key, label, help or default.
type Text = &'static str;

/// A choice parameter whose first option is the default: `(value, label)` per option.
pub fn choice(key: Text, label: Text, help: Text, options: &[(Text, Text)]) -> ParamSpec {
    let default = options[0].0;
    let options = options
        .iter()
        .map(|&(value, label)| ChoiceOption { value, label })
        .collect();
    ParamSpec::new(key, label, help, default, ParamKind::Choice { options })
}

/// A choice between `off` (the default) and `on`, each with its label.
pub fn off_on(key: Text, label: Text, help: Text, off: Text, on: Text) -> ParamSpec {
    choice(key, label, help, &[("off", off), ("on", on)])
}

/// A duration parameter in milliseconds, from `min` to `max`.
pub fn millis(key: Text, label: Text, help: Text, default: Text, (min, max): (i64, i64)) -> ParamSpec {
    int_param(key, label, help, default, min, max, "ms")
}

/// A count parameter (no unit), from `min` to `max`.
pub fn count(key: Text, label: Text, help: Text, default: Text, (min, max): (i64, i64)) -> ParamSpec {
    int_param(key, label, help, default, min, max, "")
}

/// An integer parameter's value (validated before a scenario sees it).
pub fn int<T: std::str::FromStr + Default>(params: &Params, key: &str) -> T {
    params.get(key).and_then(|v| v.parse().ok()).unwrap_or_default()
}

/// Whether a choice parameter has the value `value`.
pub fn chosen(params: &Params, key: &str, value: &str) -> bool {
    params.get(key).is_some_and(|v| v == value)
}

/// An expectation from `(outcome key, value)` and `(property, verdict)` pairs, in order.
pub fn expect<'a, V: Into<Value>>(
    outcome: impl IntoIterator<Item = (&'a str, V)>,
    verdicts: impl IntoIterator<Item = (&'a str, Verdict)>,
) -> Expectation {
    Expectation {
        outcome: outcome
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect(),
        verdicts: verdicts.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    }
}

/// `Holds` if `ok`, else `Violated`.
pub fn holds_if(ok: bool) -> Verdict {
    if ok {
        Verdict::Holds
    } else {
        Verdict::Violated
    }
}
