//! The card of a job runner ([`JobRunner`]): its lock client's words around the job's phase, and
//! the card half every lock client implements ([`LockCard`]).

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::Summary;
use crate::presentation::cards::card;
use crate::protocols::job::{At, JobRunner, LockClient, Phase};
use crate::protocols::redis_locks::redis_job::JobDurable;

impl<L: LockClient> JobRunner<L> {
    /// What it is doing, in a few words (the card's first line).
    pub fn doing(&self) -> String {
        match &self.phase {
            Phase::Idle => "waiting for the job".to_string(),
            Phase::Acquiring | Phase::Watching | Phase::Confirming => {
                self.lock.asking(&self.plan, &self.phase).0
            }
            // (A phase its family never enters shares a neighbour's words, so that its runner
            // leaves the text out.)
            Phase::Stamping if L::STAMPS => "stamping the row with its token".to_string(),
            Phase::Stamping | Phase::ReadingProgress => "checking the job's progress".to_string(),
            Phase::Checking { step } if L::CHECKS => format!("step {step}: checking token"),
            Phase::Checking { step } | Phase::Working { step } => format!("step {step}: working"),
            Phase::Rereading { step } => format!("step {step}: re-reading token"),
            Phase::Writing { step } => format!("step {step}: writing"),
            Phase::Releasing => "releasing".to_string(),
            Phase::BackingOff => "backing off".to_string(),
            Phase::Done => "done".to_string(),
            Phase::Stopped => "stopped: write refused".to_string(),
            Phase::OutOfTime => "stopped: validity over".to_string(),
            Phase::Lost => "lock lost".to_string(),
            Phase::GaveUp => "gave up".to_string(),
        }
    }
}

impl<L: LockClient> Card for JobRunner<L> {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let s = match &self.phase {
            Phase::Idle => card::idle(),
            Phase::Acquiring | Phase::Watching | Phase::Confirming => {
                self.lock.asking(&self.plan, &self.phase).1
            }
            Phase::Stamping if L::STAMPS => card::holder("stamping the row"),
            Phase::Stamping | Phase::ReadingProgress => card::holder("checking progress"),
            Phase::Checking { step } if L::CHECKS => card::holder(card::step(*step, "checking token")),
            Phase::Checking { step } | Phase::Working { step } => card::holder(card::step(*step, "working")),
            Phase::Rereading { step } => card::holder(card::step(*step, "re-reading token")),
            Phase::Writing { step } => card::holder(card::step(*step, "writing")),
            Phase::Releasing => card::releasing(),
            Phase::BackingOff => card::backing_off(),
            Phase::Done => card::done(),
            Phase::Stopped => card::stopped("write refused"),
            Phase::OutOfTime => card::stopped("validity over"),
            Phase::Lost => card::stopped("lock lost"),
            Phase::GaveUp => card::gave_up(L::GAVE_UP),
        };
        let at = At {
            plan: &self.plan,
            job: &self.job,
            phase: &self.phase,
        };
        self.lock.decorate(s, at, view)
    }

    fn durable_summary(_plan: &L::Plan, durable: &JobDurable, _view: &ViewCtx<'_>) -> Summary {
        L::durable_summary(durable)
    }
}

/// The card half of a lock client: what its job runner's card says of the lock while it asks,
/// holds or is down, and the words its card and narration need from the family. Each family's
/// impl lives in `crate::presentation::cards`, beside the participants' cards. `Plan` is the
/// client's own ([`LockClient::Plan`]).
pub trait LockCard<Plan = <Self as LockClient>::Plan>
where
    Self: Sized,
{
    /// What the narration says it does when the ledger has every step already ("unlocks").
    const RELEASE_WORDS: &'static str;
    /// Why it gave up, on its card.
    const GAVE_UP: &'static str = "no attempts left";
    /// What it is doing while acquiring or confirming: a few words and the card.
    fn asking(&self, plan: &Plan, phase: &Phase) -> (String, Summary);
    /// Adds what it holds to the card.
    fn decorate(&self, s: Summary, at: At<'_, Self>, view: &ViewCtx<'_>) -> Summary
    where
        Self: LockClient;
    /// The card of a client that is down.
    fn durable_summary(durable: &JobDurable) -> Summary {
        durable.summary()
    }
}
