//! What a transaction client saw of its program's statements, and the sentences it reads as.

use crate::protocols::database::db_sql::{ClaimLock, DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE};

/// One thing a transaction client saw; `me` is the client's own name, `noun` what its
/// transaction is (e.g. `transfer`).
pub enum TxnClientSaw<'a> {
    /// An error with this SQLSTATE: it rolls back.
    Error {
        me: &'a str,
        sqlstate: &'static str,
        noun: &'a str,
    },
    GivesUp {
        me: &'a str,
        retries: u32,
    },
    /// Its claim came back empty, under this lock clause. With SKIP LOCKED an empty answer
    /// means only that no pending job was unlocked: one another worker holds may still be
    /// pending, and is pending again if that worker rolls back.
    NoRow {
        me: &'a str,
        lock: ClaimLock,
    },
    Committed {
        me: &'a str,
        noun: &'a str,
    },
    ConnectionBroke {
        me: &'a str,
    },
}

impl From<TxnClientSaw<'_>> for String {
    fn from(saw: TxnClientSaw<'_>) -> String {
        use TxnClientSaw::*;
        match saw {
            Error { me, sqlstate, noun } => match sqlstate {
                LOCK_NOT_AVAILABLE => format!(
                    "{me} got \"could not obtain lock\" instead of waiting. It rolls back and will try again shortly."
                ),
                DEADLOCK_DETECTED => format!(
                    "{me}'s {noun} was the deadlock victim: everything it did is undone. It rolls back and will run the whole {noun} again."
                ),
                _ => format!("{me} got an error and rolls back."),
            },
            GivesUp { me, retries } => format!("{me} gives up after {retries} retries."),
            NoRow { me, lock } => {
                if lock == ClaimLock::SkipLocked {
                    format!("{me}'s claim found no unlocked pending job, so it stops. Jobs other workers hold may still be pending.")
                } else {
                    format!("No pending job is left: {me} stops.")
                }
            }
            Committed { me, noun } => format!("{me}'s {noun} is committed."),
            ConnectionBroke { me } => format!(
                "{me}'s connection to the database broke: its transaction is gone with it. It will start over."
            ),
        }
    }
}
