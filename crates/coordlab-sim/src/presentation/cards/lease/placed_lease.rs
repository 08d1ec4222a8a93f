//! The card of a placed lease table ([`PlacedLease`]): its rows, as the node it sits on sees them.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::lease::placed_lease::{PlacedLease, Replication, TokenSource};

impl Card for PlacedLease {
    fn summary(&self, view: &ViewCtx<'_>) -> Summary {
        let row = &self.durable.row;
        let owner = row.owner.map_or("earlier-run", |o| view.name(o));
        let state = if row.owner.is_none() || row.expires_at_us <= view.local_now_us {
            card::Lease::Expired
        } else {
            card::Lease::Left(row.expires_at_us - view.local_now_us)
        };
        let c = &self.config;
        let alone = c.replicas.is_empty() && c.standby.is_none() && c.takes_over_from.is_none();
        let s = match (self.primary, c.local_to) {
            // One table and no copies: unless its place is the story, the lease is.
            (true, None) if alone && !c.replica && !c.role_on_card => state.word(),
            (false, _) if self.config.replication == Replication::Stream => {
                Summary::new("read replica", Tone::Quiet)
            }
            (false, _) => Summary::new("replica", Tone::Quiet),
            (true, Some(_)) => Summary::new("own table", Tone::Holds).detail("this node's own table"),
            (true, None) => Summary::new("primary", Tone::Holds),
        };
        let mut s = card::lease(s, owner, "token", row.token, state);
        if self.primary && self.config.replica {
            s = s.detail("took over as primary");
        }
        if self.syncing {
            s = s.detail("syncing with the copies");
        }
        if let Some(counter) = self.config.source.counter() {
            s = s.minor(format!("token: {counter}"));
        }
        s
    }
}

impl TokenSource {
    /// What the store counts that serves as the token, when it is not a lease table's own
    /// `fence_token` column.
    pub(crate) fn counter(self) -> Option<&'static str> {
        match self {
            TokenSource::LeaseTable => None,
            TokenSource::PostgresSequence => Some("nextval of a sequence"),
            TokenSource::DynamoDb => Some("the fence attribute"),
            TokenSource::K8sLease => Some("leaseTransitions"),
            TokenSource::Etcd => Some("the key's revision"),
            TokenSource::ZooKeeper => Some("the znode's czxid"),
            TokenSource::RedisLua => Some("INCR of a fence key"),
        }
    }
}
