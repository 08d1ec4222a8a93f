//! The card of a transaction client ([`TxnClient`]): where its program stands.

use crate::kernel::participant::{Card, ViewCtx};
use crate::kernel::view::{Summary, Tone};
use crate::presentation::cards::card;
use crate::protocols::database::db_sql::{
    ClaimLock, DbRequest, RowAccess, DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE, NO_CONNECTION,
};
use crate::protocols::database::txn_client::{ClientDurable, ClientPhase, TxnClient, TxnPlan};

impl Card for TxnClient {
    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        let mut s = match &self.phase {
            ClientPhase::Idle => Summary::new("idle", Tone::Quiet).detail("not started"),
            ClientPhase::Sent(DbRequest::Begin) => {
                Summary::new("working", Tone::Quiet).detail("opening a transaction")
            }
            ClientPhase::Sent(DbRequest::ClaimJob { lock }) => {
                Summary::new("claiming", Tone::Asking).detail(match lock {
                    ClaimLock::None => "SELECT a job, no lock",
                    ClaimLock::ForUpdate => "SELECT a job FOR UPDATE",
                    ClaimLock::NoWait => "… FOR UPDATE NOWAIT",
                    ClaimLock::SkipLocked => "… FOR UPDATE SKIP LOCKED",
                })
            }
            ClientPhase::Sent(DbRequest::Commit) => Summary::new("committing", Tone::Quiet),
            // Its statement is out and unanswered: in flight, or blocked on a row lock (the
            // database's card shows which).
            ClientPhase::Sent(r) => {
                Summary::new("waiting", Tone::Waiting).detail(format!("on {}", statement(r)))
            }
            ClientPhase::Thinking => Summary::new("working", Tone::Quiet),
            ClientPhase::RollingBack(sqlstate) => {
                Summary::new("rolling back", Tone::Failed).detail(match *sqlstate {
                    DEADLOCK_DETECTED => "deadlock victim".to_string(),
                    LOCK_NOT_AVAILABLE => "NOWAIT: row was locked".to_string(),
                    NO_CONNECTION => "connection lost".to_string(),
                    other => format!("error {other}"),
                })
            }
            ClientPhase::BackingOff => card::backing_off().detail("will start over"),
            ClientPhase::Done => card::done(),
            ClientPhase::GaveUp => card::gave_up("too many retries"),
        };
        if let (Some(id), true) = (self.claimed, self.in_transaction()) {
            s = s.badge("job", id);
        }
        if self.plan.repeat {
            s = s.badge("jobs done", self.committed);
        }
        if self.errors > 0 {
            s = s.badge("errors", self.errors);
        }
        if self.retries > 0 {
            s = s.minor(format!("retries: {}", self.retries));
        }
        s
    }

    fn durable_summary(_plan: &TxnPlan, durable: &ClientDurable, _view: &ViewCtx<'_>) -> Summary {
        card::down(format!("committed: {}", durable.committed))
    }
}

/// A statement in a few words: `UPDATE account 2`.
fn statement(r: &DbRequest) -> String {
    match r {
        DbRequest::ClaimJob { .. } => "SELECT a pending job".into(),
        DbRequest::FinishJob { id } => format!("UPDATE job {id}"),
        DbRequest::AddToBalance { account, .. } => format!("UPDATE account {account}"),
        DbRequest::Customer { access } => match access {
            RowAccess::Read => "SELECT customer 1".into(),
            RowAccess::SelectFor(mode) => format!("SELECT … {}", mode.sql()),
            RowAccess::InsertChild => "INSERT order of 1".into(),
            RowAccess::UpdateName => "UPDATE customer 1".into(),
            RowAccess::Delete => "DELETE customer 1".into(),
        },
        DbRequest::UpdateUserByEmail { .. } => "UPDATE user by email".into(),
        DbRequest::UpdateUserById { id, .. } => format!("UPDATE user {id}"),
        DbRequest::InsertUser { id, .. } => format!("INSERT user {id}"),
        DbRequest::Begin => "BEGIN".into(),
        DbRequest::Commit => "COMMIT".into(),
        DbRequest::Rollback => "ROLLBACK".into(),
    }
}

impl TxnClient {
    /// What it is doing, in a few words (the state column of the clients table).
    pub fn phase_text(&self) -> String {
        match &self.phase {
            ClientPhase::Idle => "not started".to_string(),
            ClientPhase::Sent(DbRequest::Commit) => "committing".to_string(),
            ClientPhase::Sent(DbRequest::Begin) => "opening a transaction".to_string(),
            ClientPhase::Sent(DbRequest::ClaimJob { .. }) => "claiming a job".to_string(),
            ClientPhase::Sent(_) => match self.claimed {
                Some(id) => format!("finishing job {id}"),
                None => "running a statement".to_string(),
            },
            ClientPhase::Thinking => match self.claimed {
                Some(id) => format!("working on job {id}"),
                None => "working".to_string(),
            },
            ClientPhase::RollingBack(_) => "rolling back".to_string(),
            ClientPhase::BackingOff => "backing off".to_string(),
            ClientPhase::Done => "done".to_string(),
            ClientPhase::GaveUp => "gave up".to_string(),
        }
    }
}
