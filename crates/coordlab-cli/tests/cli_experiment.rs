//! End-to-end tests of `coordlab experiment election-downtime` and `consensus-throughput`.

use serde_json::Value;
use std::process::{Command, Output};

fn coordlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coordlab"))
        .args(args)
        .output()
        .expect("the coordlab binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

fn downtime(extra: &[&str]) -> Output {
    let mut args = vec!["experiment", "election-downtime"];
    args.extend_from_slice(extra);
    coordlab(&args)
}

/// Runs a command that must be a usage error and returns its stderr.
fn usage_error(extra: &[&str]) -> String {
    let out = downtime(extra);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{extra:?} should be a usage error; stderr: {err}"
    );
    assert!(!err.contains("panicked"), "{extra:?} panicked: {err}");
    assert!(stdout(&out).is_empty(), "{extra:?} printed a report anyway");
    err
}

fn json_report(range: &str, trials: &str, seed: &str) -> Value {
    json_report_with(range, trials, seed, &[])
}

fn json_report_with(range: &str, trials: &str, seed: &str, timing: &[&str]) -> Value {
    let mut args = vec![
        "--timeout-ms",
        range,
        "--trials",
        trials,
        "--seed",
        seed,
        "--format",
        "json",
    ];
    args.extend_from_slice(timing);
    let out = downtime(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "json is one object on one line");
    serde_json::from_str(&text).expect("the output is JSON")
}

#[test]
fn json_has_one_downtime_per_trial_and_every_summary_key() {
    let report = json_report("150-300", "12", "3");
    let trials = report["trials_ms"].as_array().expect("trials_ms is an array");
    assert_eq!(trials.len(), 12);
    for t in trials {
        let ms = t.as_f64().expect("150-300 elects a leader in every trial");
        // A timeout of at least 150 ms less at most one 75 ms heartbeat must run out first.
        assert!(ms > 75.0 && ms < 60_000.0, "implausible downtime {ms}");
    }
    let summary = report["summary"].as_object().expect("summary is an object");
    for key in ["min", "p10", "median", "p90", "p99", "max", "mean"] {
        assert!(summary[key].is_number(), "summary.{key} is a number: {summary:?}");
    }
    let min = summary["min"].as_f64().unwrap();
    let max = summary["max"].as_f64().unwrap();
    let median = summary["median"].as_f64().unwrap();
    assert!(min <= median && median <= max);
    assert_eq!(report["no_leader"], 0);
    assert_eq!(report["heartbeat_ms"], 75);
}

#[test]
fn identical_timeouts_with_exact_timers_leave_trials_without_a_leader() {
    // The old model's perfect timers stay in lockstep: the JSON marks such trials null
    // instead of inventing a number, and the unknown tail of the summary is null too.
    let old = ["--latency-ms", "5-10", "--durable-ms", "0", "--jitter-ms", "0"];
    let report = json_report_with("150-150", "2", "1", &old);
    let trials = report["trials_ms"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    assert!(trials.iter().all(|t| t.is_null()), "{report}");
    assert_eq!(report["no_leader"].as_u64(), Some(2));
    assert!(report["summary"]["max"].is_null());
    assert!(report["summary"]["mean"].is_null());
    // Timers up to 1 ms late (the default) break the tie, slowly.
    let jitter = json_report("150-150", "5", "1");
    assert_eq!(jitter["no_leader"], 0, "{jitter}");
}

#[test]
fn timing_flags_reach_the_report() {
    let report = json_report("150-300", "3", "1");
    assert_eq!(report["latency_ms"]["min"], 2.0);
    assert_eq!(report["latency_ms"]["max"], 3.0);
    assert_eq!(report["durable_write_ms"], 10.0);
    assert_eq!(report["timer_jitter_ms"], 0.5);
    assert_eq!(report["broadcast_time_ms"], 15.0, "the paper's broadcast time");
    let set = [
        "--latency-ms",
        "0.5-1.5",
        "--durable-ms",
        "8",
        "--jitter-ms",
        "0.25",
    ];
    let report = json_report_with("150-300", "3", "1", &set);
    assert_eq!(report["latency_ms"]["min"], 0.5);
    assert_eq!(report["durable_write_ms"], 8.0);
    assert_eq!(report["timer_jitter_ms"], 0.25);
    assert_eq!(report["broadcast_time_ms"], 10.0);
    let text = stdout(&downtime(&["--timeout-ms", "150-300", "--trials", "2"]));
    assert!(
        text.contains(
            "latency 2-3 ms one way · durable write 10 ms · timers up to 0.5 ms late · broadcast time 15 ms"
        ),
        "{text}"
    );
}

#[test]
fn the_same_seed_prints_the_same_report() {
    let args = ["--timeout-ms", "12-24", "--trials", "20", "--seed", "42"];
    let a = downtime(&args);
    let b = downtime(&args);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
    let other = downtime(&["--timeout-ms", "12-24", "--trials", "20", "--seed", "43"]);
    assert_ne!(stdout(&a), stdout(&other), "another seed gives other trials");
}

#[test]
fn text_shows_a_summary_a_histogram_and_every_trial() {
    let out = downtime(&["--timeout-ms", "150-300", "--trials", "25"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for label in ["median", "p90", "p99", "mean", "histogram", "every trial"] {
        assert!(text.contains(label), "text report shows {label}:\n{text}");
    }
    assert!(
        text.contains("100.0%"),
        "the cumulative column ends at 100%:\n{text}"
    );
    // 25 trials, ten per line: lines for trials 0, 10 and 20.
    for start in ["     0:", "    10:", "    20:"] {
        assert!(text.contains(start), "trial line {start}:\n{text}");
    }
}

#[test]
fn help_describes_the_model() {
    let out = downtime(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for fact in [
        "five servers",
        "heartbeat",
        "uniformly",
        "15 ms",
        "60 s",
        "--timeout-ms",
        "--latency-ms",
        "--durable-ms",
        "--jitter-ms",
        "durable write",
        "late",
    ] {
        assert!(
            text.to_lowercase().contains(&fact.to_lowercase()),
            "help mentions {fact}:\n{text}"
        );
    }
    let general = coordlab(&["--help"]);
    assert!(stdout(&general).contains("coordlab experiment election-downtime"));
}

#[test]
fn bad_requests_exit_2_with_a_message() {
    let backwards = usage_error(&["--timeout-ms", "300-150", "--trials", "5"]);
    assert!(backwards.contains("300-150"), "{backwards}");
    assert!(backwards.contains("MIN <= MAX"), "{backwards}");
    let too_big = usage_error(&["--timeout-ms", "150-20000", "--trials", "5"]);
    assert!(too_big.contains("out of range"), "{too_big}");
    let too_small = usage_error(&["--timeout-ms", "1-5", "--trials", "5"]);
    assert!(too_small.contains("out of range"), "{too_small}");
    let no_dash = usage_error(&["--timeout-ms", "150", "--trials", "5"]);
    assert!(no_dash.contains("MIN-MAX"), "{no_dash}");
    let words = usage_error(&["--timeout-ms", "fast-slow", "--trials", "5"]);
    assert!(words.contains("not a whole number"), "{words}");
    let zero = usage_error(&["--timeout-ms", "150-300", "--trials", "0"]);
    assert!(zero.contains("trials"), "{zero}");
    let many = usage_error(&["--timeout-ms", "150-300", "--trials", "100001"]);
    assert!(many.contains("100000"), "{many}");
    let missing = usage_error(&["--trials", "5"]);
    assert!(missing.contains("--timeout-ms"), "{missing}");
    let no_trials = usage_error(&["--timeout-ms", "150-300"]);
    assert!(no_trials.contains("--trials"), "{no_trials}");
    let format = usage_error(&["--timeout-ms", "150-300", "--trials", "5", "--format", "xml"]);
    assert!(format.contains("text, json"), "{format}");
    let unknown = usage_error(&["--timeout-ms", "150-300", "--trials", "5", "--bogus", "1"]);
    assert!(unknown.contains("--bogus"), "{unknown}");
    let twice = usage_error(&[
        "--timeout-ms",
        "150-300",
        "--timeout-ms",
        "150-200",
        "--trials",
        "5",
    ]);
    assert!(twice.contains("twice"), "{twice}");
    let latency = usage_error(&["--timeout-ms", "150-300", "--trials", "5", "--latency-ms", "2-1"]);
    assert!(latency.contains("MIN <= MAX"), "{latency}");
    let latency = usage_error(&["--timeout-ms", "150-300", "--trials", "5", "--latency-ms", "2"]);
    assert!(latency.contains("MIN-MAX"), "{latency}");
    let durable = usage_error(&["--timeout-ms", "150-300", "--trials", "5", "--durable-ms", "x"]);
    assert!(durable.contains("--durable-ms"), "{durable}");
    let durable = usage_error(&["--timeout-ms", "150-300", "--trials", "5", "--durable-ms", "5000"]);
    assert!(durable.contains("out of range"), "{durable}");
    let jitter = usage_error(&[
        "--timeout-ms",
        "150-300",
        "--trials",
        "5",
        "--jitter-ms",
        "0.0001",
    ]);
    assert!(jitter.contains("3 decimals"), "{jitter}");
    let out = coordlab(&["experiment", "leader-lottery"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("election-downtime"));
}

fn throughput(extra: &[&str]) -> Output {
    let mut args = vec!["experiment", "consensus-throughput"];
    args.extend_from_slice(extra);
    coordlab(&args)
}

fn writes_per_s(rows: &Value) -> Vec<u64> {
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|r| r["writes_per_s"].as_u64().expect("writes_per_s"))
        .collect()
}

/// Consensus is for metadata, not volume: a bigger group is slower, more groups are faster.
#[test]
fn consensus_throughput_falls_with_cluster_size_and_rises_with_groups() {
    let out = throughput(&["--duration-ms", "150", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let sizes = writes_per_s(&report["by_cluster_size"]);
    assert_eq!(sizes.len(), 3);
    assert!(sizes[2] < sizes[1] && sizes[1] < sizes[0], "7 < 5 < 3: {sizes:?}");
    let groups = writes_per_s(&report["by_groups"]);
    assert_eq!(groups.len(), 4);
    assert!(
        groups.windows(2).all(|w| w[0] < w[1]),
        "more groups, more writes: {groups:?}"
    );
    for row in report["by_cluster_size"].as_array().unwrap() {
        let median = row["latency_ms"]["median"].as_f64().unwrap();
        let p99 = row["latency_ms"]["p99"].as_f64().unwrap();
        assert!(median > 0.0 && p99 >= median, "{row}");
    }
    let again = throughput(&["--duration-ms", "150", "--format", "json"]);
    assert_eq!(stdout(&again), stdout(&out), "deterministic for a seed");
}

#[test]
fn consensus_throughput_prints_two_tables_and_explains_bad_options() {
    let out = throughput(&["--duration-ms", "50"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for needle in ["writes/s", "median ms", "p99 ms", "servers", "groups"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let help = stdout(&throughput(&["--help"]));
    assert!(help.contains("CPU") && help.contains("closed loop"), "{help}");
    for bad in [
        &["--duration-ms", "5"][..],
        &["--duration-ms", "x"],
        &["--format", "xml"],
        &["--bogus"],
        &["--seed", "1", "--seed", "2"],
    ] {
        let out = throughput(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!stderr(&out).contains("panicked"), "{bad:?}");
    }
}

/// The costs are labelled as assumptions, etcd's published figures and their source are
/// printed beside the model's, each row names the cap that holds it, and the model's
/// controls re-run it (a smaller batch lowers the 3-server group) or are refused with the range.
#[test]
fn consensus_throughput_labels_its_assumptions_and_shows_etcds_published_figures() {
    let text = stdout(&throughput(&["--duration-ms", "50"]));
    for needle in [
        "illustrative assumptions",
        "etcd operations guide, \"Performance\" (etcd 3.2.0",
        "583 writes/s at 1.6 ms",
        "44341 writes/s at 22.0 ms",
        "50104 writes/s at 20.0 ms",
        "clients/(w/s)",
        "held by",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let out = throughput(&["--duration-ms", "150", "--format", "json"]);
    let report: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let held: Vec<&str> = report["by_cluster_size"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["held_by"].as_str().unwrap())
        .collect();
    assert_eq!(held, ["batch", "CPU", "CPU"]);
    let small = throughput(&[
        "--duration-ms",
        "150",
        "--batch",
        "4",
        "--clients",
        "32",
        "--format",
        "json",
    ]);
    assert_eq!(small.status.code(), Some(0), "{}", stderr(&small));
    let small: Value = serde_json::from_str(&stdout(&small)).expect("json");
    assert_eq!(small["batch_entries"], 4);
    assert!(
        writes_per_s(&small["by_cluster_size"])[0] < writes_per_s(&report["by_cluster_size"])[0],
        "a batch of 4 commits less"
    );
    for (bad, says) in [
        (&["--batch", "17"][..], "1..=16"),
        (&["--clients", "0"], "1..=1000"),
        (&["--message-cpu-us", "x"], "whole number"),
        (&["--servers", "10"], "1..=9"),
    ] {
        let out = throughput(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&out).contains(says), "{bad:?}: {}", stderr(&out));
    }
}

/// Where the 12-24 ms downtime goes: detection as in the paper, then an election whose first
/// winner is sometimes deposed, because a 15 ms vote round trip outlasts a 12 ms timeout.
#[test]
fn election_downtime_splits_the_time_and_counts_deposed_winners() {
    let out = downtime(&["--timeout-ms", "12-24", "--trials", "200", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let w = &report["where_the_time_went"];
    assert_eq!(w["trials"], 200);
    let detect = w["detect_mean_ms"].as_f64().unwrap();
    assert!((12.0..16.0).contains(&detect), "{w}");
    assert!(w["first_winner_deposed"].as_u64().unwrap() >= 10, "{w}");
    let text = stdout(&downtime(&["--timeout-ms", "150-200", "--trials", "50"]));
    assert!(
        text.contains("where the time went") && text.contains("first winner deposed in 0 trials"),
        "{text}"
    );
}
