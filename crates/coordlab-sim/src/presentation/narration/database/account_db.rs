//! What the account database saw of the statements on its one row, and the sentences it
//! reads as.

use crate::presentation::amounts::rupees;
use crate::protocols::database::sql::ACCOUNT_ID;

/// One thing the account database saw; `who` is the client whose statement it ran.
pub enum AccountDbSaw<'a> {
    Up {
        balance: i64,
    },
    PlainSelect {
        balance: i64,
        who: &'a str,
    },
    LockGranted {
        who: &'a str,
        balance: i64,
    },
    LockQueued {
        holder: &'a str,
        who: &'a str,
    },
    WriteStaged {
        who: &'a str,
        balance: i64,
        committed: i64,
    },
    VersionMatched {
        expected_version: u64,
        before: i64,
        balance: i64,
    },
    VersionConflict {
        who: &'a str,
        expected_version: u64,
        version: u64,
    },
    Committed {
        who: &'a str,
        balance: i64,
        before: i64,
    },
    /// The commit left the balance where it was: `debits` are committed, one lost.
    LostUpdate {
        debits: u32,
        who: &'a str,
    },
    RolledBack {
        who: &'a str,
    },
    LockReleased,
    LockPasses {
        next: &'a str,
        balance: i64,
    },
}

impl From<AccountDbSaw<'_>> for String {
    fn from(saw: AccountDbSaw<'_>) -> String {
        use AccountDbSaw::*;
        match saw {
            Up { balance } => format!(
                "The database holds account {ACCOUNT_ID} with a committed balance of {}.",
                rupees(balance)
            ),
            PlainSelect { balance, who } => format!(
                "The database returns {} to {who}. A plain SELECT takes no lock, so nothing stops another worker reading the same value right now.",
                rupees(balance)
            ),
            LockGranted { who, balance } => format!(
                "The lock manager writes down \"row {ACCOUNT_ID}: held exclusively by {who}\" and returns the balance, {}.",
                rupees(balance)
            ),
            LockQueued { holder, who } => format!(
                "Row {ACCOUNT_ID} is locked by {holder}. {who}'s SELECT … FOR UPDATE does not return: it queues in the lock manager until the holder commits."
            ),
            WriteStaged {
                who,
                balance,
                committed,
            } => format!(
                "{who}'s write of {} is staged inside its transaction; everyone else still sees the committed {}.",
                rupees(balance),
                rupees(committed)
            ),
            VersionMatched {
                expected_version,
                before,
                balance,
            } => format!(
                "The row is still at version {expected_version}, so the check and the write happen as one step: {} becomes {}, version {}.",
                rupees(before),
                rupees(balance),
                expected_version + 1
            ),
            VersionConflict {
                who,
                expected_version,
                version,
            } => format!(
                "{who} expected version {expected_version}, but the row is at version {version}: someone changed it after {who} read it. Zero rows updated — the stale write is refused."
            ),
            Committed {
                who,
                balance,
                before,
            } => format!(
                "COMMIT: {who}'s {} replaces {} as the balance.",
                rupees(balance),
                rupees(before)
            ),
            LostUpdate { debits, who } => format!(
                "{debits} debits are now committed, yet the balance only moved once: {who} overwrote the other debit with a value computed from a stale read. A lost update."
            ),
            RolledBack { who } => format!(
                "The database owns {who}'s connection, so it knows the client is gone: it rolls the transaction back without being asked."
            ),
            LockReleased => format!("The lock on row {ACCOUNT_ID} is released."),
            LockPasses { next, balance } => format!(
                "The lock on row {ACCOUNT_ID} passes to {next}, whose waiting SELECT now returns the committed {}.",
                rupees(balance)
            ),
        }
    }
}
