//! What an etcd client's card says of its mutex ([`EtcdMutex`]).

use crate::kernel::ids::NodeId;
use crate::kernel::participant::ViewCtx;
use crate::kernel::view::Summary;
use crate::presentation::cards::card;
use crate::protocols::job::{At, LockCard, Phase};
use crate::protocols::services::lock_client::{EtcdMutex, EtcdPlan, EtcdWorker, Stage};

impl LockCard for EtcdMutex {
    const RELEASE_WORDS: &'static str = "releases the lock";

    /// The runner knows no names:
    /// [`EtcdWorker::doing_via`](crate::protocols::services::lock_client::EtcdWorker::doing_via)
    /// and `decorate` say which server it asks.
    fn asking(&self, _plan: &EtcdPlan, phase: &Phase) -> (String, Summary) {
        let doing = self.doing(phase, |_| "");
        let s = match phase {
            Phase::Watching => card::waiting(match &self.watching {
                Some(w) => format!("watching …/{}", w.key.rsplit('/').next().unwrap_or_default()),
                None => "watching".into(),
            }),
            _ => card::asking(doing.clone()),
        };
        (doing, s)
    }

    fn decorate(&self, s: Summary, at: At<'_, Self>, view: &ViewCtx<'_>) -> Summary {
        let via = view.name(self.guess);
        let s = match (at.phase, self.stage) {
            (Phase::Acquiring, Stage::Granting) => card::asking(format!("lease via {via}")),
            (Phase::Acquiring, Stage::Putting) => card::asking(format!("putting its key via {via}")),
            (Phase::Lost, _) => card::stopped("lease lost"),
            (Phase::Stopped, _) => card::stopped("write rejected"),
            _ => s,
        };
        if let Some(h) = self.held {
            // Its key's create revision is its fencing token.
            s.badge("token", h.revision).detail(format!(
                "key rev {} via {}",
                h.revision,
                view.name(h.granted_by)
            ))
        } else if let (Some(lease), Some(rev)) = (self.lease, self.my_revision) {
            s.detail(format!("lease {lease} · key rev {rev}"))
        } else {
            s
        }
    }
}

impl EtcdMutex {
    /// What it is doing while it asks or waits; `name` gives a node's display name.
    pub(crate) fn doing<'n>(&self, phase: &Phase, name: impl Fn(NodeId) -> &'n str) -> String {
        match (phase, self.stage) {
            (Phase::Watching, _) => match &self.watching {
                Some(w) => format!("watching {}", w.key),
                None => "watching".into(),
            },
            (_, Stage::Granting) => format!("asking {} for a lease", name(self.guess)),
            (_, Stage::Putting) => format!("putting its key via {}", name(self.guess)),
            (_, Stage::Looking) => "reading which key is ahead".into(),
        }
    }
}

impl EtcdWorker {
    /// What it is doing, in a few words (the workers table); `name` gives a node's display
    /// name.
    pub fn doing_via<'n>(&self, name: impl Fn(NodeId) -> &'n str) -> String {
        match &self.phase {
            Phase::Acquiring | Phase::Watching => self.lock.doing(&self.phase, name),
            Phase::Lost => "stopped: lease lost".into(),
            Phase::Stopped => "stopped: write rejected".into(),
            _ => self.doing(),
        }
    }
}
