//! The wire vocabulary of the lease chapter: workers talk to a lease store, a fenced
//! resource (a ledger row), a payment rail, or a job table.

use crate::bundles::{spoken_in, Spoken};
use crate::kernel::ids::{FencingToken, NodeId};

crate::inbox!(LeaseMsg);

/// How a worker releases a lease when it is done: whether its statement checks the owner.
/// What the statement does to the row — delete it, or expire it and keep its counter — is
/// the lease store's [`super::lease_store::ReleaseStyle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseMode {
    /// `… WHERE name = :name` — whoever holds it now.
    NaiveDelete,
    /// `… WHERE name = :name AND owner = :me`, one atomic step.
    CompareAndDelete,
}

/// Whether a write asks the resource to check its token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteCheck {
    /// `UPDATE … WHERE account_id = 42` — applied whatever the token. A write that carries
    /// token 0 this way carries no token at all.
    Unfenced,
    /// `UPDATE … WHERE account_id = 42 AND last_token <= :token` — the check is the write.
    TokenPredicate,
}

impl WriteCheck {
    /// Whether a write with `token` and this check carries no token at all: unfenced and
    /// token 0 (a checked write may carry a real token 0, e.g. ZooKeeper's first sequence
    /// number).
    pub fn no_token(self, token: FencingToken) -> bool {
        self == WriteCheck::Unfenced && token.0 == 0
    }
}

/// Why a fenced resource refused a write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RejectReason {
    StaleToken {
        token: FencingToken,
        highest: FencingToken,
        /// Whether `highest` came from the refused writer itself (its own renewal's token),
        /// as far as the ledger saw: a worker fenced out by its own renewal, not by a rival.
        by_writer: bool,
    },
    /// The write's transaction also inserted the run's key, which `job_run` already has: the
    /// run happened, and the whole transaction rolled back.
    RunKeyTaken { key: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseMsg {
    /// The insert-or-take-over statement (`INSERT … ON CONFLICT (name) DO UPDATE … WHERE …
    /// RETURNING fence_token`): take the lease if absent, expired or already mine.
    Acquire {
        lease: String,
        ttl_ms: u64,
    },
    Granted {
        lease: String,
        token: FencingToken,
        ttl_ms: u64,
    },
    Denied {
        lease: String,
        holder: NodeId,
    },
    Release {
        lease: String,
        mode: ReleaseMode,
    },
    /// `deleted`: whether the release changed a row — deleted it, or set it to expire now,
    /// as the store's release style says.
    Released {
        lease: String,
        deleted: bool,
    },
    /// One step of the protected work: debit `amount` from the account.
    Write {
        step: u32,
        amount: i64,
        token: FencingToken,
        check: WriteCheck,
    },
    /// The job's debit and its run key in one transaction: `INSERT INTO job_run (job_key)
    /// VALUES (:key)` and the debit commit together, or neither does (a key already there
    /// rolls both back). Answered with `WriteResult`.
    WriteWithRunKey {
        step: u32,
        amount: i64,
        token: FencingToken,
        check: WriteCheck,
        key: String,
    },
    /// A liveness mark on the protected row, carrying the worker's current token.
    Touch {
        token: FencingToken,
    },
    /// A new holder's stamp on taking over: raise the row's token to `token` if it is not
    /// higher already, and answer with the row's token (`TokenIs`), in one statement.
    Stamp {
        token: FencingToken,
    },
    WriteResult {
        step: u32,
        token: FencingToken,
        accepted: bool,
        reason: Option<RejectReason>,
    },
    /// `SELECT last_token FROM account_state WHERE account_id = 42`.
    ReadToken,
    TokenIs {
        last_token: FencingToken,
    },
    /// How far the job has got: the highest step recorded as done.
    ReadProgress,
    Progress {
        steps_done: u32,
    },
    /// A payment instruction to a rail that knows no tokens.
    Pay {
        step: u32,
        amount: i64,
        idempotency_key: Option<String>,
    },
    PayResult {
        step: u32,
        applied: bool,
    },
    /// `INSERT INTO job_run (job_key) VALUES (:key)` — a unique constraint decides.
    InsertJobRow {
        key: String,
    },
    /// `UPDATE job SET state = 'running' WHERE key = :key AND state = 'pending'`.
    ClaimJob {
        key: String,
    },
    /// Rows the statement changed: 1 means "you own the work", 0 means someone beat you.
    RowsChanged {
        rows: u32,
    },
}

/// The parts of [`LeaseMsg`] only some bundles use; every ledger takes debits and progress
/// reads. A bundle leaves out of its code, labels and narration each part none of its
/// scenarios sends ([`speaks`]): consensus-lock's ledger takes debits and progress reads only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeasePart {
    /// The ledger's token itself: a new holder's stamp, heartbeat marks, `SELECT last_token`.
    Marks,
    /// A debit and its run key in one transaction (and the duplicate key that refuses it).
    RunKeys,
    /// The lease store's acquire and release.
    Store,
    /// Payments through a rail or a payment API.
    Payments,
    /// Claims on the job table.
    JobTable,
}

impl LeasePart {
    /// Every bundle with a participant that can send the part: the lease worker marks and
    /// uses the store wherever it is, claims job rows and writes run keys only in `leases`
    /// and pays only in `unfenceable` (as its plan allows: `lease_worker::plan`); the call
    /// worker claims job rows and pays too. `crate::bundles` checks every scenario against it.
    pub const fn spoken(self) -> Spoken {
        match self {
            LeasePart::Marks => spoken_in!("leases", "fencing", "unfenceable", "across-call"),
            LeasePart::RunKeys => spoken_in!("leases"),
            LeasePart::JobTable => spoken_in!("leases", "across-call"),
            LeasePart::Store => spoken_in!("leases", "fencing", "unfenceable", "across-call"),
            LeasePart::Payments => spoken_in!("unfenceable", "across-call"),
        }
    }
}

/// Whether this build speaks `part`: the guard on every arm that labels or handles it, which
/// a bundle that does not speak it leaves out. In tests it also records the part.
#[inline(always)]
pub fn speaks(part: LeasePart) -> bool {
    #[cfg(test)]
    crate::bundles::tests::used(format!("{part:?}"), part.spoken());
    part.spoken().here
}
