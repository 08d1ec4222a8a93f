//! What the two Redis lock clients (the single-primary [`super::redis_worker`] and the
//! [`super::redlock_client`]) share: the lock they are told to take and the job they do under
//! it, what they take off the wire, what they keep on disk, and the parts of the job that do
//! not depend on how the lock was taken — when the job fires, the attempts and their random
//! lock values, asking the ledger how far the job got, and moving from step to step.

use super::redis_msg::RedisMsg;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::presentation::narration::redis_locks::redis_job::JobSaw;
use crate::protocols::job::JobMsg;
use crate::protocols::lease::lease_msg::LeaseMsg;
use rand::Rng;

/// The lock a client takes and the job it does under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobPlan {
    /// Prefix of its lock values, e.g. `a`.
    pub short: String,
    pub key: String,
    pub ttl_ms: u64,
    /// When the job fires, by the client's clock.
    pub start_at_ms: u64,
    pub retry_ms: u64,
    pub max_attempts: u32,
    pub steps: u32,
    pub step_ms: u64,
    /// What each step debits from the ledger.
    pub amount: i64,
    pub ledger: NodeId,
}

impl JobPlan {
    /// A job of `steps` steps of `step_ms` each, each writing `amount` to `ledger`, with no
    /// lock key, TTL, start, retry or attempts yet: each family sets those it uses.
    pub fn of_steps(steps: u32, step_ms: u64, amount: i64, ledger: NodeId) -> JobPlan {
        JobPlan {
            short: String::new(),
            key: String::new(),
            ttl_ms: 0,
            start_at_ms: 0,
            retry_ms: 0,
            max_attempts: 0,
            steps,
            step_ms,
            amount,
            ledger,
        }
    }

    /// Asks the ledger how far the job got, so that a second holder in turn continues it.
    pub fn read_progress<P: Participant>(&self, ctx: &mut Ctx<'_, P>) {
        ctx.send(self.ledger, LeaseMsg::ReadProgress);
    }

    /// The ledger's answer to [`JobPlan::read_progress`]: the step to take the job up at, or
    /// nothing left to do but `release` the lock (e.g. "unlocks").
    pub fn resume<P: Participant>(&self, ctx: &mut Ctx<'_, P>, steps_done: u32, release: &str) -> Next {
        self.resume_saying(
            ctx,
            steps_done,
            |me| {
                JobSaw::AlreadyDone {
                    me,
                    steps_done,
                    release,
                }
                .into()
            },
            |me, step| JobSaw::ResumesAt { me, steps_done, step }.into(),
        )
    }

    /// [`JobPlan::resume`] in a family's own words: what it says when the job is `done`
    /// already, and when it is `resumed` part-way (at this step).
    pub fn resume_saying<P: Participant>(
        &self,
        ctx: &mut Ctx<'_, P>,
        steps_done: u32,
        done: impl FnOnce(&str) -> String,
        resumed: impl FnOnce(&str, u32) -> String,
    ) -> Next {
        if steps_done >= self.steps {
            ctx.note(done(ctx.me()));
            return Next::Finish;
        }
        if steps_done > 0 {
            ctx.note(resumed(ctx.me(), steps_done + 1));
        }
        Next::Step(steps_done + 1)
    }

    /// What comes after `step` is written.
    pub fn after(&self, step: u32) -> Next {
        if step < self.steps {
            Next::Step(step + 1)
        } else {
            Next::Finish
        }
    }
}

/// Where the job goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Work on this step.
    Step(u32),
    /// Every step is recorded: give the lock back.
    Finish,
}

/// What a lock client keeps across a crash: whether its job is done, and the request ids its
/// lock family has used, if its requests carry ids. (Its plan is its configuration.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobDurable {
    pub finished: bool,
    pub requests: u32,
}

/// What a Redis lock client takes off the wire: Redis replies and the failover monitor's
/// news, or the ledger's answers.
pub type ClientMsg = JobMsg<RedisMsg>;

/// The job's progress as a client keeps it in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Attempts to take the lock so far.
    pub attempt: u32,
    /// This attempt's lock value: random, so that a release can tell this lock from any other.
    pub value: String,
    pub finished: bool,
}

impl Job {
    pub fn recover(d: &JobDurable) -> Job {
        Job {
            attempt: 0,
            value: String::new(),
            finished: d.finished,
        }
    }

    /// At (re)start: sets `fire` for the job's hour, unless the job is already done.
    pub fn schedule<P: Participant>(&self, ctx: &mut Ctx<'_, P>, plan: &JobPlan, fire: P::Timer) {
        if self.finished {
            ctx.note(JobSaw::UpJobDone { me: ctx.me() });
            return;
        }
        let at_us = plan.start_at_ms * MS_US;
        ctx.set_timer(fire, at_us.saturating_sub(ctx.local_now_us));
    }

    /// At (re)start: sets `fire` after a delay drawn from `after_ms`, unless the job is done.
    pub fn start_after<P: Participant>(&self, ctx: &mut Ctx<'_, P>, after_ms: (u64, u64), fire: P::Timer) {
        if !self.finished {
            let delay_us = between_us(ctx.rng, after_ms.0 * MS_US, after_ms.1 * MS_US);
            ctx.set_timer(fire, delay_us);
        }
    }

    /// Starts the next attempt with a fresh random value; `false` (and says so) once every
    /// attempt is spent.
    pub fn next_attempt<P: Participant>(&mut self, ctx: &mut Ctx<'_, P>, plan: &JobPlan) -> bool {
        if self.attempt >= plan.max_attempts {
            ctx.note(JobSaw::GivesUp {
                me: ctx.me(),
                attempts: self.attempt,
            });
            return false;
        }
        self.attempt += 1;
        self.value = format!("{}-{:04x}", plan.short, ctx.rng.gen::<u16>());
        true
    }

    /// Records on disk that the job is done (with the `requests` its lock client has used).
    pub fn finish<P: Participant<Durable = JobDurable>>(&mut self, ctx: &mut Ctx<'_, P>, requests: u32) {
        self.finished = true;
        ctx.persist(JobDurable {
            finished: true,
            requests,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::message::{Inbox, Message};
    use crate::kernel::testing::{narration, Harness};
    use crate::protocols::redis_locks::redlock_client::{RedlockClient, RedlockPlan};

    fn plan() -> JobPlan {
        JobPlan {
            short: "a".into(),
            key: "lock".into(),
            ttl_ms: 10_000,
            start_at_ms: 100,
            retry_ms: 1_000,
            max_attempts: 2,
            ..JobPlan::of_steps(3, 500, 10, NodeId(1))
        }
    }

    fn client() -> Harness<RedlockClient> {
        let plan = RedlockPlan {
            job: plan(),
            masters: vec![NodeId(0)],
            master_timeout_ms: 50,
            retry_jitter_ms: 0,
        };
        let c = RedlockClient::recover(&plan, &JobDurable::default());
        Harness::new(NodeId(2), c, &["redis-1", "ledger", "client-a"])
    }

    #[test]
    fn a_client_takes_redis_and_ledger_messages_and_nothing_else() {
        let redis: Box<dyn Message> = Box::new(RedisMsg::WhoIsPrimary);
        assert_eq!(
            ClientMsg::accept(redis),
            Some(ClientMsg::Lock(RedisMsg::WhoIsPrimary))
        );
        let ledger: Box<dyn Message> = Box::new(LeaseMsg::Progress { steps_done: 2 });
        assert_eq!(
            ClientMsg::accept(ledger),
            Some(ClientMsg::Ledger(LeaseMsg::Progress { steps_done: 2 }))
        );
        assert_eq!(
            ClientMsg::accept(Box::new(crate::protocols::database::sql::SqlMsg::Reply(
                crate::protocols::database::sql::SqlReply::Committed
            ))),
            None
        );
    }

    #[test]
    fn the_job_resumes_after_the_steps_the_ledger_has() {
        let mut c = client();
        let fx = c.call(|_, ctx| assert_eq!(plan().resume(ctx, 0, "unlocks"), Next::Step(1)));
        assert_eq!(narration(&fx), "");
        let fx = c.call(|_, ctx| assert_eq!(plan().resume(ctx, 2, "unlocks"), Next::Step(3)));
        assert!(narration(&fx).contains("client-a takes the job up at step 3"));
        let fx = c.call(|_, ctx| assert_eq!(plan().resume(ctx, 3, "unlocks"), Next::Finish));
        assert!(narration(&fx).ends_with("so client-a only unlocks."));
        assert_eq!(plan().after(2), Next::Step(3));
        assert_eq!(plan().after(3), Next::Finish);
    }

    #[test]
    fn attempts_draw_fresh_values_until_they_run_out() {
        let mut c = client();
        let mut job = Job::recover(&JobDurable::default());
        let mut values = Vec::new();
        for _ in 0..2 {
            c.call(|_, ctx| assert!(job.next_attempt(ctx, &plan())));
            assert!(job.value.starts_with("a-"));
            values.push(job.value.clone());
        }
        assert_eq!(job.attempt, 2);
        assert_ne!(values[0], values[1], "each attempt has a value of its own");
        let fx = c.call(|_, ctx| assert!(!job.next_attempt(ctx, &plan())));
        assert_eq!(narration(&fx), "client-a gives up after 2 attempts.");
        assert_eq!(job.attempt, 2);
    }
}
