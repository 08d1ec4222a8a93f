//! A worker that coordinates a multi-step job — usually with a lease, sometimes with one of
//! the alternatives (a unique insert, a conditional claim, partitioning) or with nothing.
//!
//! With a lease it acquires, renews on a heartbeat, and writes each step carrying the token
//! it was handed. A renewal that comes back empty means the lease is lost: it stops at once.
//! It judges its own lease by its own clock. Its mistakes are configurable, one flag each:
//! no fencing, checking the token in application code, fencing only the first write, retrying
//! after a rejection, deleting the lease without checking the owner.
//!
//! The job itself is the [`JobRunner`]'s; this is the lease side, [`LeaseLock`]:
//! - `mod.rs` (here): what it keeps, its timer, why it stops, and its card.
//! - [`plan`]: what a scenario tells a worker to do ([`WorkerPlan`]) and where its peers are.
//! - `lease`: getting, keeping and giving up the right to run the job (acquire, renew, claim,
//!   back off, stop, release), what arrives, and what a refused write means.
//! - `steps`: the job's steps as this worker does them: its checks before a step and its
//!   writes (to the ledger or the rail).

mod lease;
pub mod plan;
mod steps;

pub use plan::{Coordination, Fencing, OnReject, Sink, WorkerConfig, WorkerPlan};

use crate::kernel::ids::FencingToken;
use crate::protocols::job::JobRunner;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    LostLease,
    ExpiredByOwnClock,
    /// Too little of the lease left, by its own clock, to finish a step with its margin.
    MarginReached,
    Rejected,
    AppCheckCaught,
    NotMine,
    /// The run key was already committed: this run happened, and this worker's transaction
    /// rolled back.
    AlreadyRun,
}

/// What the worker believes about its lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Belief {
    pub token: FencingToken,
    /// By the worker's own clock.
    pub expires_local_us: u64,
}

/// The lease side's own timer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseTimer {
    Heartbeat,
}

/// A worker: the job runner with a lease (or one of its alternatives).
pub type LeaseWorker = JobRunner<LeaseLock>;

/// The lease side of a worker: what it believes about its lease and how it got there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaseLock {
    pub belief: Option<Belief>,
    acquire_sent_local_us: u64,
    /// The next step to run after (re)acquiring.
    pub next_step: u32,
    /// The token the step under way was started with: its write carries it, even if a
    /// renewal has changed the belief since.
    pub step_token: FencingToken,
    /// Why it stopped early, kept while a `finally` release is in flight.
    pub stop_reason: Option<StopReason>,
    /// Set when a rejected write is (wrongly) treated as transient: the next grant resumes
    /// the worker's own step counter instead of asking how far the job got.
    pub(crate) resuming: bool,
    /// The back-off under way follows a denied acquire, and says how long it waits.
    says_wait: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::NodeId;
    use crate::kernel::participant::Effect;
    use crate::kernel::testing::{narration, sent, timers_set, Harness};
    use crate::kernel::time::MS_US;
    use crate::protocols::job::{JobMsg, JobTimer, Phase};
    use crate::protocols::lease::lease_msg::{LeaseMsg, ReleaseMode, WriteCheck};
    use crate::protocols::redis_locks::redis_job::JobDurable;

    const STORE: NodeId = NodeId(0);
    const LEDGER: NodeId = NodeId(2);

    fn worker(plan: WorkerPlan, authority: Option<NodeId>) -> Harness<LeaseWorker> {
        let config = WorkerConfig::new(plan, authority, LEDGER);
        let w = LeaseWorker::recover(&config, &JobDurable::default());
        Harness::new(NodeId(1), w, &["store", "w", "ledger"])
    }

    fn hear(w: &mut Harness<LeaseWorker>, from: NodeId, msg: LeaseMsg) -> Vec<Effect<LeaseWorker>> {
        w.deliver(from, JobMsg::Ledger(msg))
    }

    fn msgs(effects: &[Effect<LeaseWorker>]) -> Vec<(NodeId, LeaseMsg)> {
        sent::<_, LeaseMsg>(effects)
    }

    #[test]
    fn a_leased_worker_asks_first_reads_progress_then_writes_with_its_token() {
        let mut w = worker(WorkerPlan::leased("l"), Some(STORE));
        assert_eq!(
            msgs(&w.fire(JobTimer::JobStart)),
            vec![(
                STORE,
                LeaseMsg::Acquire {
                    lease: "l".into(),
                    ttl_ms: 30_000
                }
            )]
        );
        let fx = hear(
            &mut w,
            STORE,
            LeaseMsg::Granted {
                lease: "l".into(),
                token: FencingToken(7),
                ttl_ms: 30_000,
            },
        );
        assert_eq!(msgs(&fx), vec![(LEDGER, LeaseMsg::ReadProgress)]);
        assert_eq!(
            timers_set(&fx),
            vec![(JobTimer::Lock(LeaseTimer::Heartbeat), 10_000 * MS_US)]
        );
        let fx = hear(&mut w, LEDGER, LeaseMsg::Progress { steps_done: 3 });
        assert_eq!(
            timers_set(&fx),
            vec![(JobTimer::StepDone { step: 4 }, 4_000 * MS_US)]
        );
        assert!(w.node.believes_it_holds());
        assert_eq!(
            msgs(&w.fire(JobTimer::StepDone { step: 4 })),
            vec![(
                LEDGER,
                LeaseMsg::Write {
                    step: 4,
                    amount: 10,
                    token: FencingToken(7),
                    check: WriteCheck::TokenPredicate
                }
            )]
        );
        let fx = hear(
            &mut w,
            LEDGER,
            LeaseMsg::WriteResult {
                step: 4,
                token: FencingToken(7),
                accepted: true,
                reason: None,
            },
        );
        assert_eq!(
            msgs(&fx),
            vec![(
                STORE,
                LeaseMsg::Release {
                    lease: "l".into(),
                    mode: ReleaseMode::CompareAndDelete
                }
            )]
        );
        assert!(w.node.job.finished && !w.node.believes_it_holds());
    }

    #[test]
    fn a_denied_worker_without_retries_backs_off_for_good() {
        let plan = WorkerPlan {
            retry_ms: 0,
            ..WorkerPlan::leased("l")
        };
        let mut w = worker(plan, Some(STORE));
        w.fire(JobTimer::JobStart);
        let fx = hear(
            &mut w,
            STORE,
            LeaseMsg::Denied {
                lease: "l".into(),
                holder: NodeId(3),
            },
        );
        assert!(msgs(&fx).is_empty() && timers_set(&fx).is_empty());
        assert_eq!(w.node.phase, Phase::GaveUp);
    }

    #[test]
    fn a_worker_outside_the_partition_asks_nobody_and_does_nothing() {
        let plan = WorkerPlan::without_lease(Coordination::Partition { owns: false }, "job");
        let mut w = worker(plan, None);
        let fx = w.fire(JobTimer::JobStart);
        assert!(msgs(&fx).is_empty());
        assert_eq!(w.node.phase, Phase::Stopped);
        assert_eq!(w.node.stop_reason, Some(StopReason::NotMine));
        assert!(narration(&fx).contains("does not consume the partition job belongs to"));
    }
}
