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

/// The statement a step's debit runs on the ledger, with its values bound: amounts are in
/// paise (`balance_minor`), so ₹10 is `1000`.
pub fn debit_sql(amount: i64, token: FencingToken, check: WriteCheck) -> String {
    let set = format!(
        "UPDATE account_state SET balance_minor = balance_minor - {}",
        amount * 100
    );
    match check {
        WriteCheck::TokenPredicate => {
            format!("{set}, last_token = {token} WHERE account_id = 42 AND last_token <= {token}")
        }
        _ if check.no_token(token) => format!("{set} WHERE account_id = 42"),
        WriteCheck::Unfenced => {
            format!("{set}, last_token = GREATEST(last_token, {token}) WHERE account_id = 42")
        }
    }
}

/// The statement of a heartbeat mark, with its value bound.
pub fn mark_sql(token: FencingToken) -> String {
    format!("UPDATE account_state SET last_token = {token} WHERE account_id = 42 AND last_token < {token}")
}

/// Why a fenced resource refused a write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RejectReason {
    StaleToken {
        token: FencingToken,
        highest: FencingToken,
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

/// The parts of [`LeaseMsg`], by the participants that speak them. A bundle leaves out of its
/// code, labels and narration every part that none of its scenarios sends ([`speaks`]):
/// consensus-lock's ledger takes debits and progress reads only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeasePart {
    /// A job's debits on the ledger and its reads of the job's progress.
    Writes,
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
    /// Where the part may be sent: every bundle with a participant that can send it (`tests`
    /// runs every scenario and checks that what it sends is spoken in its bundle; `Writes`
    /// goes wherever a ledger is). The lease
    /// worker marks and uses the store wherever it is, and claims job rows and writes run keys
    /// only in the `leases` bundle, pays only in `unfenceable` (as its plan allows:
    /// `lease_worker::plan`); the call worker also claims job rows and pays; the lock
    /// services' jobs only write.
    pub const fn spoken(self) -> Spoken {
        match self {
            LeasePart::Writes => Spoken {
                bundles: &[],
                here: true,
            },
            LeasePart::Marks => spoken_in!("leases", "fencing", "unfenceable", "across-call"),
            LeasePart::RunKeys => spoken_in!("leases"),
            LeasePart::JobTable => spoken_in!("leases", "across-call"),
            LeasePart::Store => spoken_in!("leases", "fencing", "unfenceable", "across-call"),
            LeasePart::Payments => spoken_in!("unfenceable", "across-call"),
        }
    }
}

/// Whether this build speaks `part`: the guard on every arm that labels or handles a part
/// other than [`LeasePart::Writes`], so that a bundle which does not speak it leaves the arm
/// out. In tests it also records the part, for the check that each scenario sends only what
/// its bundle speaks.
#[inline(always)]
pub fn speaks(part: LeasePart) -> bool {
    #[cfg(test)]
    tests::record(part);
    part.spoken().here
}

/// Milliseconds as seconds for labels, e.g. `30 s` or `1.5 s`.
pub fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1_000) {
        format!("{} s", ms / 1_000)
    } else {
        let millis = format!("{:03}", ms % 1_000);
        format!("{}.{} s", ms / 1_000, millis.trim_end_matches('0'))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bundles::{every_variant, run_variant};
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    thread_local! {
        /// The parts [`speaks`] was asked about on this thread: every message sent is labelled
        /// for the trace, and each label of a part asks.
        static LABELLED: RefCell<BTreeSet<LeasePart>> = const { RefCell::new(BTreeSet::new()) };
    }

    pub(crate) fn record(part: LeasePart) {
        LABELLED.with(|l| l.borrow_mut().insert(part));
    }

    /// A bundle leaves out the parts of [`LeaseMsg`] none of its scenarios sends: every
    /// scenario, at its defaults and with each choice of each of its parameters, sends only
    /// parts its bundles speak. The lists name every bundle with a participant that can send
    /// the part, so that a part sent only after a fault is covered too.
    #[test]
    fn every_scenario_sends_only_the_lease_parts_its_bundle_speaks() {
        let mut seen = BTreeSet::new();
        let mut wrong = Vec::new();
        for (def, bundles, params) in every_variant() {
            LABELLED.with(|l| l.borrow_mut().clear());
            run_variant(def, &params);
            for part in LABELLED.with(|l| l.borrow().clone()) {
                let spoken = part.spoken();
                for bundle in &bundles {
                    if !(spoken.here && spoken.bundles.contains(bundle)) {
                        wrong.push(format!(
                            "{} (bundle {bundle}) sends {part:?} with {params:?}",
                            def.id
                        ));
                    }
                }
                seen.insert(part);
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        assert_eq!(seen.len(), 5, "the check saw every part it gates sent: {seen:?}");
    }
}
