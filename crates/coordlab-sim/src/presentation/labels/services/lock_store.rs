//! How the lock table's operations ([`LockOp`]) and their results ([`LockResult`]) read in a
//! log entry's label and in the event log.

use crate::presentation::durations::seconds;
use crate::protocols::services::lock_store::{lock_key, LockOp, LockResult};
use std::fmt;

impl fmt::Display for LockOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockOp::LeaseGrant {
                ttl_ms, owner_name, ..
            } => write!(f, "LeaseGrant ttl {} for {owner_name}", seconds(*ttl_ms)),
            LockOp::Acquire {
                prefix,
                lease,
                owner_name,
                ..
            } => write!(
                f,
                "Txn If(CreateRevision(k) == 0) Then(Put(k, {owner_name}, lease {lease})), k = {}",
                lock_key(prefix, *lease)
            ),
            LockOp::LeaseRevoke { lease, expired } => write!(
                f,
                "LeaseRevoke {lease}{}",
                if *expired { " (expired)" } else { "" }
            ),
            LockOp::Barrier => write!(f, "no-op (new leader)"),
        }
    }
}

impl fmt::Display for LockResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockResult::LeaseGranted { lease, ttl_ms, .. } => {
                write!(f, "lease {lease}, ttl {}", seconds(*ttl_ms))
            }
            LockResult::Acquired {
                put,
                create_revision,
                first_key,
                first_revision,
                header,
                ..
            } => write!(
                f,
                "{} rev {create_revision}; first in line {first_key} (rev {first_revision}); header rev {header}",
                if *put { "created at" } else { "exists since" }
            ),
            LockResult::LeaseNotFound { lease } => write!(f, "lease {lease} not found"),
            LockResult::Revoked {
                lease,
                deleted,
                header,
            } => {
                if deleted.is_empty() {
                    write!(f, "lease {lease} revoked, no keys; rev stays {header}")
                } else {
                    write!(f, "lease {lease} revoked, {} deleted at rev {header}", deleted.join(", "))
                }
            }
            LockResult::Done => write!(f, "ok"),
        }
    }
}
