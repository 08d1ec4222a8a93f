//! `raft-chaos`: random storms of faults on a lossy, duplicating, reordering network. No
//! safety property may fail, and after the heal the cluster must settle on one leader and
//! one log. (CI also runs `coordlab check raft-chaos --seeds 0..10000` in release mode; this
//! debug-build test covers a slice of that range.)

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::sweep::sweep;
use coordlab_sim::trace::EventKind;
use coordlab_sim::{run, Fault, Limits, Recording, RunRequest, Trace};

fn request(seed: u64, pairs: &[(&str, &str)]) -> RunRequest {
    let params: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RunRequest {
        scenario: "raft-chaos".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn summary(r: &RunRequest) -> Trace {
    run(r, Limits::default(), Recording::Summary).unwrap()
}

#[test]
fn every_storm_is_safe_and_the_cluster_converges_after_the_heal() {
    for seed in 0..150 {
        let r = request(seed, &[]);
        let t = summary(&r);
        let misses = expectation_for(&r).unwrap().mismatches(&t);
        assert!(misses.is_empty(), "seed {seed}: {misses:?}");
    }
}

#[test]
fn storms_also_converge_for_other_cluster_sizes() {
    for servers in ["3", "4", "7"] {
        for seed in 0..30 {
            let r = request(seed, &[("servers", servers)]);
            let misses = expectation_for(&r).unwrap().mismatches(&summary(&r));
            assert!(misses.is_empty(), "servers={servers} seed {seed}: {misses:?}");
        }
    }
}

#[test]
fn the_storm_really_crashes_partitions_and_duplicates() {
    let t = run(
        &request(4, &[("fault_count", "30")]),
        Limits::default(),
        Recording::Lines,
    )
    .unwrap();
    let faults: Vec<&Fault> = t.entries.iter().filter_map(|e| e.fault.as_ref()).collect();
    let has = |f: fn(&Fault) -> bool| faults.iter().any(|x| f(x));
    assert!(has(|f| matches!(f, Fault::Crash { .. })), "{faults:?}");
    assert!(has(|f| matches!(f, Fault::Restart { .. })));
    assert!(has(|f| matches!(f, Fault::Pause { .. })));
    assert!(has(
        |f| matches!(f, Fault::Partition { .. }) || matches!(f, Fault::CutLink { .. })
    ));
    assert!(has(|f| matches!(f, Fault::Heal)));
    // Loss shows as messages lost to chance; duplication as more deliveries than sends.
    let lost: usize = t.entries.iter().map(|e| e.lost.len()).sum();
    assert!(lost > 0, "no message was lost");
    // A duplicate is a second delivery of the same send: same ends, label and send time,
    // another message id.
    let mut sends: Vec<(u32, u32, u64, String)> = t
        .entries
        .iter()
        .filter(|e| e.kind == EventKind::Deliver)
        .filter_map(|e| e.message.as_ref())
        .map(|m| (m.from.0, m.to.0, m.sent_us, m.label.clone()))
        .collect();
    let deliveries = sends.len();
    sends.sort();
    sends.dedup();
    assert!(sends.len() < deliveries, "no message was delivered twice");
}

#[test]
fn without_the_heal_window_the_convergence_check_can_fail() {
    // The checker is not vacuous: stop the run right at the heal and there is no time to
    // settle after a storm that took the leader down.
    let mut failed = 0;
    for seed in 0..40 {
        let r = request(seed, &[("fault_count", "30")]);
        let t = run(
            &r,
            Limits {
                max_time_us: 3_000 * 1_000 + 1,
                ..Limits::default()
            },
            Recording::Summary,
        )
        .unwrap();
        let p = t
            .properties
            .iter()
            .find(|p| p.name == "converges-after-heal")
            .unwrap();
        if p.verdict == Verdict::Violated {
            failed += 1;
        }
    }
    assert!(
        failed > 0,
        "cutting the settle time never failed the convergence check"
    );
}

/// The random-fault sweep (`coordlab sweep raft-chaos --set bug=…`) finds each planted bug
/// and the request it reports reproduces the violation.
fn sweep_finds(bug: &str, seeds: std::ops::Range<u64>, properties: &[&str]) {
    let b = request(1, &[("bug", bug)]);
    let report = sweep(&b, seeds.clone(), &[]).unwrap();
    let found: Vec<&String> = report.findings.keys().collect();
    let Some(name) = properties.iter().find(|p| report.findings.contains_key(**p)) else {
        panic!("bug={bug}: none of {properties:?} violated in seeds {seeds:?}; found {found:?}");
    };
    let again = summary(&report.findings[*name].first);
    assert!(
        again
            .properties
            .iter()
            .any(|p| p.name == *name && p.verdict == Verdict::Violated),
        "bug={bug}: the reported request does not reproduce `{name}`"
    );
}

#[test]
fn the_sweep_finds_every_planted_bug_in_the_storm() {
    // Rates over seeds 0..1000 were 39%, 14% and 0.1% (seed 155 the first) respectively.
    sweep_finds(
        "skip-up-to-date-check",
        0..20,
        &["leader-completeness", "state-machine-safety"],
    );
    sweep_finds(
        "forget-vote-on-restart",
        0..40,
        &["one-vote-per-term", "election-safety"],
    );
    sweep_finds(
        "commit-old-term-by-count",
        150..160,
        &["state-machine-safety", "leader-completeness"],
    );
}
