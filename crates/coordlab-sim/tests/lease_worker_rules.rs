//! Unit tests of the lease worker's state machine (`protocols/lease_worker/`), one rule each:
//! acquiring and backing off, renewing on the heartbeat, the token on every step, stopping on
//! an empty renewal, what a rejected write does (abort, or the planted mistake of getting the
//! lease back and carrying on), the check of its own clock, the `finally` release, and the
//! progress read after a fresh grant, the stamp before it (fence on takeover) and the run
//! key claimed after the lease. Each feeds one input and asserts on the effects. (The
//! inline tests there cover the happy path of one step, giving up without retries and the
//! partition alternative; these do not repeat them.)

use coordlab_sim::kernel::ids::{FencingToken, NodeId};
use coordlab_sim::kernel::participant::Effect;
use coordlab_sim::kernel::testing::{self, narration, persisted, timers_set};
use coordlab_sim::kernel::time::MS_US;
use coordlab_sim::protocols::job::{JobMsg, JobTimer, Phase};
use coordlab_sim::protocols::lease::lease_msg::{LeaseMsg, RejectReason, ReleaseMode, WriteCheck};
use coordlab_sim::protocols::lease::lease_worker::{
    Belief, Fencing, LeaseTimer, LeaseWorker, OnReject, StopReason, WorkerConfig, WorkerPlan,
};
use coordlab_sim::protocols::redis_locks::redis_job::JobDurable;

const STORE: NodeId = NodeId(0);
const ME: NodeId = NodeId(1);
const LEDGER: NodeId = NodeId(2);
const OTHER: NodeId = NodeId(3);
const NAMES: [&str; 4] = ["store", "worker-A", "ledger", "worker-B"];

type Fx = Vec<Effect<LeaseWorker>>;
type W = testing::Harness<LeaseWorker>;

fn worker_with(plan: WorkerPlan, finished: bool) -> W {
    let config = WorkerConfig::new(plan, Some(STORE), LEDGER);
    let durable = JobDurable {
        finished,
        requests: 0,
    };
    let w = LeaseWorker::recover(&config, &durable);
    testing::Harness::new(ME, w, &NAMES)
}

const HEARTBEAT: JobTimer<LeaseTimer> = JobTimer::Lock(LeaseTimer::Heartbeat);

/// Delivers what the lease store, the job table or the ledger says.
trait Hear {
    fn hear(&mut self, from: NodeId, msg: LeaseMsg) -> Fx;
}

impl Hear for W {
    fn hear(&mut self, from: NodeId, msg: LeaseMsg) -> Fx {
        self.deliver(from, JobMsg::Ledger(msg))
    }
}

/// Why it stopped, once it has.
fn stopped_by(w: &W) -> Option<StopReason> {
    (w.node.phase == Phase::Stopped)
        .then(|| w.node.stop_reason.clone())
        .flatten()
}

/// The step it works on and the token that step's write will carry.
fn working(w: &W) -> Option<(u32, FencingToken)> {
    match w.node.phase {
        Phase::Working { step } => Some((step, w.node.step_token)),
        _ => None,
    }
}

fn worker(plan: WorkerPlan) -> W {
    worker_with(plan, false)
}

fn leased() -> WorkerPlan {
    WorkerPlan::leased("l")
}

fn sent(fx: &Fx) -> Vec<(NodeId, LeaseMsg)> {
    testing::sent(fx)
}

fn cancelled(fx: &Fx) -> Vec<JobTimer<LeaseTimer>> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::CancelTimer { timer } => Some(timer.clone()),
            _ => None,
        })
        .collect()
}

fn acquire_msg() -> LeaseMsg {
    LeaseMsg::Acquire {
        lease: "l".into(),
        ttl_ms: 30_000,
    }
}

fn grant(w: &mut W, token: u64) -> Fx {
    w.hear(
        STORE,
        LeaseMsg::Granted {
            lease: "l".into(),
            token: FencingToken(token),
            ttl_ms: 30_000,
        },
    )
}

fn denied(w: &mut W) -> Fx {
    w.hear(
        STORE,
        LeaseMsg::Denied {
            lease: "l".into(),
            holder: OTHER,
        },
    )
}

fn result(w: &mut W, step: u32, token: u64, accepted: bool) -> Fx {
    w.hear(
        LEDGER,
        LeaseMsg::WriteResult {
            step,
            token: FencingToken(token),
            accepted,
            reason: (!accepted).then_some(RejectReason::StaleToken {
                token: FencingToken(token),
                highest: FencingToken(token + 2),
                by_writer: false,
            }),
        },
    )
}

fn write(step: u32, token: u64, check: WriteCheck) -> LeaseMsg {
    LeaseMsg::Write {
        step,
        amount: 10,
        token: FencingToken(token),
        check,
    }
}

fn release_msg() -> LeaseMsg {
    LeaseMsg::Release {
        lease: "l".into(),
        mode: ReleaseMode::CompareAndDelete,
    }
}

/// The worker at 0 s: it fired, was granted `token` and read that nothing is done yet, so it
/// is working on step 1.
fn working_on_step_1(plan: WorkerPlan, token: u64) -> W {
    let mut w = worker(plan);
    w.fire(JobTimer::JobStart);
    grant(&mut w, token);
    w.hear(LEDGER, LeaseMsg::Progress { steps_done: 0 });
    assert_eq!(working(&w), Some((1, FencingToken(token))));
    w
}

#[test]
fn start_arms_the_job_inside_its_start_window_unless_the_job_is_already_done() {
    let mut w = worker(leased());
    let fx = w.start();
    let [(JobTimer::JobStart, after_us)] = timers_set(&fx)[..] else {
        panic!("one Start timer: {fx:?}");
    };
    assert!(
        after_us <= 100 * MS_US,
        "inside start_after_ms (0–100 ms): {after_us}"
    );
    assert!(sent(&fx).is_empty());
    assert_eq!(w.node.phase, Phase::Idle);

    let mut done = worker_with(leased(), true);
    let fx = done.start();
    assert!(timers_set(&fx).is_empty() && sent(&fx).is_empty());
    assert_eq!(done.node.phase, Phase::Done);
    assert!(narration(&fx).contains("already done"));
}

#[test]
fn a_denied_first_acquire_backs_off_for_the_retry_interval_then_asks_again() {
    let mut w = worker(WorkerPlan {
        retry_jitter_ms: 1_000,
        ..leased()
    });
    assert_eq!(sent(&w.fire(JobTimer::JobStart)), vec![(STORE, acquire_msg())]);
    let fx = denied(&mut w);
    assert!(sent(&fx).is_empty());
    let [(JobTimer::Retry, wait_us)] = timers_set(&fx)[..] else {
        panic!("one Retry timer: {fx:?}");
    };
    assert!(
        (5_000 * MS_US..=6_000 * MS_US).contains(&wait_us),
        "retry_ms plus at most retry_jitter_ms: {wait_us}"
    );
    assert_eq!(w.node.phase, Phase::BackingOff);
    assert!(!w.node.believes_it_holds());
    let fx = w.fire(JobTimer::Retry);
    assert_eq!(sent(&fx), vec![(STORE, acquire_msg())]);
    assert_eq!((w.node.job.attempt, &w.node.phase), (2, &Phase::Acquiring));
    assert!(narration(&fx).contains("(attempt 2)"));
}

#[test]
fn without_a_heartbeat_or_a_progress_check_a_grant_goes_straight_to_step_1() {
    let mut w = worker(WorkerPlan {
        heartbeat_ms: 0,
        check_progress: false,
        ..leased()
    });
    w.fire(JobTimer::JobStart);
    let fx = grant(&mut w, 7);
    assert!(sent(&fx).is_empty(), "no progress read");
    assert_eq!(
        timers_set(&fx),
        vec![(JobTimer::StepDone { step: 1 }, 4_000 * MS_US)]
    );
    assert!(narration(&fx).contains("it will not renew"));
    // A stray heartbeat does not renew either.
    assert!(sent(&w.fire(HEARTBEAT)).is_empty());
}

#[test]
fn the_heartbeat_renews_with_the_acquire_statement_and_the_step_goes_on() {
    let mut w = working_on_step_1(leased(), 7);
    w.now_us = 10_000 * MS_US;
    let fx = w.fire(HEARTBEAT);
    assert_eq!(sent(&fx), vec![(STORE, acquire_msg())]);
    assert!(
        timers_set(&fx).is_empty(),
        "the next heartbeat is armed by the answer"
    );
    w.now_us = 10_400 * MS_US;
    let fx = grant(&mut w, 7);
    assert!(
        sent(&fx).is_empty(),
        "a renewal reads no progress and touches nothing"
    );
    assert_eq!(timers_set(&fx), vec![(HEARTBEAT, 10_000 * MS_US)]);
    assert_eq!(working(&w), Some((1, FencingToken(7))));
    // The new expiry counts from when the renewal was sent, not from when it came back.
    assert_eq!(
        w.node.belief,
        Some(Belief {
            token: FencingToken(7),
            expires_local_us: 40_000 * MS_US
        })
    );
}

#[test]
fn a_renewal_with_touch_on_heartbeat_marks_the_ledger_with_the_current_token() {
    let mut w = working_on_step_1(
        WorkerPlan {
            touch_on_heartbeat: true,
            ..leased()
        },
        7,
    );
    w.fire(HEARTBEAT);
    let fx = grant(&mut w, 7);
    assert_eq!(
        sent(&fx),
        vec![(
            LEDGER,
            LeaseMsg::Touch {
                token: FencingToken(7)
            }
        )]
    );
}

#[test]
fn a_renewal_with_a_new_token_changes_the_belief_but_not_the_write_already_under_way() {
    let mut w = working_on_step_1(leased(), 7);
    w.fire(HEARTBEAT);
    let fx = grant(&mut w, 8);
    assert!(narration(&fx).contains("came back with token 8 instead of 7"));
    assert_eq!(w.node.belief.map(|b| b.token), Some(FencingToken(8)));
    // Step 1 was started under token 7 and its write still carries it.
    assert_eq!(
        sent(&w.fire(JobTimer::StepDone { step: 1 })),
        vec![(LEDGER, write(1, 7, WriteCheck::TokenPredicate))]
    );
    result(&mut w, 1, 7, true);
    // The next step is started under the token the worker now believes in.
    assert_eq!(working(&w), Some((2, FencingToken(8))));
}

#[test]
fn every_step_s_write_carries_the_token_in_its_predicate_and_an_accepted_one_starts_the_next() {
    let mut w = working_on_step_1(leased(), 7);
    for step in 1..=3 {
        let fx = w.fire(JobTimer::StepDone { step });
        assert_eq!(
            sent(&fx),
            vec![(LEDGER, write(step, 7, WriteCheck::TokenPredicate))]
        );
        assert!(w.node.believes_it_holds());
        let fx = result(&mut w, step, 7, true);
        assert_eq!(
            timers_set(&fx),
            vec![(JobTimer::StepDone { step: step + 1 }, 4_000 * MS_US)]
        );
        assert!(persisted(&fx).is_empty(), "only the end of the job is persisted");
    }
    // A result for a step that is not being written is ignored.
    assert!(result(&mut w, 2, 7, true).is_empty());
}

#[test]
fn fencing_only_the_first_write_leaves_every_later_write_unchecked() {
    let mut w = working_on_step_1(
        WorkerPlan {
            fencing: Fencing::FirstWriteOnly,
            ..leased()
        },
        7,
    );
    let fx = w.fire(JobTimer::StepDone { step: 1 });
    assert_eq!(sent(&fx), vec![(LEDGER, write(1, 7, WriteCheck::TokenPredicate))]);
    result(&mut w, 1, 7, true);
    let fx = w.fire(JobTimer::StepDone { step: 2 });
    assert_eq!(sent(&fx), vec![(LEDGER, write(2, 7, WriteCheck::Unfenced))]);
}

#[test]
fn a_check_in_application_code_reads_the_token_first_and_then_writes_unchecked() {
    let app_check = WorkerPlan {
        fencing: Fencing::AppCheck,
        ..leased()
    };
    let mut w = worker(app_check.clone());
    w.fire(JobTimer::JobStart);
    grant(&mut w, 7);
    let fx = w.hear(LEDGER, LeaseMsg::Progress { steps_done: 0 });
    assert_eq!(sent(&fx), vec![(LEDGER, LeaseMsg::ReadToken)]);
    assert_eq!(w.node.phase, Phase::Checking { step: 1 });
    let fx = w.hear(
        LEDGER,
        LeaseMsg::TokenIs {
            last_token: FencingToken(7),
        },
    );
    assert_eq!(
        timers_set(&fx),
        vec![(JobTimer::StepDone { step: 1 }, 4_000 * MS_US)]
    );
    let fx = w.fire(JobTimer::StepDone { step: 1 });
    assert_eq!(sent(&fx), vec![(LEDGER, write(1, 7, WriteCheck::Unfenced))]);

    // A newer token in the row stops it before the work.
    let mut w = worker(app_check);
    w.fire(JobTimer::JobStart);
    grant(&mut w, 7);
    w.hear(LEDGER, LeaseMsg::Progress { steps_done: 0 });
    let fx = w.hear(
        LEDGER,
        LeaseMsg::TokenIs {
            last_token: FencingToken(8),
        },
    );
    assert!(sent(&fx).is_empty() && timers_set(&fx).is_empty());
    assert_eq!(cancelled(&fx), vec![HEARTBEAT]);
    assert_eq!(stopped_by(&w), Some(StopReason::AppCheckCaught));
}

#[test]
fn an_empty_renewal_stops_the_worker_at_once_and_even_a_finally_block_releases_nothing() {
    let mut w = working_on_step_1(
        WorkerPlan {
            release_in_finally: true,
            ..leased()
        },
        7,
    );
    w.fire(HEARTBEAT);
    let fx = denied(&mut w);
    assert!(
        sent(&fx).is_empty(),
        "the lease is someone else's: nothing to release"
    );
    assert_eq!(cancelled(&fx), vec![HEARTBEAT, JobTimer::StepDone { step: 1 }]);
    assert_eq!(stopped_by(&w), Some(StopReason::LostLease));
    assert_eq!(w.node.belief, None);
    assert!(!w.node.believes_it_holds());
    assert!(narration(&fx).contains("It stops immediately"));
    // The step's timer, had it fired anyway, writes nothing.
    assert!(sent(&w.fire(JobTimer::StepDone { step: 1 })).is_empty());
}

#[test]
fn a_rejected_fenced_write_aborts_with_no_retry_and_no_release() {
    let mut w = working_on_step_1(leased(), 7);
    w.fire(JobTimer::StepDone { step: 1 });
    let fx = result(&mut w, 1, 7, false);
    assert!(sent(&fx).is_empty() && timers_set(&fx).is_empty() && persisted(&fx).is_empty());
    assert_eq!(cancelled(&fx), vec![HEARTBEAT]);
    assert_eq!(stopped_by(&w), Some(StopReason::Rejected));
    assert!(narration(&fx).contains("token 7 < 9"));
    assert!(narration(&fx).contains("aborts"));
}

#[test]
fn a_finally_block_releases_by_compare_and_delete_after_a_rejection() {
    let mut w = working_on_step_1(
        WorkerPlan {
            release_in_finally: true,
            ..leased()
        },
        7,
    );
    w.fire(JobTimer::StepDone { step: 1 });
    let fx = result(&mut w, 1, 7, false);
    assert_eq!(sent(&fx), vec![(STORE, release_msg())]);
    assert_eq!(w.node.phase, Phase::Releasing);
    let fx = w.hear(
        STORE,
        LeaseMsg::Released {
            lease: "l".into(),
            deleted: false,
        },
    );
    assert_eq!(stopped_by(&w), Some(StopReason::Rejected), "stopped, not done");
    assert!(persisted(&fx).is_empty() && !w.node.job.finished);
}

#[test]
fn the_planted_mistake_gets_the_lease_back_after_a_rejection_and_resumes_its_own_step() {
    let mut w = working_on_step_1(
        WorkerPlan {
            on_reject: OnReject::ReacquireAndContinue,
            ..leased()
        },
        7,
    );
    w.fire(JobTimer::StepDone { step: 1 });
    result(&mut w, 1, 7, true);
    w.fire(JobTimer::StepDone { step: 2 });
    let fx = result(&mut w, 2, 7, false);
    assert!(sent(&fx).is_empty());
    assert_eq!(cancelled(&fx), vec![HEARTBEAT]);
    assert_eq!(timers_set(&fx), vec![(JobTimer::Retry, 5_000 * MS_US)]);
    assert_eq!((&w.node.phase, w.node.belief), (&Phase::BackingOff, None));
    assert_eq!(sent(&w.fire(JobTimer::Retry)), vec![(STORE, acquire_msg())]);
    let fx = grant(&mut w, 9);
    // It does not ask the ledger how far the job got: it redoes the step it was refused.
    assert!(sent(&fx).is_empty());
    assert_eq!(
        timers_set(&fx),
        vec![
            (HEARTBEAT, 10_000 * MS_US),
            (JobTimer::StepDone { step: 2 }, 4_000 * MS_US)
        ]
    );
    assert_eq!(
        sent(&w.fire(JobTimer::StepDone { step: 2 })),
        vec![(LEDGER, write(2, 9, WriteCheck::TokenPredicate))]
    );
}

#[test]
fn the_own_clock_check_counts_the_lease_from_when_the_acquire_was_sent() {
    let plan = WorkerPlan {
        check_clock_before_step: true,
        release_in_finally: true,
        ..leased()
    };
    // Asked at 0 s, granted at 5 s: by its own clock the 30 s run out at 30 s.
    let at = |progress_at_ms: u64| {
        let mut w = worker(plan.clone());
        w.fire(JobTimer::JobStart);
        w.now_us = 5_000 * MS_US;
        grant(&mut w, 7);
        w.now_us = progress_at_ms * MS_US;
        let fx = w.hear(LEDGER, LeaseMsg::Progress { steps_done: 0 });
        (w, fx)
    };
    let (w, fx) = at(29_000);
    assert_eq!(
        timers_set(&fx),
        vec![(JobTimer::StepDone { step: 1 }, 4_000 * MS_US)]
    );
    assert!(narration(&fx).contains("1 s of its lease remain"));
    assert!(w.node.believes_it_holds());

    let (w, fx) = at(30_000);
    assert!(timers_set(&fx).is_empty());
    assert!(narration(&fx).contains("its lease has run out, so it stops before step 1"));
    // Unlike a lost lease, running out of time still goes through the finally release.
    assert_eq!(sent(&fx), vec![(STORE, release_msg())]);
    assert_eq!(w.node.phase, Phase::Releasing);
    assert_eq!(cancelled(&fx), vec![HEARTBEAT]);
}

#[test]
fn with_a_margin_a_step_starts_only_if_it_ends_more_than_the_margin_before_the_lease() {
    let plan = WorkerPlan {
        check_clock_before_step: true,
        finish_margin_ms: Some(10_000),
        release_in_finally: true,
        ..leased()
    };
    // Asked at 0 s: the lease ends at 30 s by its own clock. A 4 s step and a 10 s margin
    // leave room to start only before 16 s.
    let at = |progress_at_ms: u64| {
        let mut w = worker(plan.clone());
        w.fire(JobTimer::JobStart);
        grant(&mut w, 7);
        w.now_us = progress_at_ms * MS_US;
        let fx = w.hear(LEDGER, LeaseMsg::Progress { steps_done: 0 });
        (w, fx)
    };
    let (w, fx) = at(15_999);
    assert_eq!(
        timers_set(&fx),
        vec![(JobTimer::StepDone { step: 1 }, 4_000 * MS_US)]
    );
    assert!(
        narration(&fx).contains("would end 10.001 s before the lease does, more than its 10 s safety margin")
    );
    assert!(w.node.believes_it_holds());

    let (w, fx) = at(16_000);
    assert!(timers_set(&fx).is_empty());
    assert!(
        narration(&fx).contains("would end only 10 s before the lease does, inside its 10 s safety margin")
    );
    assert_eq!(sent(&fx), vec![(STORE, release_msg())]);
    assert_eq!(w.node.phase, Phase::Releasing);

    let (w, fx) = at(27_000);
    assert!(narration(&fx).contains("step 1 (4 s) would not end in time"));
    assert!(!w.node.believes_it_holds());
}

#[test]
fn a_fresh_grant_onto_a_finished_job_records_it_done_and_only_releases() {
    let mut w = worker(leased());
    w.fire(JobTimer::JobStart);
    grant(&mut w, 7);
    let fx = w.hear(LEDGER, LeaseMsg::Progress { steps_done: 4 });
    assert_eq!(
        persisted(&fx),
        vec![&JobDurable {
            finished: true,
            requests: 0
        }]
    );
    assert_eq!(sent(&fx), vec![(STORE, release_msg())]);
    assert!(!timers_set(&fx)
        .iter()
        .any(|(t, _)| matches!(t, JobTimer::StepDone { .. })));
    assert_eq!(cancelled(&fx), vec![HEARTBEAT]);
    assert!(narration(&fx).contains("already complete (4 steps recorded)"));
    w.hear(
        STORE,
        LeaseMsg::Released {
            lease: "l".into(),
            deleted: true,
        },
    );
    assert_eq!(w.node.phase, Phase::Done);
}

fn stamping() -> WorkerPlan {
    WorkerPlan {
        stamp_before_progress: true,
        ..leased()
    }
}

fn token_is(w: &mut W, token: u64) -> Fx {
    w.hear(
        LEDGER,
        LeaseMsg::TokenIs {
            last_token: FencingToken(token),
        },
    )
}

fn stamp_msgs(token: u64) -> Vec<(NodeId, LeaseMsg)> {
    vec![(
        LEDGER,
        LeaseMsg::Stamp {
            token: FencingToken(token),
        },
    )]
}

#[test]
fn fencing_on_takeover_stamps_the_row_and_sees_the_stamp_before_reading_progress() {
    let mut w = worker(stamping());
    w.fire(JobTimer::JobStart);
    let fx = grant(&mut w, 34);
    assert_eq!(
        sent(&fx),
        stamp_msgs(34),
        "the stamp, which answers with the row's token"
    );
    assert_eq!(w.node.phase, Phase::Stamping);
    assert!(w.node.believes_it_holds());
    // A row still below its token: stamp again, still no progress read.
    let fx = token_is(&mut w, 33);
    assert_eq!(sent(&fx), stamp_msgs(34));
    assert!(narration(&fx).contains("stamps again"));
    // A progress answer from before the stamp is not taken.
    w.hear(LEDGER, LeaseMsg::Progress { steps_done: 1 });
    assert_eq!(w.node.phase, Phase::Stamping);
    let fx = token_is(&mut w, 34);
    assert_eq!(sent(&fx), vec![(LEDGER, LeaseMsg::ReadProgress)]);
    assert_eq!(w.node.phase, Phase::ReadingProgress);
    let fx = w.hear(LEDGER, LeaseMsg::Progress { steps_done: 1 });
    assert_eq!(
        timers_set(&fx),
        vec![(JobTimer::StepDone { step: 2 }, 4_000 * MS_US)]
    );
}

#[test]
fn a_stamp_that_finds_a_newer_token_stops_the_worker_without_a_write() {
    let mut w = worker(stamping());
    w.fire(JobTimer::JobStart);
    grant(&mut w, 34);
    let fx = token_is(&mut w, 35);
    assert!(sent(&fx).is_empty());
    assert_eq!(stopped_by(&w), Some(StopReason::Rejected));
    assert!(!w.node.believes_it_holds());
    assert!(narration(&fx).contains("a newer holder owns the job"));
}

#[test]
fn with_fencing_on_takeover_a_renewal_with_a_new_token_is_a_takeover_stamp_and_read_again() {
    let mut w = worker(stamping());
    w.fire(JobTimer::JobStart);
    grant(&mut w, 34);
    token_is(&mut w, 34);
    w.hear(LEDGER, LeaseMsg::Progress { steps_done: 0 });
    w.fire(HEARTBEAT);
    // The lease lapsed and came back with 36: someone may have held 35 meanwhile.
    let fx = grant(&mut w, 36);
    assert_eq!(cancelled(&fx), vec![JobTimer::StepDone { step: 1 }]);
    assert_eq!(sent(&fx), stamp_msgs(36));
    assert_eq!(w.node.phase, Phase::Stamping);
    assert_eq!(w.node.belief.map(|b| b.token), Some(FencingToken(36)));
    // The step under way is not written with either token.
    assert!(sent(&w.fire(JobTimer::StepDone { step: 1 })).is_empty());
}

fn with_run_key() -> WorkerPlan {
    WorkerPlan {
        run_key: Some("job:2025-03-14".into()),
        check_progress: false,
        steps: 1,
        ..leased()
    }
}

/// The one-step job's transaction: its debit with the run key.
fn write_with_key(token: u64) -> LeaseMsg {
    LeaseMsg::WriteWithRunKey {
        step: 1,
        amount: 10,
        token: FencingToken(token),
        check: WriteCheck::TokenPredicate,
        key: "job:2025-03-14".into(),
    }
}

#[test]
fn with_a_run_key_the_debit_carries_the_key_in_its_own_transaction() {
    let mut w = worker(with_run_key());
    w.fire(JobTimer::JobStart);
    // No separate insert before the work: the grant starts the step.
    let fx = grant(&mut w, 1);
    assert!(sent(&fx).is_empty(), "{fx:?}");
    assert_eq!(
        timers_set(&fx),
        vec![
            (HEARTBEAT, 10_000 * MS_US),
            (JobTimer::StepDone { step: 1 }, 4_000 * MS_US)
        ]
    );
    let fx = w.fire(JobTimer::StepDone { step: 1 });
    assert_eq!(sent(&fx), vec![(LEDGER, write_with_key(1))]);
    assert!(narration(&fx).contains("to commit together or not at all"));
    let fx = result(&mut w, 1, 1, true);
    assert_eq!(sent(&fx), vec![(STORE, release_msg())]);
    assert!(w.node.job.finished);
}

#[test]
fn with_a_run_key_a_rolled_back_transaction_means_the_run_happened_so_the_worker_lets_go() {
    let mut w = worker(with_run_key());
    w.fire(JobTimer::JobStart);
    grant(&mut w, 2);
    w.fire(JobTimer::StepDone { step: 1 });
    let fx = w.hear(
        LEDGER,
        LeaseMsg::WriteResult {
            step: 1,
            token: FencingToken(2),
            accepted: false,
            reason: Some(RejectReason::RunKeyTaken {
                key: "job:2025-03-14".into(),
            }),
        },
    );
    assert_eq!(sent(&fx), vec![(STORE, release_msg())]);
    assert_eq!(cancelled(&fx), vec![HEARTBEAT]);
    assert!(narration(&fx).contains("this run happened"));
    assert!(!w.node.believes_it_holds());
    w.hear(
        STORE,
        LeaseMsg::Released {
            lease: "l".into(),
            deleted: true,
        },
    );
    assert_eq!(stopped_by(&w), Some(StopReason::AlreadyRun));
    assert!(!w.node.job.finished);
}
