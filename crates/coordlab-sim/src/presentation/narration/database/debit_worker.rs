//! What a debit worker saw as it read, computed and wrote the account's balance, and the
//! sentences it reads as.

use crate::presentation::amounts::rupees;
use crate::protocols::database::debit_worker::DebitStrategy;
use crate::protocols::database::sql::ACCOUNT_ID;

/// One thing a debit worker saw; `me` is the worker's own name.
pub enum DebitWorkerSaw<'a> {
    Scheduled {
        me: &'a str,
        amount: i64,
    },
    AlreadyDone {
        me: &'a str,
    },
    Reads {
        me: &'a str,
        strategy: DebitStrategy,
        amount: i64,
    },
    WritesBlind {
        me: &'a str,
        balance: i64,
    },
    WritesIfVersion {
        me: &'a str,
        balance: i64,
        version: u64,
    },
    Believes {
        me: &'a str,
        balance: i64,
        amount: i64,
    },
    GivesUp {
        me: &'a str,
        attempts: u32,
    },
    ReadWasStale {
        me: &'a str,
    },
    Committed {
        me: &'a str,
    },
}

impl From<DebitWorkerSaw<'_>> for String {
    fn from(saw: DebitWorkerSaw<'_>) -> String {
        use DebitWorkerSaw::*;
        match saw {
            Scheduled { me, amount } => format!(
                "{me} is scheduled to take {} from account {ACCOUNT_ID}.",
                rupees(amount)
            ),
            AlreadyDone { me } => {
                format!("{me} finds its debit already recorded as done and stays idle.")
            }
            Reads {
                me,
                strategy,
                amount,
            } => match strategy {
                DebitStrategy::ReadThenWrite => format!(
                    "{me} opens a transaction and reads the balance with a plain SELECT, intending to subtract {}.",
                    rupees(amount)
                ),
                DebitStrategy::RowLock => format!(
                    "{me} reads with SELECT … FOR UPDATE: the row comes back only together with an exclusive lock."
                ),
                DebitStrategy::VersionCheck => format!(
                    "{me} reads the balance and the row's version number. It takes no lock; it will prove nothing changed when it writes."
                ),
            },
            WritesBlind { me, balance } => format!(
                "{me} writes the number it computed, {}. It does not look at the row again first.",
                rupees(balance)
            ),
            WritesIfVersion {
                me,
                balance,
                version,
            } => format!(
                "{me} writes {} only if the row is still at version {version}: check and write travel as one statement.",
                rupees(balance)
            ),
            Believes {
                me,
                balance,
                amount,
            } => format!(
                "{me} now believes the balance is {} and spends a moment working out {} − {}.",
                rupees(balance),
                rupees(balance),
                rupees(amount)
            ),
            GivesUp { me, attempts } => format!("{me} gives up after {attempts} attempts."),
            ReadWasStale { me } => format!(
                "Zero rows: {me}'s read was stale. It throws the computed value away and reads the row again."
            ),
            Committed { me } => format!("{me}'s debit is committed; its job is finished."),
        }
    }
}
