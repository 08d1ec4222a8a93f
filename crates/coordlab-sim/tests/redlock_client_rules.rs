//! Unit tests of the Redlock client (`protocols/redis_locks/redlock_client.rs`), one rule each: it asks
//! every master, counts once all have answered or timed out, holds the lock only with a
//! majority and validity left (TTL − time spent − drift allowance), unlocks everywhere after
//! a failed attempt, retries with a fresh value and gives up, checks its validity before each
//! step, and writes without a token. Each feeds one input and asserts on the effects. (The
//! inline tests of `redis_job.rs` cover the shared job plan; these do not repeat them.)

use coordlab_sim::kernel::ids::{FencingToken, NodeId};
use coordlab_sim::kernel::participant::Effect;
use coordlab_sim::kernel::testing::{self, narration, persisted, timers_set};
use coordlab_sim::kernel::time::MS_US;
use coordlab_sim::protocols::lease::lease_msg::{LeaseMsg, WriteCheck};
use coordlab_sim::protocols::redis_locks::redis_job::{ClientMsg, JobDurable, JobPlan};
use coordlab_sim::protocols::redis_locks::redis_msg::RedisMsg;
use coordlab_sim::protocols::redis_locks::redlock_client::{
    MasterTimeout, Phase, QuorumLock, RedlockClient, RedlockPlan, RedlockTimer,
};

const MASTERS: [NodeId; 5] = [NodeId(0), NodeId(1), NodeId(2), NodeId(3), NodeId(4)];
const LEDGER: NodeId = NodeId(5);
const ME: NodeId = NodeId(6);
const STRANGER: NodeId = NodeId(7);
const NAMES: [&str; 8] = [
    "redis-1", "redis-2", "redis-3", "redis-4", "redis-5", "ledger", "client-a", "client-b",
];

const TTL_MS: u64 = 10_000;
/// The algorithm's allowance for a 10 s TTL: 1% plus 2 ms.
const DRIFT_MS: u64 = 102;
const START_MS: u64 = 100;

type Fx = Vec<Effect<RedlockClient>>;
type C = testing::Harness<RedlockClient>;

fn plan(master_timeout_ms: u64) -> RedlockPlan {
    RedlockPlan {
        job: JobPlan {
            short: "a".into(),
            key: "lock".into(),
            ttl_ms: TTL_MS,
            start_at_ms: START_MS,
            retry_ms: 1_000,
            max_attempts: 2,
            steps: 2,
            step_ms: 500,
            amount: 10,
            ledger: LEDGER,
        },
        masters: MASTERS.to_vec(),
        master_timeout_ms,
        retry_jitter_ms: 0,
    }
}

fn client_with(plan: RedlockPlan, finished: bool) -> C {
    let c = RedlockClient::recover(
        &plan,
        &JobDurable {
            finished,
            requests: 0,
        },
    );
    testing::Harness::new(ME, c, &NAMES)
}

/// A client whose job has just fired at 100 ms: it has asked every master.
fn asking(master_timeout_ms: u64) -> C {
    let mut c = client_with(plan(master_timeout_ms), false);
    c.now_us = START_MS * MS_US;
    c.fire(RedlockTimer::JobStart);
    assert_eq!(c.node.phase, Phase::Acquiring);
    c
}

fn at(c: &mut C, ms: u64) {
    c.now_us = ms * MS_US;
}

fn sent_redis(fx: &Fx) -> Vec<(NodeId, RedisMsg)> {
    testing::sent(fx)
}

fn sent_ledger(fx: &Fx) -> Vec<(NodeId, LeaseMsg)> {
    testing::sent(fx)
}

fn cancelled(fx: &Fx) -> Vec<RedlockTimer> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::CancelTimer { timer } => Some(timer.clone()),
            _ => None,
        })
        .collect()
}

fn reply(c: &mut C, from: NodeId, ok: bool) -> Fx {
    c.deliver(
        from,
        ClientMsg::Lock(RedisMsg::SetReply {
            key: "lock".into(),
            ok,
            counter: None,
        }),
    )
}

fn master_timeout(master: NodeId, attempt: u32) -> RedlockTimer {
    RedlockTimer::Lock(MasterTimeout {
        master,
        name: NAMES[master.index()].to_string(),
        attempt,
    })
}

fn time_out(c: &mut C, master: NodeId) -> Fx {
    let attempt = c.node.job.attempt;
    c.fire(master_timeout(master, attempt))
}

/// The first three masters say OK, the last two do not answer.
fn three_of_five(c: &mut C) -> Fx {
    for m in &MASTERS[..3] {
        reply(c, *m, true);
    }
    time_out(c, MASTERS[3]);
    time_out(c, MASTERS[4])
}

fn unlock_all(value: &str) -> Vec<(NodeId, RedisMsg)> {
    MASTERS
        .iter()
        .map(|m| {
            (
                *m,
                RedisMsg::CompareAndDelete {
                    key: "lock".into(),
                    value: value.into(),
                },
            )
        })
        .collect()
}

/// A client holding the lock: three OKs at 120 ms, so its validity ends at 9,998 ms.
fn holding() -> C {
    let mut c = asking(50);
    at(&mut c, 120);
    three_of_five(&mut c);
    assert!(c.node.held.is_some());
    c
}

#[test]
fn start_arms_the_job_for_its_hour_by_its_own_clock_unless_the_job_is_done() {
    let mut c = client_with(plan(50), false);
    at(&mut c, 30);
    let fx = c.start();
    assert_eq!(timers_set(&fx), vec![(RedlockTimer::JobStart, 70 * MS_US)]);
    assert!(sent_redis(&fx).is_empty());

    let mut done = client_with(plan(50), true);
    let fx = done.start();
    assert!(timers_set(&fx).is_empty());
    assert_eq!(done.node.phase, Phase::Done);
    assert!(narration(&fx).contains("already done"));
}

#[test]
fn an_attempt_asks_every_master_with_one_fresh_value_and_a_timeout_each() {
    let mut c = client_with(plan(50), false);
    at(&mut c, START_MS);
    let fx = c.fire(RedlockTimer::JobStart);
    let value = c.node.job.value.clone();
    assert!(value.starts_with("a-"), "{value}");
    let set = RedisMsg::Set {
        key: "lock".into(),
        value,
        nx: true,
        px_ms: TTL_MS,
        incr: None,
    };
    assert_eq!(
        sent_redis(&fx),
        MASTERS.iter().map(|m| (*m, set.clone())).collect::<Vec<_>>()
    );
    assert_eq!(
        timers_set(&fx),
        MASTERS
            .iter()
            .map(|m| (master_timeout(*m, 1), 50 * MS_US))
            .collect::<Vec<_>>()
    );
    assert!(narration(&fx).contains("It needs 3 OKs"));
}

#[test]
fn it_counts_only_once_every_master_has_answered_or_timed_out() {
    let mut c = asking(50);
    at(&mut c, 120);
    for m in &MASTERS[..3] {
        let fx = reply(&mut c, *m, true);
        assert_eq!(
            cancelled(&fx),
            vec![master_timeout(*m, 1)],
            "its own timeout is off"
        );
        assert!(sent_redis(&fx).is_empty() && sent_ledger(&fx).is_empty());
    }
    // A majority already, but two masters are still out.
    assert_eq!((c.node.held.clone(), &c.node.phase), (None, &Phase::Acquiring));
    assert!(time_out(&mut c, MASTERS[3]).is_empty());
    let fx = time_out(&mut c, MASTERS[4]);
    assert_eq!(sent_ledger(&fx), vec![(LEDGER, LeaseMsg::ReadProgress)]);
}

#[test]
fn a_majority_with_validity_left_holds_the_lock_until_ttl_minus_drift_after_asking() {
    let mut c = asking(50);
    at(&mut c, 120);
    let fx = three_of_five(&mut c);
    let value = c.node.job.value.clone();
    assert_eq!(
        c.node.held,
        Some(QuorumLock {
            value,
            masters: MASTERS[..3].to_vec(),
            // 120 ms + (10,000 − 20 − 102) ms = 100 ms + 10,000 ms − 102 ms.
            deadline_local_us: (START_MS + TTL_MS - DRIFT_MS) * MS_US,
        })
    );
    assert_eq!(c.node.acquisitions, vec![MASTERS[..3].to_vec()]);
    assert_eq!(sent_ledger(&fx), vec![(LEDGER, LeaseMsg::ReadProgress)]);
    assert!(sent_redis(&fx).is_empty(), "nothing unlocked");
    assert_eq!(c.node.phase, Phase::ReadingProgress);
    assert!(c.node.believes_it_holds());
    assert!(narration(&fx)
        .contains("validity = 10000 ms TTL − 20 ms spent asking − 102 ms drift allowance = 9878 ms"));
}

#[test]
fn short_of_a_majority_it_unlocks_every_master_even_those_that_said_yes_and_backs_off() {
    let mut c = asking(50);
    at(&mut c, 150);
    reply(&mut c, MASTERS[0], true);
    reply(&mut c, MASTERS[1], true);
    reply(&mut c, MASTERS[2], false);
    time_out(&mut c, MASTERS[3]);
    let fx = time_out(&mut c, MASTERS[4]);
    assert_eq!(sent_redis(&fx), unlock_all(&c.node.job.value));
    assert_eq!(timers_set(&fx), vec![(RedlockTimer::Retry, 1_000 * MS_US)]);
    assert_eq!((c.node.held.clone(), &c.node.phase), (None, &Phase::BackingOff));
    assert!(c.node.acquisitions.is_empty());
    assert!(narration(&fx).contains("2 of 5 OK (redis-1, redis-2), short of a majority of 3"));
}

#[test]
fn a_majority_won_too_slowly_is_thrown_away_and_unlocked() {
    // With long per-master timeouts, the third OK arrives 9,898 ms after asking: no validity.
    let mut c = asking(20_000);
    reply(&mut c, MASTERS[3], false);
    reply(&mut c, MASTERS[4], false);
    reply(&mut c, MASTERS[0], true);
    reply(&mut c, MASTERS[1], true);
    at(&mut c, START_MS + TTL_MS - DRIFT_MS);
    let fx = reply(&mut c, MASTERS[2], true);
    assert_eq!(c.node.held, None);
    assert_eq!(c.node.rejected_for_time, 1);
    assert_eq!(sent_redis(&fx), unlock_all(&c.node.job.value));
    assert_eq!(c.node.phase, Phase::BackingOff);
    assert!(narration(&fx).contains("= 0 ms"));

    // One millisecond earlier, 1 ms of validity is left: that is a lock.
    let mut c = asking(20_000);
    for m in &MASTERS[..2] {
        reply(&mut c, *m, true);
    }
    reply(&mut c, MASTERS[3], false);
    reply(&mut c, MASTERS[4], false);
    at(&mut c, START_MS + TTL_MS - DRIFT_MS - 1);
    reply(&mut c, MASTERS[2], true);
    assert_eq!(
        c.node.held.as_ref().map(|l| l.deadline_local_us),
        Some((START_MS + TTL_MS - DRIFT_MS) * MS_US)
    );
}

#[test]
fn a_retry_asks_again_with_a_new_value_and_answers_from_the_old_attempt_or_strangers_are_ignored() {
    let mut c = asking(50);
    let first = c.node.job.value.clone();
    for m in MASTERS {
        time_out(&mut c, m);
    }
    at(&mut c, 1_200);
    let fx = c.fire(RedlockTimer::Retry);
    let second = c.node.job.value.clone();
    assert_ne!(first, second);
    assert_eq!(c.node.job.attempt, 2);
    assert_eq!(sent_redis(&fx).len(), 5);
    assert!(timers_set(&fx).contains(&(master_timeout(MASTERS[0], 2), 50 * MS_US)));
    // The first attempt's timeout for redis-1, a non-master's answer, a second answer.
    assert!(c.fire(master_timeout(MASTERS[0], 1)).is_empty());
    assert!(reply(&mut c, STRANGER, true).is_empty());
    reply(&mut c, MASTERS[0], false);
    assert!(reply(&mut c, MASTERS[0], true).is_empty());
    assert_eq!(c.node.phase, Phase::Acquiring);
}

#[test]
fn after_its_last_attempt_it_gives_up_and_asks_no_more() {
    let mut c = asking(50);
    for m in MASTERS {
        time_out(&mut c, m);
    }
    c.fire(RedlockTimer::Retry);
    for m in MASTERS {
        time_out(&mut c, m);
    }
    let fx = c.fire(RedlockTimer::Retry);
    assert!(sent_redis(&fx).is_empty() && timers_set(&fx).is_empty());
    assert_eq!(c.node.phase, Phase::GaveUp);
    assert_eq!(narration(&fx), "client-a gives up after 2 attempts.");
}

#[test]
fn before_each_step_it_checks_the_validity_by_its_own_clock() {
    let mut c = holding();
    at(&mut c, START_MS + TTL_MS - DRIFT_MS - 1);
    let fx = c.deliver(LEDGER, ClientMsg::Ledger(LeaseMsg::Progress { steps_done: 0 }));
    assert_eq!(
        timers_set(&fx),
        vec![(RedlockTimer::StepDone { step: 1 }, 500 * MS_US)]
    );
    assert_eq!(c.node.phase, Phase::Working { step: 1 });

    let mut c = holding();
    at(&mut c, START_MS + TTL_MS - DRIFT_MS);
    let fx = c.deliver(LEDGER, ClientMsg::Ledger(LeaseMsg::Progress { steps_done: 0 }));
    assert!(timers_set(&fx).is_empty());
    assert_eq!(sent_redis(&fx), unlock_all(&c.node.job.value));
    assert_eq!((c.node.held.clone(), &c.node.phase), (None, &Phase::OutOfTime));
    assert!(persisted(&fx).is_empty(), "the job is not done");
}

#[test]
fn its_writes_carry_no_token_and_the_last_one_records_the_job_done_and_unlocks() {
    let mut c = holding();
    c.deliver(LEDGER, ClientMsg::Ledger(LeaseMsg::Progress { steps_done: 0 }));
    let write = |step: u32| LeaseMsg::Write {
        step,
        amount: 10,
        token: FencingToken(0),
        check: WriteCheck::Unfenced,
    };
    let written = |step: u32| {
        ClientMsg::Ledger(LeaseMsg::WriteResult {
            step,
            token: FencingToken(0),
            accepted: true,
            reason: None,
        })
    };
    let fx = c.fire(RedlockTimer::StepDone { step: 1 });
    assert_eq!(sent_ledger(&fx), vec![(LEDGER, write(1))]);
    let fx = c.deliver(LEDGER, written(1));
    assert_eq!(
        timers_set(&fx),
        vec![(RedlockTimer::StepDone { step: 2 }, 500 * MS_US)]
    );
    c.fire(RedlockTimer::StepDone { step: 2 });
    let fx = c.deliver(LEDGER, written(2));
    assert_eq!(
        persisted(&fx),
        vec![&JobDurable {
            finished: true,
            requests: 0
        }]
    );
    assert_eq!(sent_redis(&fx), unlock_all(&c.node.job.value));
    assert_eq!((c.node.held.clone(), &c.node.phase), (None, &Phase::Done));
    // A stray answer for a step already past changes nothing.
    assert!(c.deliver(LEDGER, written(2)).is_empty());
}
