//! The `users` statements of `lock-granularity`, run as MySQL's InnoDB runs them (MySQL
//! reference manual, "Locks Set by Different SQL Statements in InnoDB" and "Transaction
//! Isolation Levels"):
//!
//! - An `UPDATE` locks the index records it scans, not just the rows that match. At
//!   REPEATABLE READ (InnoDB's default) these are next-key locks: the record and the gap before
//!   it; a full scan also locks the gap after the last row (the "supremum" pseudo-record), so
//!   with no usable index the whole table and every insert into it are blocked.
//! - A search by a unique index for one value locks only that record: no gap.
//! - At READ COMMITTED InnoDB takes no gap locks here and releases the record locks of scanned
//!   rows that fail the `WHERE` (its "semi-consistent read" even skips a locked row that does
//!   not match instead of waiting), so only the matching rows stay locked.
//! - An `INSERT` first asks for an insert-intention lock on the gap the new row goes into; it
//!   waits only if another transaction holds a gap (next-key) lock there.
//!
//! Every lock here is exclusive (X). They live in the same [`RowLockManager`] as PostgreSQL's
//! modes, all as [`LockMode::Update`], which conflicts with everything, as X does with X. Two
//! insert-intention locks would not conflict in InnoDB; `lock-granularity` has one inserter.
//! `LockDb::innodb_names` keeps InnoDB's name of each lock for the narration and the tables.
//!
//! With `innodb: None` the same statements run as PostgreSQL would: they lock only the rows
//! that match, and an insert waits for nobody.
//!
//! [`RowLockManager`]: crate::protocols::database::row_locks::RowLockManager

use super::{LockDb, Ran, Write};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Ctx;
use crate::presentation::narration::database::row_lock_db::{EmailLookup, LockDbSaw};
use crate::protocols::database::db_sql::{user_row, DbReply, DbRequest, USERS};
use crate::protocols::database::row_locks::{Acquire, LockMode, RowKey, WaitPolicy, SUPREMUM};

/// InnoDB's isolation level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// InnoDB's default: next-key locks on everything a locking scan reads.
    RepeatableRead,
    /// Record locks on matching rows only, no gap locks.
    ReadCommitted,
}

impl Isolation {
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::ReadCommitted => "READ COMMITTED",
        }
    }
}

/// InnoDB's names for the locks taken here (`performance_schema.data_locks` shows them as
/// `X`, `X,REC_NOT_GAP` and `X,GAP,INSERT_INTENTION`).
pub const NEXT_KEY: &str = "X next-key lock";
pub const RECORD: &str = "X record lock";
pub const INSERT_INTENTION: &str = "X insert-intention lock";

/// The gap after the last row of `users`.
pub fn users_supremum() -> RowKey {
    RowKey {
        table: USERS,
        id: SUPREMUM,
    }
}

impl LockDb {
    /// Asks for an InnoDB lock called `name` on `row` (always X; it waits if refused).
    fn innodb_lock(&mut self, from: NodeId, row: RowKey, name: &'static str) -> Acquire {
        if self.locks.held(from, row).is_none() {
            self.innodb_names.insert((from, row), name);
        }
        self.locks.acquire(from, row, LockMode::Update, WaitPolicy::Block)
    }

    pub(super) fn execute_users(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        request: &DbRequest,
    ) -> Ran {
        let Some(isolation) = self.config.innodb else {
            return self.postgres_users(from, request);
        };
        let who = ctx.name(from);
        match *request {
            DbRequest::UpdateUserByEmail { target, plan } => {
                let scan = !self.config.email_index;
                let gaps = scan && isolation == Isolation::RepeatableRead;
                let mut rows = vec![user_row(target)];
                if gaps {
                    rows = self.durable.users.keys().map(|id| user_row(*id)).collect();
                    rows.push(users_supremum());
                }
                let name = if gaps { NEXT_KEY } else { RECORD };
                for row in rows {
                    if self.innodb_lock(from, row, name) != Acquire::Granted {
                        return Ran::Wait;
                    }
                }
                self.stage(from, Write::UserPlan { id: target, plan });
                let users = self.durable.users.len();
                let lookup = if !scan {
                    EmailLookup::Index
                } else if gaps {
                    EmailLookup::ScanKeepingGaps { users }
                } else {
                    EmailLookup::ScanKeepingMatch { users }
                };
                ctx.note(LockDbSaw::FoundByEmail { target, who, lookup });
                Ran::Reply(DbReply::Rows(1))
            }
            DbRequest::UpdateUserById { id, plan } => match self.innodb_lock(from, user_row(id), RECORD) {
                Acquire::Granted => {
                    self.stage(from, Write::UserPlan { id, plan });
                    Ran::Reply(DbReply::Rows(1))
                }
                _ => Ran::Wait,
            },
            DbRequest::InsertUser { id, plan } => {
                // The gap the new row goes into is the one before the next row up (a next-key
                // lock on that row covers it), or the one after the last row.
                let gap = self
                    .durable
                    .users
                    .iter_from(&(id + 1))
                    .next()
                    .map_or(users_supremum(), |(next, _)| user_row(*next));
                let gap_locked = self.locks.held(from, gap).is_some()
                    || self
                        .locks
                        .blockers(from, gap, LockMode::Update)
                        .into_iter()
                        .any(|h| self.innodb_names.get(&(h, gap)) == Some(&NEXT_KEY));
                if gap_locked && self.innodb_lock(from, gap, INSERT_INTENTION) != Acquire::Granted {
                    return Ran::Wait;
                }
                // The new row is the inserter's own until it commits.
                self.innodb_lock(from, user_row(id), RECORD);
                self.stage(from, Write::UserPlan { id, plan });
                ctx.note(LockDbSaw::UserInserted { id, who });
                Ran::Reply(DbReply::Rows(1))
            }
            _ => unreachable!("only users statements come here"),
        }
    }

    /// The same statements as PostgreSQL runs them: the matching row only.
    fn postgres_users(&mut self, from: NodeId, request: &DbRequest) -> Ran {
        let (id, plan) = match *request {
            DbRequest::UpdateUserByEmail { target, plan } => (target, plan),
            DbRequest::UpdateUserById { id, plan } | DbRequest::InsertUser { id, plan } => (id, plan),
            _ => unreachable!("only users statements come here"),
        };
        match self
            .locks
            .acquire(from, user_row(id), LockMode::NoKeyUpdate, WaitPolicy::Block)
        {
            Acquire::Granted => {
                self.stage(from, Write::UserPlan { id, plan });
                Ran::Reply(DbReply::Rows(1))
            }
            _ => Ran::Wait,
        }
    }
}
