//! What a worker is told to do: how it coordinates, how it guards its writes, what it does
//! when refused, and the timing of its job. A scenario starts from [`WorkerPlan::leased`]
//! (the correct design) or [`WorkerPlan::without_lease`] and states only what its story
//! changes.

use crate::kernel::ids::NodeId;
use crate::protocols::job::{plans_job, AMOUNT_PER_STEP};
use crate::protocols::lease::lease_msg::ReleaseMode;
use crate::protocols::redis_locks::redis_job::JobPlan;

/// Whether this build runs a scenario whose workers coordinate without a lease or record a run
/// key (chapter 2's, in the `leases` bundle), and one whose workers pay through a rail (the
/// `unfenceable` bundle). A bundle without one leaves those ways of the worker out of its code,
/// narration and all: none of its scenarios plans them (`plan::tests` checks every scenario
/// against its bundle). The simulator's default build has every bundle, and so every way.
const RUNS_ALTERNATIVES: bool = cfg!(feature = "leases");
const RUNS_RAIL: bool = cfg!(feature = "unfenceable");

/// How a worker makes sure it is the only one doing the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coordination {
    /// Nothing: it just runs.
    None,
    /// A lease from the lease store.
    Lease,
    /// Insert a row keyed by the job; a unique-constraint conflict means someone else has it.
    UniqueInsert,
    /// `UPDATE job SET state='running' WHERE state='pending'`: one row means the work is mine.
    ConditionalClaim,
    /// The job's key is routed to exactly one consumer; `owns` says whether that is this one.
    Partition { owns: bool },
}

impl Coordination {
    /// Whether a job table decides who runs the job (a unique insert or a conditional claim).
    /// (Never in a build without the alternatives: see [`RUNS_ALTERNATIVES`].)
    pub fn needs_job_table(self) -> bool {
        RUNS_ALTERNATIVES && matches!(self, Coordination::UniqueInsert | Coordination::ConditionalClaim)
    }

    /// Whether this is one of the lock-free alternatives to a lease.
    pub fn is_alternative(self) -> bool {
        self.needs_job_table() || (RUNS_ALTERNATIVES && matches!(self, Coordination::Partition { .. }))
    }
}

/// How each write to the protected resource is guarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fencing {
    None,
    /// The token check is a predicate of the write itself.
    WritePredicate,
    /// Read `last_token`, compare in application code, then write unchecked.
    AppCheck,
    /// Only step 1 carries the predicate.
    FirstWriteOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnReject {
    /// Correct: a rejected fence means a newer owner exists. Stop.
    Abort,
    /// The mistake: get the lease back and carry on from the rejected step.
    ReacquireAndContinue,
    /// Another mistake: count the step as failed, log it, and go on to the next one, as a
    /// batch job does with steps it thinks are independent.
    SkipStep,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// The fenced ledger row.
    Resource,
    /// A payment rail that knows no tokens; optionally with a deterministic idempotency key.
    Rail { idempotency_key: bool },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerPlan {
    pub coordination: Coordination,
    /// Where the job's writes go: the ledger row or the rail.
    pub sink: Sink,
    pub lease: String,
    /// The job's key: what a job table or a partition decides on, and what an idempotency
    /// key is derived from.
    pub job_key: String,
    pub ttl_ms: u64,
    /// 0: never renews.
    pub heartbeat_ms: u64,
    /// When the job fires, a seeded draw from this range (ms).
    pub start_after_ms: (u64, u64),
    /// 0: a denied acquire means back off for good; otherwise poll this often (ms).
    pub retry_ms: u64,
    /// Up to this much random extra wait per retry (ms); 0 for none.
    pub retry_jitter_ms: u64,
    pub steps: u32,
    pub step_ms: u64,
    pub amount_per_step: i64,
    pub fencing: Fencing,
    pub on_reject: OnReject,
    /// `None`: never releases (the lease simply expires).
    pub release: Option<ReleaseMode>,
    /// Release even after stopping early — a `finally` block.
    pub release_in_finally: bool,
    /// Mark the protected row with the current token on every renewal.
    pub touch_on_heartbeat: bool,
    /// Judge the lease by the worker's own clock before each step.
    pub check_clock_before_step: bool,
    /// With `check_clock_before_step`: `None` starts a step while any of the lease is left;
    /// `Some(m)` starts one only if, by its own clock, the step would end more than `m` ms
    /// before the lease does (a safety margin for its clock being wrong).
    pub finish_margin_ms: Option<u64>,
    /// After a fresh grant, ask the sink how far the job got and continue from there
    /// (taking over a half-finished job, or finding it already done).
    pub check_progress: bool,
    /// Fence on takeover: after a fresh grant, first stamp the ledger row with the new token
    /// and read it back, and only then read the progress. Without it an older holder's write
    /// can still land between the progress read and this worker's first write.
    pub stamp_before_progress: bool,
    /// This run's key (e.g. the job and its date), inserted into `job_run` in the same
    /// transaction as the write that completes the job, on the ledger's database: a key
    /// already there rolls the write back (the run happened; the worker lets go), and a crash
    /// before the commit leaves neither, so another copy may run the job later.
    pub run_key: Option<String>,
}

impl WorkerPlan {
    /// A worker that does the job under lease `lease` the way the lease chapter teaches: a
    /// 30 s lease renewed every 10 s, the token in every write's predicate, a refusal taken
    /// as final, progress read before starting (without stamping the row first: see
    /// [`WorkerPlan::stamp_before_progress`]), and a compare-and-delete release at the end. Its job fires in
    /// the first 100 ms, polls every 5 s while the lease is held elsewhere, and is four steps
    /// of 4 s that debit ₹10 each. The job is known by the lease's name.
    pub fn leased(lease: &str) -> WorkerPlan {
        WorkerPlan {
            coordination: Coordination::Lease,
            sink: Sink::Resource,
            lease: lease.to_string(),
            job_key: lease.to_string(),
            ttl_ms: 30_000,
            heartbeat_ms: 10_000,
            start_after_ms: (0, 100),
            retry_ms: 5_000,
            retry_jitter_ms: 0,
            steps: 4,
            step_ms: 4_000,
            amount_per_step: AMOUNT_PER_STEP,
            fencing: Fencing::WritePredicate,
            on_reject: OnReject::Abort,
            release: Some(ReleaseMode::CompareAndDelete),
            release_in_finally: false,
            touch_on_heartbeat: false,
            check_clock_before_step: false,
            finish_margin_ms: None,
            check_progress: true,
            stamp_before_progress: false,
            run_key: None,
        }
    }

    /// A worker that takes no lease: `coordination` (a unique insert, a conditional claim, a
    /// partition, or nothing) decides whether it runs job `job_key`. Exactly one copy ever
    /// writes when the method works, so its writes carry no token; it has nothing to renew,
    /// release or resume. Otherwise the job is [`WorkerPlan::leased`]'s.
    pub fn without_lease(coordination: Coordination, job_key: &str) -> WorkerPlan {
        WorkerPlan {
            coordination,
            ttl_ms: 0,
            heartbeat_ms: 0,
            retry_ms: 0,
            fencing: Fencing::None,
            release: None,
            check_progress: false,
            ..WorkerPlan::leased(job_key)
        }
    }

    /// How it coordinates, as this build runs it: a lease where the build has no scenario
    /// with an alternative ([`RUNS_ALTERNATIVES`]).
    pub fn coordination(&self) -> Coordination {
        if RUNS_ALTERNATIVES {
            self.coordination
        } else {
            Coordination::Lease
        }
    }

    /// Where its writes go, as this build runs it: the ledger where the build has no
    /// scenario with a rail.
    pub fn sink(&self) -> Sink {
        if RUNS_RAIL {
            self.sink
        } else {
            Sink::Resource
        }
    }

    /// Its run key, as this build runs it: none where the build has no scenario with one.
    pub fn run_key(&self) -> Option<&String> {
        self.run_key.as_ref().filter(|_| RUNS_ALTERNATIVES)
    }

    /// What the whole job moves: every step's amount.
    pub fn job_total(&self) -> i64 {
        self.amount_per_step * i64::from(self.steps)
    }
}

/// A worker's configuration: its plan, where the nodes it talks to are (the setup decides
/// that, not the plan), and the job's shape as the job runner reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerConfig {
    pub plan: WorkerPlan,
    /// The authority it coordinates through: the lease store, or the job table for a unique
    /// insert or a conditional claim. `None` when it asks nobody (a partition).
    pub authority: Option<NodeId>,
    /// Where the job's writes go: the ledger or the rail.
    pub sink_node: NodeId,
    pub job: JobPlan,
}

plans_job!(WorkerConfig);

impl WorkerConfig {
    pub fn new(plan: WorkerPlan, authority: Option<NodeId>, sink_node: NodeId) -> WorkerConfig {
        let job = JobPlan {
            key: plan.lease.clone(),
            ttl_ms: plan.ttl_ms,
            retry_ms: plan.retry_ms,
            // It never runs out of attempts: a denial backs it off, or off for good.
            max_attempts: u32::MAX,
            ..JobPlan::of_steps(plan.steps, plan.step_ms, plan.amount_per_step, sink_node)
        };
        WorkerConfig {
            plan,
            authority,
            sink_node,
            job,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundles::every_variant;

    /// A bundle leaves out the ways of the worker that none of its scenarios plans
    /// ([`RUNS_ALTERNATIVES`], [`RUNS_RAIL`]): every scenario's workers, at its defaults and
    /// with each choice of each of its parameters, plan only the ways its bundle has.
    #[test]
    fn every_scenario_plans_only_the_ways_of_the_worker_its_bundle_has() {
        let (mut alternatives, mut rails) = (0, 0);
        for (def, _, params) in every_variant() {
            let setup = def.setup.expect("every_variant gives runnable scenarios");
            for slot in setup(&params, 1).slots.iter().flatten() {
                let Some(config) = slot.config_any().downcast_ref::<WorkerConfig>() else {
                    continue;
                };
                let plan = &config.plan;
                if plan.coordination != Coordination::Lease || plan.run_key.is_some() {
                    assert_eq!(def.bundle, "leases", "{} with {params:?}", def.id);
                    alternatives += 1;
                }
                if plan.sink != Sink::Resource {
                    assert_eq!(def.bundle, "unfenceable", "{} with {params:?}", def.id);
                    rails += 1;
                }
            }
        }
        assert!(alternatives > 0 && rails > 0, "the check saw no worker to check");
    }
}
