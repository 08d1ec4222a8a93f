//! The SQL the scenarios show, run on a real PostgreSQL in the order of each scenario's
//! trace (`scripts/conformance.sh` starts one and sets `COORDLAB_PG_URL`).

use coordlab_conformance::pg::{check, TxnMode};
use coordlab_conformance::server_env;

fn run(scenario: &str, params: &[(&str, &str)], mode: TxnMode) {
    let Some(url) = server_env("COORDLAB_PG_URL") else {
        return;
    };
    let report = check(&url, scenario, params, mode);
    println!("== {scenario} {params:?}\n{}", report.text());
    assert!(
        report.mismatches.is_empty(),
        "{scenario} {params:?}: the real PostgreSQL disagrees with the model:\n{}",
        report.text()
    );
}

#[test]
fn lost_update_without_a_lock_loses_a_debit_on_postgres_too() {
    run("lost-update", &[("lock", "none")], TxnMode::Transaction);
}

#[test]
fn lost_update_with_for_update_makes_the_second_worker_wait() {
    run("lost-update", &[("lock", "row-lock")], TxnMode::Transaction);
}

#[test]
fn lost_update_with_the_conditional_update_refuses_the_stale_write() {
    run(
        "lost-update",
        &[("lock", "conditional-update")],
        TxnMode::Autocommit,
    );
}

/// The lease table's takeover (33 from an earlier run's 32, then 34), refusals, renewal and
/// release, and the ledger's fenced writes: 33 accepted, 34 accepted, 33 refused.
#[test]
fn zombie_worker_lease_table_and_fenced_writes() {
    run(
        "zombie-worker",
        &[("fencing", "write-predicate")],
        TxnMode::Autocommit,
    );
}

/// The unfenced ledger: A's late write with 33 lands (GREATEST keeps 34).
#[test]
fn zombie_worker_without_fencing_lets_the_stale_write_land() {
    run("zombie-worker", &[("fencing", "none")], TxnMode::Autocommit);
}

/// A release with no owner check deletes B's row, and C's insert starts the count at 1 again.
#[test]
fn wrong_release_deletes_the_new_holders_row_and_restarts_the_count() {
    run(
        "wrong-release",
        &[("release", "naive-delete")],
        TxnMode::Autocommit,
    );
}

/// `… AND owner = :me`: A's late release deletes nothing (`DELETE 0`).
#[test]
fn wrong_release_with_the_owner_check_deletes_nothing() {
    run(
        "wrong-release",
        &[("release", "compare-and-delete")],
        TxnMode::Autocommit,
    );
}
