//! Sweeps with random GC pauses (start and length), crashes, held links and parameters:
//! the fence must hold wherever it is in place, and the sweep must find the violation where
//! it is missing — which proves the checker can fail. The write predicate alone still lets
//! a step be debited twice (the takeover gap); stamping the row on takeover closes it. A
//! lease alone lets a late replica repeat the nightly job; a run key does not.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::Params;
use coordlab_sim::sweep::sweep;
use coordlab_sim::{run, Limits, Recording, RunRequest};

fn zombie(fencing: &str) -> RunRequest {
    let mut params = Params::new();
    params.insert("fencing".into(), fencing.into());
    RunRequest {
        scenario: "zombie-worker".into(),
        params,
        seed: 1,
        actions: vec![],
    }
}

#[test]
fn with_the_write_predicate_no_stale_write_is_accepted_in_5000_random_runs() {
    let report = sweep(
        &zombie("write-predicate"),
        0..5_000,
        &["fence-monotonic".to_string()],
    )
    .unwrap();
    assert_eq!(report.runs, 5_000);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn with_the_write_predicate_alone_the_sweep_finds_the_gap_and_its_seed_reproduces_it() {
    let report = sweep(&zombie("write-predicate"), 0..2_000, &[]).unwrap();
    assert!(!report.findings.contains_key("fence-monotonic"));
    let finding = report
        .findings
        .get("no-double-debit")
        .expect("the predicate alone leaves the takeover gap");
    assert!(finding.violations > 50, "{}", finding.violations);
    let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
    let p = again
        .properties
        .iter()
        .find(|p| p.name == "no-double-debit")
        .unwrap();
    assert_eq!(p.verdict, Verdict::Violated);
}

#[test]
fn fencing_on_takeover_breaks_no_property_in_5000_random_runs() {
    let report = sweep(&zombie("fence-on-takeover"), 0..5_000, &[]).unwrap();
    assert_eq!(report.runs, 5_000);
    assert_eq!(
        report.checked,
        ["fence-monotonic", "tokens-increase", "no-double-debit"]
    );
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

fn duplicate_job(lock: &str) -> RunRequest {
    let mut params = Params::new();
    params.insert("lock".into(), lock.into());
    RunRequest {
        scenario: "duplicate-job".into(),
        params,
        seed: 1,
        actions: vec![],
    }
}

#[test]
fn a_lease_lets_a_late_replica_run_the_nightly_job_again_and_a_run_key_does_not() {
    let lease = sweep(&duplicate_job("lease"), 0..5_000, &[]).unwrap();
    let finding = lease
        .findings
        .get("no-double-debit")
        .expect("a replica that fires after the first let go runs the job again");
    assert!(finding.violations > 50, "{}", finding.violations);
    let with_key = sweep(&duplicate_job("lease-and-run-key"), 0..5_000, &[]).unwrap();
    assert_eq!(with_key.runs, 5_000);
    assert!(with_key.findings.is_empty(), "{:?}", with_key.findings);
}

#[test]
fn without_fencing_the_sweep_finds_a_stale_write_and_its_seed_reproduces_it() {
    let report = sweep(&zombie("none"), 0..5_000, &["fence-monotonic".to_string()]).unwrap();
    let finding = report
        .findings
        .get("fence-monotonic")
        .expect("the sweep must find the planted bug");
    assert!(finding.violations > 50, "{}", finding.violations);
    let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
    let p = again
        .properties
        .iter()
        .find(|p| p.name == "fence-monotonic")
        .unwrap();
    assert_eq!(
        p.verdict,
        Verdict::Violated,
        "the reported request reproduces the violation"
    );
}

#[test]
fn sweep_requests_are_a_function_of_the_seed() {
    let a = sweep(&zombie("none"), 100..140, &[]).unwrap();
    let b = sweep(&zombie("none"), 100..140, &[]).unwrap();
    assert_eq!(a, b);
}

#[test]
fn an_unknown_property_is_refused_with_the_valid_names() {
    let err = sweep(&zombie("none"), 0..1, &["no-such".to_string()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("fence-monotonic"), "{err}");
}

fn with(scenario: &str, key: &str, value: &str) -> RunRequest {
    with_params(scenario, &[(key, value)])
}

fn with_params(scenario: &str, params: &[(&str, &str)]) -> RunRequest {
    RunRequest {
        scenario: scenario.into(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        seed: 1,
        actions: vec![],
    }
}

#[test]
fn a_lease_table_on_the_primary_never_grants_twice_and_a_table_per_node_always_does() {
    let only = ["one-grant".to_string()];
    let report = sweep(&with("lease-placement", "store", "primary"), 0..2_000, &only).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let report = sweep(&with("lease-placement", "store", "per-node-table"), 0..500, &only).unwrap();
    let finding = report.findings.get("one-grant").expect("two tables grant twice");
    assert!(finding.violations > 400, "{}", finding.violations);
}

#[test]
fn the_lease_counter_lets_no_stale_write_land_and_every_wrong_fence_is_found() {
    let only = ["no-stale-write".to_string()];
    let report = sweep(&with("fence-mistakes", "fence", "lease-counter"), 0..2_000, &only).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    for fence in ["timestamp", "random-id", "per-process-counter", "reread-token"] {
        let report = sweep(&with("fence-mistakes", "fence", fence), 0..300, &only).unwrap();
        let finding = report
            .findings
            .get("no-stale-write")
            .unwrap_or_else(|| panic!("{fence}: not found"));
        let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
        let p = again
            .properties
            .iter()
            .find(|p| p.name == "no-stale-write")
            .unwrap();
        assert_eq!(p.verdict, Verdict::Violated, "{fence}");
    }
}

/// Locked claims never let two workers do the same job, through crashes, pauses and held
/// links; a plain SELECT claim does, and the sweep finds it.
#[test]
fn job_claims_with_a_row_lock_never_run_a_job_twice_and_a_plain_select_does() {
    for claim in ["skip-locked", "for-update", "nowait"] {
        let req = with_params("skip-locked-queue", &[("claim", claim), ("workers", "3")]);
        let report = sweep(&req, 0..1_000, &["no-job-done-twice".to_string()]).unwrap();
        assert_eq!(report.runs, 1_000);
        assert!(report.findings.is_empty(), "{claim}: {:?}", report.findings);
    }
    let req = with_params("skip-locked-queue", &[("claim", "plain"), ("workers", "3")]);
    let report = sweep(&req, 0..500, &["no-job-done-twice".to_string()]).unwrap();
    let finding = report
        .findings
        .get("no-job-done-twice")
        .expect("the plain claim is found");
    assert!(finding.violations > 100, "{}", finding.violations);
}

/// A transfer commits whole or not at all: deadlock aborts, crashes and pauses never break
/// the total, in either lock order.
#[test]
fn transfers_conserve_money_through_deadlocks_and_random_faults() {
    for order in ["opposite", "ordered"] {
        let req = with_params("deadlock", &[("order", order)]);
        let report = sweep(&req, 0..1_000, &["money-conserved".to_string()]).unwrap();
        assert_eq!(report.runs, 1_000);
        assert!(report.findings.is_empty(), "{order}: {:?}", report.findings);
    }
}

/// However the faults fall, no two transactions hold customer 1 in conflicting modes.
#[test]
fn row_lock_holders_are_always_compatible_under_random_faults() {
    let req = with_params(
        "row-lock-modes",
        &[("t1", "share"), ("t2", "update-name"), ("t3", "insert-child")],
    );
    let report = sweep(&req, 0..1_000, &["holders-compatible".to_string()]).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

fn service(scenario: &str, key: &str, value: &str) -> RunRequest {
    with(scenario, key, value)
}

#[test]
fn redisson_gives_no_token_so_random_pauses_find_a_stale_write_and_its_seed_reproduces_it() {
    let report = sweep(
        &service("redisson-watchdog", "pause", "none"),
        0..2_000,
        &["no-stale-write".to_string()],
    )
    .unwrap();
    let finding = report
        .findings
        .get("no-stale-write")
        .expect("a watchdog without a token lets a paused holder write late");
    let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
    let p = again
        .properties
        .iter()
        .find(|p| p.name == "no-stale-write")
        .unwrap();
    assert_eq!(p.verdict, Verdict::Violated);
}

#[test]
fn shedlock_is_an_efficiency_lock_random_pauses_find_a_second_run_and_its_seed_reproduces_it() {
    let report = sweep(&service("scheduled-job-guard", "skew", "none"), 0..1_000, &[]).unwrap();
    let finding = report
        .findings
        .get("one-run-per-schedule")
        .expect("a paused instance fires late and finds the row free");
    let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
    let p = again
        .properties
        .iter()
        .find(|p| p.name == "one-run-per-schedule")
        .unwrap();
    assert_eq!(p.verdict, Verdict::Violated);
}

#[test]
fn a_storage_that_checks_the_fence_or_sequencer_applies_no_stale_write_in_2000_random_runs() {
    for (scenario, key, value) in [
        ("hazelcast-fenced-lock", "storage", "checks-fence"),
        ("chubby-sequencer", "check", "yes"),
    ] {
        let report = sweep(&service(scenario, key, value), 0..2_000, &[]).unwrap();
        assert_eq!(report.checked, ["no-stale-write"]);
        assert!(report.findings.is_empty(), "{scenario}: {:?}", report.findings);
    }
}

#[test]
fn a_storage_that_ignores_the_number_is_found_applying_a_stale_write() {
    for (scenario, key, value) in [
        ("hazelcast-fenced-lock", "storage", "ignores-fence"),
        ("chubby-sequencer", "check", "no"),
    ] {
        let report = sweep(&service(scenario, key, value), 0..1_000, &[]).unwrap();
        let finding = report.findings.get("no-stale-write").expect(scenario);
        let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
        let p = again
            .properties
            .iter()
            .find(|p| p.name == "no-stale-write")
            .unwrap();
        assert_eq!(p.verdict, Verdict::Violated);
    }
}

/// A store that replicates by quorum keeps its counter through random crashes, restarts,
/// pauses and held links, with or without the scripted failover: a restarted old primary
/// rejoins as a replica, so there is never a second primary to hand out a token twice.
#[test]
fn a_quorum_store_never_issues_a_token_twice_under_random_faults() {
    // Not `no-double-debit`: a ledger paused with A's step 1 in its queue applies it on
    // waking, then B's redo of step 1 with a higher token: both land. That is the takeover
    // gap the zombie-worker sweep shows, which no token source closes on its own.
    let only = ["tokens-unique".to_string(), "no-stale-write".to_string()];
    for source in [
        "lease-table",
        "postgres-sequence",
        "dynamodb",
        "k8s-lease",
        "etcd",
        "zookeeper",
    ] {
        for failover in ["no", "yes"] {
            let req = with_params("token-sources", &[("source", source), ("failover", failover)]);
            let report = sweep(&req, 0..1_000, &only).unwrap();
            assert_eq!(report.runs, 1_000);
            assert_eq!(report.checked, only);
            assert!(
                report.findings.is_empty(),
                "{source} failover={failover}: {:?}",
                report.findings
            );
        }
    }
}

/// Redis answers before it replicates: after a failover the sweep finds the same token
/// handed out twice, and the request it reports reproduces it.
#[test]
fn redis_failing_over_is_found_issuing_a_token_twice_and_its_request_reproduces_it() {
    let req = with_params("token-sources", &[("source", "redis-lua"), ("failover", "yes")]);
    let report = sweep(&req, 0..1_000, &["tokens-unique".to_string()]).unwrap();
    let finding = report
        .findings
        .get("tokens-unique")
        .expect("the promoted replica reissues 33");
    assert!(finding.violations > 100, "{}", finding.violations);
    let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
    let p = again
        .properties
        .iter()
        .find(|p| p.name == "tokens-unique")
        .unwrap();
    assert_eq!(p.verdict, Verdict::Violated);
}

/// With an index on email, billing's update locks only the row it changes: through random
/// crashes, pauses and held links, support's update of another user never waits for it.
/// Without the index the sweep finds support waiting, and the reported request reproduces it.
#[test]
fn an_indexed_update_never_blocks_an_unrelated_one_and_a_table_scan_is_found_blocking_it() {
    let only = ["unrelated-update-never-waits".to_string()];
    let report = sweep(&with("lock-granularity", "index", "yes"), 0..1_000, &only).unwrap();
    assert_eq!(report.runs, 1_000);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let report = sweep(&with("lock-granularity", "index", "no"), 0..1_000, &only).unwrap();
    let finding = report
        .findings
        .get("unrelated-update-never-waits")
        .expect("the scan locks support's row");
    assert!(finding.violations > 100, "{}", finding.violations);
    let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
    let p = again
        .properties
        .iter()
        .find(|p| p.name == "unrelated-update-never-waits")
        .unwrap();
    assert_eq!(p.verdict, Verdict::Violated);
}
