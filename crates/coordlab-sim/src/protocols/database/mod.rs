//! The database family (chapter 1): databases that hold their own locks, and the clients
//! that use them. A one-row account database with a lock manager (`account_db`) and the
//! worker that debits it by one of three strategies (`debit_worker`); a row lock manager with
//! PostgreSQL's four row-level modes and its wait queues (`row_locks`), the database built on
//! it (`row_lock_db`, with InnoDB's gap locks beside) and the client that runs a transaction
//! against it (`txn_client`); PostgreSQL's advisory locks (`advisory_db`) and the scheduler
//! that guards its jobs with them (`advisory_worker`). The `*sql` files are the SQL text the
//! player shows and the conformance tests run on a real PostgreSQL.

pub mod account_db;
pub mod advisory_db;
pub mod advisory_sql;
pub mod advisory_worker;
pub mod db_sql;
pub mod debit_worker;
pub mod row_lock_db;
pub mod row_locks;
pub mod sql;
pub mod txn_client;

use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::rng::between_us;

/// Sets `timer` to fire after a random delay in `lo_us..=hi_us` (a start, a think, a back-off).
fn set_timer_within<P: Participant>(ctx: &mut Ctx<'_, P>, timer: P::Timer, (lo_us, hi_us): (u64, u64)) {
    let after_us = between_us(ctx.rng, lo_us, hi_us);
    ctx.set_timer(timer, after_us);
}
