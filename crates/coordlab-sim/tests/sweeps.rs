//! Sweeps with random GC pauses (start and length), crashes, held links and parameters:
//! the fence must hold wherever it is in place, and the sweep must find the violation where
//! it is missing — which proves the checker can fail. The write predicate alone still lets
//! a step be debited twice (the takeover gap); stamping the row on takeover closes it. A
//! lease alone lets a late replica repeat the nightly job; a run key does not.

use coordlab_sim::properties::Verdict;
use coordlab_sim::sweep::{sweep, Finding, SweepReport};
use coordlab_sim::{run, Limits, Recording, RunRequest};

/// The base request a sweep varies: `scenario` with the fixed parameters `params`.
fn request(scenario: &str, params: &[(&str, &str)]) -> RunRequest {
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

/// The sweep found `property` violated (`why` says why it must be), and re-running the
/// first request it reports breaks the property again. Returns the finding.
fn assert_found_and_reproduces<'r>(report: &'r SweepReport, property: &str, why: &str) -> &'r Finding {
    let finding = report
        .findings
        .get(property)
        .unwrap_or_else(|| panic!("{property} not found: {why}"));
    let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
    let p = again
        .properties
        .iter()
        .find(|p| p.name == property)
        .unwrap_or_else(|| panic!("{property} is not checked on the re-run"));
    assert_eq!(
        p.verdict,
        Verdict::Violated,
        "{why}: the reported request reproduces the violation"
    );
    finding
}

#[test]
fn with_the_write_predicate_no_stale_write_is_accepted_in_5000_random_runs() {
    let report = sweep(
        &request("zombie-worker", &[("fencing", "write-predicate")]),
        0..5_000,
        &["fence-monotonic".to_string()],
    )
    .unwrap();
    assert_eq!(report.runs, 5_000);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn with_the_write_predicate_alone_the_sweep_finds_the_gap_and_its_seed_reproduces_it() {
    let report = sweep(
        &request("zombie-worker", &[("fencing", "write-predicate")]),
        0..2_000,
        &[],
    )
    .unwrap();
    assert!(!report.findings.contains_key("fence-monotonic"));
    let finding = assert_found_and_reproduces(
        &report,
        "no-double-debit",
        "the predicate alone leaves the takeover gap",
    );
    assert!(finding.violations > 50, "{}", finding.violations);
}

#[test]
fn fencing_on_takeover_breaks_no_property_in_5000_random_runs() {
    let report = sweep(
        &request("zombie-worker", &[("fencing", "fence-on-takeover")]),
        0..5_000,
        &[],
    )
    .unwrap();
    assert_eq!(report.runs, 5_000);
    assert_eq!(
        report.checked,
        ["fence-monotonic", "tokens-increase", "no-double-debit"]
    );
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn a_lease_lets_a_late_replica_run_the_nightly_job_again_and_a_run_key_does_not() {
    let lease = sweep(&request("duplicate-job", &[("lock", "lease")]), 0..5_000, &[]).unwrap();
    let finding = lease
        .findings
        .get("no-double-debit")
        .expect("a replica that fires after the first let go runs the job again");
    assert!(finding.violations > 50, "{}", finding.violations);
    let with_key = sweep(
        &request("duplicate-job", &[("lock", "lease-and-run-key")]),
        0..5_000,
        &[],
    )
    .unwrap();
    assert_eq!(with_key.runs, 5_000);
    assert!(with_key.findings.is_empty(), "{:?}", with_key.findings);
}

#[test]
fn without_fencing_the_sweep_finds_a_stale_write_and_its_seed_reproduces_it() {
    let report = sweep(
        &request("zombie-worker", &[("fencing", "none")]),
        0..5_000,
        &["fence-monotonic".to_string()],
    )
    .unwrap();
    let finding =
        assert_found_and_reproduces(&report, "fence-monotonic", "the sweep must find the planted bug");
    assert!(finding.violations > 50, "{}", finding.violations);
}

#[test]
fn sweep_requests_are_a_function_of_the_seed() {
    let a = sweep(&request("zombie-worker", &[("fencing", "none")]), 100..140, &[]).unwrap();
    let b = sweep(&request("zombie-worker", &[("fencing", "none")]), 100..140, &[]).unwrap();
    assert_eq!(a, b);
}

#[test]
fn an_unknown_property_is_refused_with_the_valid_names() {
    let err = sweep(
        &request("zombie-worker", &[("fencing", "none")]),
        0..1,
        &["no-such".to_string()],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("fence-monotonic"), "{err}");
}

#[test]
fn a_lease_table_on_the_primary_never_grants_twice_and_a_table_per_node_always_does() {
    let only = ["one-grant".to_string()];
    let report = sweep(
        &request("lease-placement", &[("store", "primary")]),
        0..2_000,
        &only,
    )
    .unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let report = sweep(
        &request("lease-placement", &[("store", "per-node-table")]),
        0..500,
        &only,
    )
    .unwrap();
    let finding = report.findings.get("one-grant").expect("two tables grant twice");
    assert!(finding.violations > 400, "{}", finding.violations);
}

#[test]
fn the_lease_counter_lets_no_stale_write_land_and_every_wrong_fence_is_found() {
    let only = ["no-stale-write".to_string()];
    let report = sweep(
        &request("fence-mistakes", &[("fence", "lease-counter")]),
        0..2_000,
        &only,
    )
    .unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    for fence in ["timestamp", "random-id", "per-process-counter", "reread-token"] {
        let report = sweep(&request("fence-mistakes", &[("fence", fence)]), 0..300, &only).unwrap();
        assert_found_and_reproduces(&report, "no-stale-write", fence);
    }
}

/// Locked claims never let two workers do the same job, through crashes, pauses and held
/// links; a plain SELECT claim does, and the sweep finds it.
#[test]
fn job_claims_with_a_row_lock_never_run_a_job_twice_and_a_plain_select_does() {
    for claim in ["skip-locked", "for-update", "nowait"] {
        let req = request("skip-locked-queue", &[("claim", claim), ("workers", "3")]);
        let report = sweep(&req, 0..1_000, &["no-job-done-twice".to_string()]).unwrap();
        assert_eq!(report.runs, 1_000);
        assert!(report.findings.is_empty(), "{claim}: {:?}", report.findings);
    }
    let req = request("skip-locked-queue", &[("claim", "plain"), ("workers", "3")]);
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
        let req = request("deadlock", &[("order", order)]);
        let report = sweep(&req, 0..1_000, &["money-conserved".to_string()]).unwrap();
        assert_eq!(report.runs, 1_000);
        assert!(report.findings.is_empty(), "{order}: {:?}", report.findings);
    }
}

/// However the faults fall, no two transactions hold customer 1 in conflicting modes.
#[test]
fn row_lock_holders_are_always_compatible_under_random_faults() {
    let req = request(
        "row-lock-modes",
        &[("t1", "share"), ("t2", "update-name"), ("t3", "insert-child")],
    );
    let report = sweep(&req, 0..1_000, &["holders-compatible".to_string()]).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn redisson_gives_no_token_so_random_pauses_find_a_stale_write_and_its_seed_reproduces_it() {
    let report = sweep(
        &request("redisson-watchdog", &[("pause", "none")]),
        0..2_000,
        &["no-stale-write".to_string()],
    )
    .unwrap();
    assert_found_and_reproduces(
        &report,
        "no-stale-write",
        "a watchdog without a token lets a paused holder write late",
    );
}

#[test]
fn shedlock_is_an_efficiency_lock_random_pauses_find_a_second_run_and_its_seed_reproduces_it() {
    let report = sweep(
        &request("scheduled-job-guard", &[("skew", "none")]),
        0..1_000,
        &[],
    )
    .unwrap();
    assert_found_and_reproduces(
        &report,
        "one-run-per-schedule",
        "a paused instance fires late and finds the row free",
    );
}

#[test]
fn a_storage_that_checks_the_fence_or_sequencer_applies_no_stale_write_in_2000_random_runs() {
    for (scenario, key, value) in [
        ("hazelcast-fenced-lock", "storage", "checks-fence"),
        ("chubby-sequencer", "check", "yes"),
    ] {
        let report = sweep(&request(scenario, &[(key, value)]), 0..2_000, &[]).unwrap();
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
        let report = sweep(&request(scenario, &[(key, value)]), 0..1_000, &[]).unwrap();
        assert_found_and_reproduces(&report, "no-stale-write", scenario);
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
            let req = request("token-sources", &[("source", source), ("failover", failover)]);
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
    let req = request("token-sources", &[("source", "redis-lua"), ("failover", "yes")]);
    let report = sweep(&req, 0..1_000, &["tokens-unique".to_string()]).unwrap();
    let finding = assert_found_and_reproduces(&report, "tokens-unique", "the promoted replica reissues 33");
    assert!(finding.violations > 100, "{}", finding.violations);
}

/// With an index on email, billing's update locks only the row it changes: through random
/// crashes, pauses and held links, support's update of another user never waits for it.
/// Without the index the sweep finds support waiting, and the reported request reproduces it.
#[test]
fn an_indexed_update_never_blocks_an_unrelated_one_and_a_table_scan_is_found_blocking_it() {
    let only = ["unrelated-update-never-waits".to_string()];
    let report = sweep(&request("lock-granularity", &[("index", "yes")]), 0..1_000, &only).unwrap();
    assert_eq!(report.runs, 1_000);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let report = sweep(&request("lock-granularity", &[("index", "no")]), 0..1_000, &only).unwrap();
    let finding = assert_found_and_reproduces(
        &report,
        "unrelated-update-never-waits",
        "the scan locks support's row",
    );
    assert!(finding.violations > 100, "{}", finding.violations);
}

/// A lease held across a slow call: random pauses, crashes and call lengths find the double
/// payout with the call inside the lock (and its request reproduces it); with the run claimed
/// outside the lock, or the call keyed and the record fenced, nothing pays twice.
#[test]
fn a_lock_held_across_a_call_is_found_paying_twice_and_the_remedies_never_do() {
    let props = ["no-double-payment".to_string()];
    let inside = sweep(
        &request("lock-across-call", &[("call", "inside-lock")]),
        0..1_000,
        &props,
    )
    .unwrap();
    let finding = assert_found_and_reproduces(
        &inside,
        "no-double-payment",
        "a call longer than the lease lets the next holder pay again",
    );
    assert!(finding.violations > 50, "{}", finding.violations);
    for call in ["outside-lock", "idempotent-fenced"] {
        let report = sweep(&request("lock-across-call", &[("call", call)]), 0..1_000, &[]).unwrap();
        assert_eq!(report.runs, 1_000);
        assert!(report.findings.is_empty(), "{call}: {:?}", report.findings);
    }
}
