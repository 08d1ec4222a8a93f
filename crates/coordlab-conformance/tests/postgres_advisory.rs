//! `advisory-locks` on a real PostgreSQL (`scripts/conformance.sh` starts one and sets
//! `COORDLAB_PG_URL`): the names, keys and statements come from the model.

use coordlab_conformance::pg_advisory::{check_statements, check_trace};
use coordlab_conformance::{server_env, Report};

fn assert_agrees(what: &str, report: &Report) {
    println!("== {what}\n{}", report.text());
    assert!(
        report.mismatches.is_empty(),
        "{what}: the real PostgreSQL disagrees with the model:\n{}",
        report.text()
    );
}

fn replay(params: &[(&str, &str)]) {
    let Some(url) = server_env("COORDLAB_PG_URL") else {
        return;
    };
    assert_agrees(&format!("advisory-locks {params:?}"), &check_trace(&url, params));
}

/// The colliding names share a hashtext; B is refused while A holds; COMMIT frees an xact
/// lock; a session lock survives COMMIT and ROLLBACK and ends at unlock or close.
#[test]
fn the_advisory_lock_statements_behave_as_the_model_says() {
    let Some(url) = server_env("COORDLAB_PG_URL") else {
        return;
    };
    assert_agrees("advisory-lock statements", &check_statements(&url));
}

#[test]
fn distinct_names_take_two_keys() {
    replay(&[]);
}

#[test]
fn a_colliding_name_is_refused() {
    replay(&[("names", "colliding")]);
}

#[test]
fn a_colliding_name_waits_with_the_blocking_call() {
    replay(&[("names", "colliding"), ("wait", "block")]);
}

/// The session lock stays with the pooled connection after the job threw: the next runs get
/// false until the pool closes the connection.
#[test]
fn a_pooled_session_keeps_the_lock_until_it_closes() {
    replay(&[("first_run", "throws")]);
}

#[test]
fn a_pooled_session_makes_the_blocking_call_wait_until_it_closes() {
    replay(&[("first_run", "throws"), ("wait", "block")]);
}

#[test]
fn rollback_ends_a_transaction_scoped_lock() {
    replay(&[("first_run", "throws"), ("scope", "xact")]);
}

#[test]
fn session_locks_released_by_unlock() {
    replay(&[("scope", "session")]);
}
