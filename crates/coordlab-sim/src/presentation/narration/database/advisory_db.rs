//! What the advisory-lock database saw of its connections and their locks, and the sentences
//! it reads as.

use crate::protocols::database::advisory_sql::Scope;

/// Why a lock call found its key held by another connection.
pub enum HeldBy<'a> {
    /// Another job's name hashes to the same key.
    Collision {
        name: &'a str,
        key: i64,
        owner: &'a str,
        names: &'a [&'static str],
    },
    Connection {
        owner: &'a str,
        pid: u32,
        key: i64,
    },
}

/// One thing the advisory-lock database saw; `who` is the client of the connection.
pub enum AdvisoryDbSaw<'a> {
    Connects {
        who: &'a str,
        pid: u32,
    },
    NotHeldInSession {
        who: &'a str,
        key: i64,
    },
    /// A try-lock on a held key: false.
    Refused {
        held: HeldBy<'a>,
        who: &'a str,
    },
    /// A blocking lock on a held key: it waits.
    Waits {
        held: HeldBy<'a>,
        who: &'a str,
    },
    OutsideTransaction {
        who: &'a str,
    },
    Holds {
        who: &'a str,
        key: i64,
        scope: Scope,
        name: &'a str,
    },
    FreedForWaiter {
        key: i64,
        who: &'a str,
    },
    /// The transaction ended; the key stays only if it is also held in session scope.
    TxnEnds {
        key: i64,
        session_held: bool,
    },
    ClosesHoldingNothing {
        pid: u32,
    },
    ClosesReleasing {
        pid: u32,
        key: i64,
    },
}

impl From<HeldBy<'_>> for String {
    fn from(held: HeldBy<'_>) -> String {
        match held {
            HeldBy::Collision {
                name,
                key,
                owner,
                names,
            } => format!(
                "hashtext('{name}') is {key}, the key {owner} holds for {}: another job's name, the same number.",
                names.join(", ")
            ),
            HeldBy::Connection { owner, pid, key } => {
                format!("{owner}'s connection (pid {pid}) holds key {key}.")
            }
        }
    }
}

impl From<AdvisoryDbSaw<'_>> for String {
    fn from(saw: AdvisoryDbSaw<'_>) -> String {
        use AdvisoryDbSaw::*;
        match saw {
            Connects { who, pid } => format!("{who} opens a connection: backend pid {pid}."),
            NotHeldInSession { who, key } => {
                format!("{who} does not hold key {key} in session scope: false, with a warning.")
            }
            Refused { held, who } => format!("{} {who} gets false.", String::from(held)),
            Waits { held, who } => {
                format!("{} {who}'s call does not return: it waits.", String::from(held))
            }
            OutsideTransaction { who } => {
                format!("{who} is not in a transaction: the lock ends with the statement.")
            }
            Holds {
                who,
                key,
                scope,
                name,
            } => format!(
                "{who} holds key {key} ({} scope), hashtext('{name}').",
                scope.word()
            ),
            FreedForWaiter { key, who } => format!("Key {key} is free: {who}'s waiting call returns."),
            TxnEnds {
                key,
                session_held: true,
            } => format!("The transaction ends; key {key} stays held: it is also held in session scope."),
            TxnEnds {
                key,
                session_held: false,
            } => format!("The transaction ends, and its lock on key {key} with it."),
            ClosesHoldingNothing { pid } => {
                format!("Connection pid {pid} closes; it held no advisory lock.")
            }
            ClosesReleasing { pid, key } => {
                format!("Connection pid {pid} closes: the database releases its lock on key {key}.")
            }
        }
    }
}
