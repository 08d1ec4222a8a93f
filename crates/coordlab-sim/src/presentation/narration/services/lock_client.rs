//! What a worker holding the etcd-style mutex saw, and the sentences it reads as.

use crate::presentation::durations::seconds;
use crate::protocols::lease::lease_msg::RejectReason;
use crate::protocols::services::lock_store::LeaseId;

/// One thing a mutex worker saw; `me` is the worker's own name.
pub enum EtcdMutexSaw<'a> {
    DemoOver {
        me: &'a str,
    },
    NoAnswer {
        me: &'a str,
        silent: &'a str,
        next: &'a str,
    },
    KeyDeleted {
        me: &'a str,
        key: &'a str,
        revision: u64,
    },
    LostPlace {
        me: &'a str,
        lease: LeaseId,
    },
    LeaseGoneWhileHolding {
        me: &'a str,
        lease: LeaseId,
    },
    HasLease {
        me: &'a str,
        lease: LeaseId,
        keepalive_ms: u64,
        header: u64,
        key: &'a str,
    },
    /// Its key is in place at `create_revision`; `put` when this request created it.
    Holds {
        put: bool,
        create_revision: u64,
        me: &'a str,
        server: &'a str,
    },
    Queued {
        put: bool,
        create_revision: u64,
        first_key: &'a str,
        first_revision: u64,
        me: &'a str,
    },
    LetGo {
        me: &'a str,
    },
    Watches {
        me: &'a str,
        key: &'a str,
        rev: u64,
        mine: u64,
        header: u64,
    },
    NothingAhead {
        me: &'a str,
        mine: u64,
    },
    UpJobDone {
        me: &'a str,
    },
    Fires {
        me: &'a str,
        ttl_ms: u64,
    },
    WatchMoved {
        me: &'a str,
        down: &'a str,
        key: &'a str,
        server: &'a str,
        from: u64,
    },
    Writes {
        me: &'a str,
        step: u32,
        revision: u64,
    },
    Refused {
        me: &'a str,
        why: Option<&'a RejectReason>,
    },
    Finished {
        me: &'a str,
        lease: LeaseId,
        revision: u64,
    },
}

/// How its key came to be at `create_revision`.
fn how(put: bool, create_revision: u64) -> String {
    if put {
        format!("The put created its key at revision {create_revision}")
    } else {
        format!("Its key already existed (a retried request), created at revision {create_revision}")
    }
}

impl From<EtcdMutexSaw<'_>> for String {
    fn from(saw: EtcdMutexSaw<'_>) -> String {
        use EtcdMutexSaw::*;
        match saw {
            DemoOver { me } => format!("The demo is over; {me} stops asking."),
            NoAnswer { me, silent, next } => format!(
                "{me} heard nothing back from {silent}; it sends the same request to {next}."
            ),
            KeyDeleted { me, key, revision } => format!(
                "{me} hears that {key} was deleted at revision {revision}. A key ahead may remain, so it reads again before it believes anything (etcd's mutex loops the same way)."
            ),
            LostPlace { me, lease } => format!(
                "{me}'s lease {lease} is gone, and its key with it: it has lost its place in line. It starts again with a new session."
            ),
            LeaseGoneWhileHolding { me, lease } => format!(
                "{me}'s keep-alive finds lease {lease} gone: its key was deleted with it, so the lock is no longer its own. It stops."
            ),
            HasLease {
                me,
                lease,
                keepalive_ms,
                header,
                key,
            } => format!(
                "{me} has lease {lease}; it will send a keep-alive every {}. The grant went through the log but changed no key, so the store's revision stays {header}. Now it puts its own key, {key}, only if that key does not exist yet.",
                seconds(keepalive_ms)
            ),
            Holds {
                put,
                create_revision,
                me,
                server,
            } => format!(
                "{}, and no key under the prefix is older: {me} holds the lock. Its token is that create revision — assigned by the store, committed on a majority before {server} answered.",
                how(put, create_revision)
            ),
            Queued {
                put,
                create_revision,
                first_key,
                first_revision,
                me,
            } => format!(
                "{}; {first_key} (revision {first_revision}) is older and holds the lock. {me} does not poll: it looks up the key created just before its own and waits for that one to go.",
                how(put, create_revision)
            ),
            LetGo { me } => format!("{me} has let go of the lock."),
            Watches {
                me,
                key,
                rev,
                mine,
                header,
            } => format!(
                "{me} watches {key} (revision {rev}), the key just ahead of its own (revision {mine}), from revision {header}: it will hear of its deletion, even one that happened a moment ago."
            ),
            NothingAhead { me, mine } => format!(
                "No key ahead of {me}'s, and its own is still there: it holds the lock. Its token is its key's create revision, {mine}."
            ),
            UpJobDone { me } => format!("{me} is up again; its job is already done."),
            Fires { me, ttl_ms } => format!(
                "{me}'s job fires. Before anything else it opens a session with the lock service: a lease of {}.",
                seconds(ttl_ms)
            ),
            WatchMoved {
                me,
                down,
                key,
                server,
                from,
            } => format!(
                "{me}'s watch went down with {down}. It watches {key} again on {server}, from the same revision {from}, so it misses no deletion."
            ),
            Writes {
                me,
                step,
                revision,
            } => format!(
                "{me} has done step {step}'s work and sends the debit; its key's create revision {revision} is its token, part of the write's WHERE clause."
            ),
            Refused { me, why } => format!(
                "{me}'s write was refused ({}). A refusal means a newer holder exists: it stops at once. Consensus kept the lock service's own leaders in line; only this token check could stop a worker that never knew it had been frozen.",
                why.map(|r| r.text()).unwrap_or_default()
            ),
            Finished {
                me,
                lease,
                revision,
            } => format!(
                "{me} has finished the job and closes its session: revoking lease {lease} deletes its key (revision {revision}), which lets the next in line go."
            ),
        }
    }
}
