//! `advisory-locks`: every variant reaches its declared outcome over many seeds, and each
//! story shows what it claims — the hashtext collision keeps an unrelated job out, a session
//! lock outlives a job that threw while its pooled connection stays open, and a
//! transaction-scoped lock ends at ROLLBACK.

use coordlab_sim::kernel::faults::parse_script;
use coordlab_sim::properties::Verdict;
use coordlab_sim::protocols::database::advisory_sql::{
    hashtext, key_of, COLLIDING_INVOICE_JOB, INVOICE_JOB, INVOICE_KEY, REPORT_JOB, REPORT_KEY,
};
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::trace::TableView;
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(pairs: &[(&str, &str)], seed: u64, script: &str) -> RunRequest {
    RunRequest {
        scenario: "advisory-locks".to_string(),
        params: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Params>(),
        seed,
        actions: parse_script(script).unwrap(),
    }
}

fn full(pairs: &[(&str, &str)], script: &str) -> Trace {
    run(&request(pairs, 1, script), Limits::default(), Recording::Full).unwrap()
}

fn verdict(trace: &Trace, name: &str) -> Verdict {
    trace.properties.iter().find(|p| p.name == name).unwrap().verdict
}

fn table<'a>(trace: &'a Trace, step: usize, title: &str) -> &'a TableView {
    let snapshot = trace.entries[step].snapshot.as_ref().unwrap();
    snapshot.tables.iter().find(|t| t.title == title).unwrap()
}

/// The advisory-lock table's row for the report's key at `step`, if it is held.
fn report_lock(trace: &Trace, step: usize) -> Option<Vec<String>> {
    table(trace, step, "advisory locks (pg_locks)")
        .rows
        .iter()
        .find(|r| r[0] == REPORT_KEY.to_string())
        .cloned()
}

fn beat_step(trace: &Trace, key: &str) -> usize {
    let beat = trace
        .beats
        .iter()
        .find(|b| b.key == key)
        .unwrap_or_else(|| panic!("no beat {key}"));
    beat.seq.unwrap_or_else(|| panic!("beat {key} never happens")) as usize
}

/// The SQL each client sent the database, in order: `(client, statement)`.
fn statements(trace: &Trace) -> Vec<(String, String)> {
    trace
        .entries
        .iter()
        .filter_map(|e| e.message.as_ref())
        .filter(|m| m.to.0 == 0)
        .map(|m| (trace.nodes[m.from.0 as usize].name.clone(), m.label.clone()))
        .collect()
}

#[test]
fn every_variant_meets_its_expectation_over_many_seeds() {
    for names in ["distinct", "colliding"] {
        for first_run in ["completes", "throws"] {
            for scope in ["xact", "session"] {
                for wait in ["try", "block"] {
                    let pairs = [
                        ("names", names),
                        ("first_run", first_run),
                        ("scope", scope),
                        ("wait", wait),
                    ];
                    for seed in 0..60 {
                        let req = request(&pairs, seed, "");
                        let trace = run(&req, Limits::default(), Recording::Summary).unwrap();
                        let miss = expectation_for(&req).unwrap().mismatches(&trace);
                        assert!(miss.is_empty(), "{pairs:?} seed={seed}: {miss:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_two_job_names_really_collide_under_hashtext() {
    assert_eq!(i64::from(hashtext(REPORT_JOB)), REPORT_KEY);
    assert_eq!(key_of(COLLIDING_INVOICE_JOB), REPORT_KEY);
    assert_eq!(key_of(INVOICE_JOB), INVOICE_KEY);
    assert_ne!(INVOICE_KEY, REPORT_KEY);
}

#[test]
fn with_distinct_names_both_jobs_hold_their_own_key_at_once() {
    let t = full(&[], "");
    let at = beat_step(&t, "both-run");
    let keys: Vec<&str> = table(&t, at, "advisory locks (pg_locks)")
        .rows
        .iter()
        .map(|r| r[0].as_str())
        .collect();
    assert_eq!(keys, vec![INVOICE_KEY.to_string(), REPORT_KEY.to_string()]);
    assert_eq!(t.outcome["invoice_runs_done"], json!(1));
}

#[test]
fn the_collision_makes_the_unrelated_invoice_job_skip() {
    let t = full(&[("names", "colliding")], "");
    let at = beat_step(&t, "unrelated-excluded");
    let beat = t.beats.iter().find(|b| b.key == "unrelated-excluded").unwrap();
    assert_eq!(beat.title, "The unrelated invoice job is refused");
    assert!(beat.text.contains("also 1980164416"), "{}", beat.text);
    assert_eq!(
        t.entries[at].message.as_ref().unwrap().label,
        "SELECT pg_try_advisory_xact_lock(hashtext('job:invoice-21142'))"
    );
    let answer = t.entries[at..]
        .iter()
        .filter_map(|e| e.message.as_ref())
        .find(|m| m.from.0 == 0 && m.to.0 == 2)
        .unwrap();
    assert_eq!(answer.label, "false", "worker-2 is told false");
    let row = report_lock(&t, at).expect("the report holds the key");
    assert!(row[1].starts_with("worker-1"), "{row:?}");
    assert_eq!(row[3], REPORT_JOB);
    let jobs = table(&t, t.entries.len() - 1, "jobs");
    assert_eq!(
        jobs.rows[1],
        vec![COLLIDING_INVOICE_JOB, "1980164416", "0", "1", "0"],
        "the invoice job never ran: it was refused once"
    );
    assert_eq!(verdict(&t, "unrelated-jobs-never-exclude"), Verdict::Violated);
}

#[test]
fn with_a_blocking_call_the_unrelated_job_waits_for_the_report() {
    for seed in 0..30 {
        let req = request(&[("names", "colliding"), ("wait", "block")], seed, "");
        let t = run(&req, Limits::default(), Recording::Summary).unwrap();
        assert_eq!(t.outcome["lock_waits"], json!(1), "seed={seed}");
        assert_eq!(
            t.outcome["invoice_runs_done"],
            json!(1),
            "it runs once the report commits"
        );
    }
    let t = full(&[("names", "colliding"), ("wait", "block")], "");
    let sent = statements(&t);
    assert!(sent.contains(&(
        "worker-2".to_string(),
        "SELECT pg_advisory_xact_lock(hashtext('job:invoice-21142'))".to_string()
    )));
}

#[test]
fn a_session_lock_outlives_a_job_that_threw_until_the_pool_closes_the_connection() {
    let t = full(&[("first_run", "throws")], "");
    let at = beat_step(&t, "throws-still-held");
    let row = report_lock(&t, at).expect("still held after the job threw");
    assert!(row[1].starts_with("worker-1 (pid 4101)"), "{row:?}");
    assert_eq!(row[2], "session");
    let workers = table(&t, at, "workers");
    assert_eq!(workers.rows[0][1], "pid 4101, in the pool");
    assert_eq!(workers.rows[0][2], "—", "worker-1 runs nothing");
    assert_eq!(verdict(&t, "lock-ends-with-job"), Verdict::Violated);
    // worker-1 never sends an unlock: its only statement is the lock, then the pool's close.
    let w1: Vec<String> = statements(&t)
        .into_iter()
        .filter(|(who, _)| who == "worker-1")
        .map(|(_, sql)| sql)
        .collect();
    assert_eq!(
        w1,
        vec![
            "SELECT pg_try_advisory_lock(hashtext('job:report-5661'))".to_string(),
            "(closes the connection)".to_string()
        ]
    );
    // Held until the close, gone after it, and the next run gets it.
    let closed = beat_step(&t, "pool-closes");
    assert!(report_lock(&t, closed - 1).is_some());
    assert!(report_lock(&t, closed).is_none());
    assert!(t.entries[closed].time_us >= 400_000);
    assert_eq!(t.outcome["report_runs_refused"], json!(2));
    assert_eq!(t.outcome["report_runs_done"], json!(1));
    assert!(beat_step(&t, "next-report-runs") > closed);
}

#[test]
fn a_transaction_scoped_lock_ends_at_rollback_when_the_job_throws() {
    let t = full(&[("first_run", "throws"), ("scope", "xact")], "");
    let at = beat_step(&t, "throws-rolled-back");
    assert!(report_lock(&t, at).is_none());
    assert!(
        t.entries[at].time_us < 150_000,
        "released long before the next run"
    );
    assert_eq!(verdict(&t, "lock-ends-with-job"), Verdict::Holds);
    assert_eq!(t.outcome["report_runs_refused"], json!(0));
    assert_eq!(t.outcome["report_runs_done"], json!(3));
    assert!(statements(&t).contains(&("worker-1".to_string(), "ROLLBACK".to_string())));
}

/// A crash is not a throw: the process's connection drops and the database releases the
/// session lock at once, without waiting for any pool.
#[test]
fn a_crashed_worker_s_session_lock_is_released_with_its_connection() {
    let t = full(&[("scope", "session")], "9@crash:1");
    assert_eq!(t.outcome["locks_released_at_close"], json!(1), "{:?}", t.outcome);
    assert_eq!(verdict(&t, "lock-ends-with-job"), Verdict::Holds);
    assert_eq!(t.outcome["report_runs_refused"], json!(0));
}

/// Random crashes, restarts and pauses: distinct names never exclude each other, and a
/// transaction-scoped lock never outlives its job; in session scope a throwing job's lock
/// does, and the sweep finds it.
#[test]
fn random_faults_keep_the_safe_variants_safe_and_find_the_pooled_session_lock() {
    use coordlab_sim::sweep::sweep;
    let props = [
        "unrelated-jobs-never-exclude".to_string(),
        "lock-ends-with-job".to_string(),
    ];
    for pairs in [
        vec![("scope", "xact")],
        vec![("scope", "xact"), ("first_run", "throws")],
        vec![("scope", "session")],
        vec![("scope", "xact"), ("wait", "block"), ("first_run", "throws")],
    ] {
        let report = sweep(&request(&pairs, 1, ""), 0..500, &props).unwrap();
        assert_eq!(report.runs, 500);
        assert!(report.findings.is_empty(), "{pairs:?}: {:?}", report.findings);
    }
    let report = sweep(&request(&[("first_run", "throws")], 1, ""), 0..200, &props).unwrap();
    assert!(report
        .findings
        .get("lock-ends-with-job")
        .is_some_and(|f| f.violations > 100));
}
