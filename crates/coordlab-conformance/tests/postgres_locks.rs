//! The chapter-1 lock scenarios' SQL on a real PostgreSQL, in the order of each scenario's
//! trace (`scripts/conformance.sh` starts one and sets `COORDLAB_PG_URL`).

use coordlab_conformance::pg_locks::check;
use coordlab_conformance::server_env;
use coordlab_sim::protocols::database::row_lock_db::LockDbDurable;
use coordlab_sim::scenarios::ch1_locks::{deadlock, skip_locked_queue};

fn run(scenario: &str, params: &[(&str, &str)], initial: &LockDbDurable, deadlock_timeout_ms: u64) {
    let Some(url) = server_env("COORDLAB_PG_URL") else {
        return;
    };
    let report = check(&url, scenario, params, initial, deadlock_timeout_ms);
    println!("== {scenario} {params:?}\n{}", report.text());
    assert!(
        report.mismatches.is_empty(),
        "{scenario} {params:?}: the real PostgreSQL disagrees with the model:\n{}",
        report.text()
    );
}

/// Two sessions claim at the same time and get different jobs; nobody blocks.
#[test]
fn skip_locked_claims_give_two_workers_different_jobs() {
    let q = skip_locked_queue::initial_db();
    run(
        skip_locked_queue::ID,
        &[("claim", "skip-locked"), ("workers", "2")],
        &q,
        1000,
    );
}

/// The second claim blocks behind the first worker's row and, after its commit, skips the
/// job that is done now.
#[test]
fn plain_for_update_claims_block_behind_the_first_worker() {
    let q = skip_locked_queue::initial_db();
    run(
        skip_locked_queue::ID,
        &[("claim", "for-update"), ("workers", "2")],
        &q,
        1000,
    );
}

/// The second claim fails at once with 55P03; the worker rolls back and retries.
#[test]
fn nowait_claims_fail_with_55p03() {
    let q = skip_locked_queue::initial_db();
    run(
        skip_locked_queue::ID,
        &[("claim", "nowait"), ("workers", "2")],
        &q,
        1000,
    );
}

/// Opposite orders: the first waiter gets 40P01 after deadlock_timeout, the survivor commits,
/// the victim's retry commits; balances 110 and 90.
#[test]
fn opposite_orders_deadlock_and_one_transfer_gets_40p01() {
    run(
        deadlock::ID,
        &[("order", "opposite"), ("deadlock_timeout_ms", "1000")],
        &deadlock::initial_db(),
        1000,
    );
}

#[test]
fn ordered_transfers_only_wait() {
    run(
        deadlock::ID,
        &[("order", "ordered"), ("deadlock_timeout_ms", "1000")],
        &deadlock::initial_db(),
        1000,
    );
}

/// The planted bug: a plain SELECT claims job 1 for both workers; the second UPDATE waits for
/// the first commit and then runs too (runs = 2).
#[test]
fn a_plain_select_claim_lets_both_workers_do_job_1() {
    let q = skip_locked_queue::initial_db();
    run(
        skip_locked_queue::ID,
        &[("claim", "plain"), ("workers", "2")],
        &q,
        1000,
    );
}

/// PostgreSQL's 4×4 row-lock conflict table and every pair of `row-lock-modes`' locking
/// statements: the real server waits exactly where the simulator's table says.
#[test]
fn the_row_lock_conflict_table_is_the_real_servers() {
    let Some(url) = server_env("COORDLAB_PG_URL") else {
        return;
    };
    let report = coordlab_conformance::pg_conflicts::check(&url);
    println!("== row-lock conflicts\n{}", report.text());
    assert_eq!(
        report.log.len(),
        49,
        "7 locking statements, every pair:\n{}",
        report.text()
    );
    assert!(
        report.mismatches.is_empty(),
        "the real PostgreSQL disagrees with the simulator's conflict table:\n{}",
        report.text()
    );
}

/// The foreign-key check of a child insert (FOR KEY SHARE on the parent) lets an UPDATE of the
/// parent's name through and stops its DELETE: not the InnoDB contention of the curriculum.
#[test]
fn the_foreign_key_check_blocks_a_delete_of_the_parent_but_not_an_update_of_its_name() {
    use coordlab_sim::protocols::database::db_sql::RowAccess;
    let Some(url) = server_env("COORDLAB_PG_URL") else {
        return;
    };
    let mut pair = coordlab_conformance::pg_conflicts::Pair::connect(&url).unwrap();
    assert_eq!(
        pair.conflicts(RowAccess::InsertChild, RowAccess::UpdateName),
        Ok(false)
    );
    assert_eq!(
        pair.conflicts(RowAccess::InsertChild, RowAccess::Delete),
        Ok(true)
    );
    assert_eq!(
        pair.conflicts(RowAccess::UpdateName, RowAccess::InsertChild),
        Ok(false)
    );
}
