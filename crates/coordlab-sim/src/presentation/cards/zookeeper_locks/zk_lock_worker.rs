//! What a ZooKeeper worker's card says of its lock znode ([`ZkLock`]).

use super::zookeeper::short_name;
use crate::kernel::participant::ViewCtx;
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::redis_locks::redis_job::JobDurable;
use crate::protocols::zookeeper_locks::zk_lock_worker::{Stage, ZkLock, ZkPlan};
use crate::protocols::zookeeper_locks::zookeeper::base_name;

impl LockCard for ZkLock {
    const RELEASE_WORDS: &'static str = "deletes its node";

    fn asking(&self, _plan: &ZkPlan, phase: &Phase) -> (String, Summary) {
        let doing = match (phase, &self.ahead, self.stage) {
            (Phase::Watching, Some(p), _) => format!("watching {}", short_name(base_name(p))),
            (Phase::Watching, None, _) => "watching the lock node".to_string(),
            (_, _, Stage::Connecting) => "connecting".to_string(),
            (_, _, Stage::Creating) => "creating its lock node".to_string(),
            (_, _, Stage::Listing) => "listing the lock's children".to_string(),
        };
        let s = match phase {
            Phase::Watching => card::waiting(doing.clone()),
            _ => card::asking(doing.clone()),
        };
        (doing, s)
    }

    fn decorate(&self, s: Summary, at: At<'_, Self>, _view: &ViewCtx<'_>) -> Summary {
        let mut s = match at.phase {
            Phase::Lost => Summary::new("expired", Tone::Failed).detail("its session expired"),
            Phase::Releasing if self.closing => {
                Summary::new("closing", Tone::Quiet).detail("closing its session")
            }
            Phase::Stopped => card::stopped("write rejected"),
            _ => s,
        };
        match (self.token, &self.node) {
            (Some(t), _) => s = s.badge("token", t),
            (None, Some(n)) if self.session.is_some() => {
                s = s
                    .badge("node", short_name(base_name(n)))
                    .minor(base_name(n).to_string())
            }
            _ => {}
        }
        if self.wakeups > 0 {
            s = s.badge("woken", self.wakeups);
        }
        s
    }

    fn durable_summary(durable: &JobDurable) -> Summary {
        card::down_with_job_as(durable.finished, ["batch posted", "batch not posted"])
    }
}
