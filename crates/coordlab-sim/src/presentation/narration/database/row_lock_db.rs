//! What the row-locking database (PostgreSQL, or InnoDB for the users table) saw of the
//! statements and their locks, and the sentences it reads as.

use crate::protocols::database::db_sql::{user_email, RowAccess, DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE};
use crate::protocols::database::row_locks::{LockMode, RowKey};

/// A transaction in the way of a wait, and the lock it holds, in the database's own words.
pub struct Blocker<'a> {
    pub who: &'a str,
    pub lock: &'static str,
}

/// How InnoDB found the user an `UPDATE … WHERE email = …` names.
pub enum EmailLookup {
    /// Through the unique index: one record lock.
    Index,
    /// A scan at REPEATABLE READ: next-key locks on all `users` rows and the gap after.
    ScanKeepingGaps { users: usize },
    /// A scan at READ COMMITTED: it keeps the matching row only.
    ScanKeepingMatch { users: usize },
}

/// One thing the row-locking database saw; `who` is the transaction whose statement it ran.
pub enum LockDbSaw<'a> {
    NewConnectionRollsBack {
        who: &'a str,
    },
    /// The statement waits for `holders`; `gloss` says why it wants `want` where the mode's
    /// name does not.
    Waits {
        row: RowKey,
        holders: Vec<Blocker<'a>>,
        who: &'a str,
        want: &'static str,
        gloss: Option<&'static str>,
    },
    PlainClaim {
        id: u32,
        who: &'a str,
    },
    ClaimLocked {
        who: &'a str,
        id: u32,
        skipped: &'a [u32],
    },
    NoWaitRefused {
        id: u32,
        who: &'a str,
    },
    /// No job for the claim; `skipped_any` when every pending one was locked.
    NoJobLeft {
        who: &'a str,
        skipped_any: bool,
    },
    BalanceStaged {
        who: &'a str,
        account: u32,
        delta: i64,
    },
    PlainSelectCustomer {
        who: &'a str,
    },
    HoldsCustomer {
        who: &'a str,
        mode: LockMode,
        access: RowAccess,
    },
    TxnOver {
        who: &'a str,
        held: &'a [(RowKey, LockMode)],
    },
    GetsLock {
        who: &'a str,
        row: RowKey,
        lock: &'static str,
        waited_us: u64,
    },
    NoCycle {
        who: &'a str,
    },
    /// A cycle in the wait-for graph, starting at the transaction whose check ran.
    Deadlock {
        cycle: &'a [&'a str],
    },
    ConnectionGone {
        who: &'a str,
    },
    FoundByEmail {
        target: u32,
        who: &'a str,
        lookup: EmailLookup,
    },
    UserInserted {
        id: u32,
        who: &'a str,
    },
}

impl From<LockDbSaw<'_>> for String {
    fn from(saw: LockDbSaw<'_>) -> String {
        use LockDbSaw::*;
        match saw {
            NewConnectionRollsBack { who } => format!(
                "{who} opens a new connection; the transaction its old one left open is rolled back."
            ),
            Waits {
                row,
                holders,
                who,
                want,
                gloss,
            } => {
                let holders: Vec<String> = holders
                    .iter()
                    .map(|h| format!("{} ({})", h.who, h.lock))
                    .collect();
                let why = gloss.map_or(String::new(), |g| format!(" ({g})"));
                format!(
                    "{row} is held by {}. {who}'s {want}{why} conflicts with it, so its statement waits in the row's queue.",
                    holders.join(" and ")
                )
            }
            PlainClaim { id, who } => format!(
                "Job {id} is the first pending job. A plain SELECT locks nothing, so it is {who}'s — and anyone else's who asks before the status changes."
            ),
            ClaimLocked { who, id, skipped } => {
                let also = if skipped.is_empty() {
                    String::new()
                } else {
                    format!(
                        " It skipped job{} {}, locked by others.",
                        if skipped.len() > 1 { "s" } else { "" },
                        skipped.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                    )
                };
                format!("{who} locks job {id} FOR UPDATE and gets it: no other claim can take it until {who} ends its transaction.{also}")
            }
            NoWaitRefused { id, who } => format!(
                "Job {id} is locked, and NOWAIT means {who} will not wait: ERROR {LOCK_NOT_AVAILABLE}, could not obtain lock on row. Its transaction is aborted."
            ),
            NoJobLeft {
                who,
                skipped_any: false,
            } => format!("No pending job is left: {who}'s claim returns no row."),
            NoJobLeft {
                who,
                skipped_any: true,
            } => format!("Every pending job is locked by another worker. SKIP LOCKED passes over them all: {who}'s claim returns no row, though jobs are still pending."),
            BalanceStaged {
                who,
                account,
                delta,
            } => format!(
                "{who} holds the row lock on account {account}; its change of {delta:+} is staged until COMMIT."
            ),
            PlainSelectCustomer { who } => format!(
                "A plain SELECT reads the last committed version of the row and takes no row lock: {who} never waits, whoever holds the row."
            ),
            HoldsCustomer { who, mode, access } => {
                format!("{who} now holds customers#1 {mode}: {}.", access.why())
            }
            TxnOver { who, held } => format!(
                "{who}'s transaction is over: its lock{} on {} {} released.",
                if held.len() > 1 { "s" } else { "" },
                held.iter()
                    .map(|(r, _)| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if held.len() > 1 { "are" } else { "is" }
            ),
            GetsLock {
                who,
                row,
                lock,
                waited_us,
            } => format!(
                "{who} gets {row} {lock} after waiting {} ms, and its statement carries on.",
                waited_us / 1_000
            ),
            NoCycle { who } => format!(
                "{who} has waited deadlock_timeout; the database follows the wait-for graph from it and finds no cycle, so it keeps waiting."
            ),
            Deadlock { cycle } => {
                let first = cycle.first().copied().unwrap_or_default();
                format!(
                    "{first} has waited deadlock_timeout. Following who waits for whom leads back to it: {} → {first}. Nobody in that circle can ever move, so the database aborts {first}: ERROR {DEADLOCK_DETECTED}, deadlock detected. (This model aborts the one whose check ran; which one a real PostgreSQL aborts is not predictable.)",
                    cycle.join(" → ")
                )
            }
            ConnectionGone { who } => {
                format!("{who}'s connection is gone: the database rolls its transaction back.")
            }
            FoundByEmail {
                target,
                who,
                lookup,
            } => match lookup {
                EmailLookup::Index => format!("The unique index on email leads straight to user {target}: {who} takes one record lock, no gap lock."),
                EmailLookup::ScanKeepingGaps { users } => format!(
                    "No index on email: InnoDB reads all {users} users to find {}. At REPEATABLE READ it keeps a next-key lock (the row and the gap before it) on each, and on the gap after the last: {who} holds the whole table until it commits.",
                    user_email(target)
                ),
                EmailLookup::ScanKeepingMatch { users } => format!("No index on email: InnoDB reads all {users} users, but at READ COMMITTED it lets go of each row that fails the WHERE and takes no gap locks. {who} keeps user {target} only."),
            },
            UserInserted { id, who } => format!(
                "No gap lock stands where user {id} goes: {who}'s insert goes in, and the new row is its own until it commits."
            ),
        }
    }
}
