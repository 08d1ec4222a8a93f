//! End-to-end tests of the `coordlab` binary.

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

/// The parsed summary line of a jsonl run with `lock` set.
fn jsonl_summary(lock: &str) -> Value {
    let out = coordlab(&[
        "run",
        "lost-update",
        "--set",
        &format!("lock={lock}"),
        "--format",
        "jsonl",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let last = text.lines().last().expect("at least one line");
    let summary: Value = serde_json::from_str(last).expect("the last line is JSON");
    assert_eq!(summary["kind"], "summary");
    summary
}

fn property<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["properties"]
        .as_array()
        .expect("properties is an array")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("property {name} is reported"))
}

/// Runs a command that must be a usage error and returns its stderr.
fn usage_error(args: &[&str]) -> String {
    let out = coordlab(args);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} should be a usage error; stderr: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.contains("error"), "{args:?} should explain itself: {err}");
    err
}

#[test]
fn no_lock_loses_an_update_in_the_jsonl_summary() {
    let summary = jsonl_summary("none");
    assert_eq!(summary["outcome"]["balance"], 70);
    let p = property(&summary, "no-lost-update");
    assert_eq!(p["verdict"], "violated");
    assert!(p["first_violation_seq"].is_u64(), "{p}");
    assert_eq!(summary["expected"]["met"], true);
    assert_eq!(summary["scenario"], "lost-update");
    assert_eq!(summary["seed"], 1);
    assert_eq!(summary["params"]["lock"], "none");
}

#[test]
fn row_lock_keeps_both_debits_and_every_property_holds() {
    let summary = jsonl_summary("row-lock");
    assert_eq!(summary["outcome"]["balance"], 40);
    for p in summary["properties"].as_array().expect("properties is an array") {
        assert_eq!(p["verdict"], "holds", "{p}");
        assert!(p["first_violation_seq"].is_null(), "{p}");
    }
}

#[test]
fn conditional_update_keeps_both_debits() {
    let summary = jsonl_summary("conditional-update");
    assert_eq!(summary["outcome"]["balance"], 40);
    assert_eq!(property(&summary, "no-lost-update")["verdict"], "holds");
}

#[test]
fn every_jsonl_line_is_a_json_object() {
    let out = coordlab(&[
        "run",
        "lost-update",
        "--format",
        "jsonl",
        "--actions",
        "12@pause:1:400",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 2);
    for line in &lines {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v.is_object(), "{line}");
    }
    for line in &lines[..lines.len() - 1] {
        let v: Value = serde_json::from_str(line).expect("checked above");
        for key in [
            "seq",
            "time_us",
            "kind",
            "text",
            "nodes",
            "notes",
            "violations",
            "lost",
        ] {
            assert!(v.get(key).is_some(), "missing {key}: {line}");
        }
        if v["kind"] == "deliver" {
            assert!(v["message"]["from"].is_string(), "{line}");
        }
    }
    let fault = lines
        .iter()
        .find(|l| l.contains("\"kind\":\"fault\""))
        .expect("the pause is in the trace");
    let fault: Value = serde_json::from_str(fault).expect("checked above");
    assert_eq!(fault["fault"], "pause:1:400");
}

#[test]
fn text_format_ends_with_a_summary() {
    let out = coordlab(&["run", "lost-update", "--set", "lock=none"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("== summary"), "{text}");
    assert!(text.contains("balance=70"), "{text}");
    let verdict = text
        .lines()
        .find(|l| l.trim_start().starts_with("no-lost-update "))
        .expect("a verdict line");
    assert!(verdict.contains("violated at step"), "{verdict}");
    assert!(
        text.contains("  | "),
        "narration is indented under its event: {text}"
    );
    assert!(text.contains("  ! violated: no-lost-update"), "{text}");
    assert!(text.contains(": met"), "{text}");
}

#[test]
fn mermaid_is_a_sequence_diagram_with_participants_arrows_and_the_violation() {
    let out = coordlab(&["run", "lost-update", "--set", "lock=none", "--format", "mermaid"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines().skip_while(|l| l.starts_with("%%"));
    assert_eq!(lines.next(), Some("sequenceDiagram"), "{text}");
    for (id, name) in [("n0", "database"), ("n1", "worker-1"), ("n2", "worker-2")] {
        assert!(text.contains(&format!("participant {id} as {name}\n")), "{text}");
    }
    assert!(text.contains("->>"), "{text}");
    assert!(
        text.contains("Note over n0,n2: violated: no-lost-update"),
        "{text}"
    );
    for line in text.lines().filter(|l| !l.starts_with("%%")) {
        assert!(
            !line.contains(';') && !line.contains('#'),
            "Mermaid would choke on: {line}"
        );
    }
}

#[test]
fn mermaid_marks_messages_to_a_crashed_node_as_lost() {
    let out = coordlab(&[
        "run",
        "lost-update",
        "--set",
        "lock=row-lock",
        "--format",
        "mermaid",
        "--actions",
        "8@crash:0",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Note over n0: database crashes"), "{text}");
    assert!(text.contains("-xn0: lost: "), "{text}");
}

#[test]
fn list_shows_lost_update() {
    let out = coordlab(&["list"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("lost-update"))
        .expect("lost-update is listed");
    assert!(
        line.contains("1. Locks and lost updates") && line.contains("Lost update"),
        "{line}"
    );
}

#[test]
fn describe_lists_the_lock_parameter_and_its_values() {
    let out = coordlab(&["describe", "lost-update"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("lock — Protection"), "{text}");
    for value in ["none", "row-lock", "conditional-update"] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(value)),
            "{value} missing: {text}"
        );
    }
    assert!(text.contains("lock=row-lock: balance=40"), "{text}");
}

#[test]
fn check_row_lock_meets_the_expectation_on_every_seed() {
    let out = coordlab(&[
        "check",
        "lost-update",
        "--seeds",
        "0..200",
        "--set",
        "lock=row-lock",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("200/200 seeds reached the expected outcome"),
        "{text}"
    );
}

#[test]
fn check_inclusive_range_counts_both_ends() {
    let out = coordlab(&["check", "lost-update", "--seeds", "10..=19"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("10/10 seeds"), "{}", stdout(&out));
}

#[test]
fn check_with_an_early_crash_fails_and_names_a_seed() {
    let out = coordlab(&[
        "check",
        "lost-update",
        "--seeds",
        "0..50",
        "--set",
        "lock=row-lock",
        "--actions",
        "5@crash:2",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("/50 seeds reached the expected outcome"), "{text}");
    let seed = text
        .lines()
        .find_map(|l| l.strip_prefix("first seed that did not: "))
        .unwrap_or_else(|| panic!("a seed is named: {text}"));
    assert!(seed.parse::<u64>().is_ok_and(|s| s < 50), "{seed}");
    assert!(text.contains("every-debit-finishes"), "{text}");
    assert!(text.contains("declared for the parameters alone"), "{text}");
}

/// A run that misses its expectation only because of the user's faults says the expectation
/// did not foresee them; a run with faults that still meets it, and a miss-free run, do not.
#[test]
fn a_miss_under_fault_actions_says_the_expectation_is_for_the_parameters_alone() {
    let caveat = "declared for the parameters alone";
    let run = |actions: &str| {
        let out = coordlab(&[
            "run",
            "lost-update",
            "--set",
            "lock=row-lock",
            "--actions",
            actions,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let crashed = run("5@crash:2");
    assert!(crashed.contains(": NOT met"), "{crashed}");
    assert!(crashed.contains(caveat), "{crashed}");
    let restarted = run("5@crash:2;6@restart:2");
    assert!(restarted.contains(": met"), "{restarted}");
    assert!(!restarted.contains(caveat), "{restarted}");
}

#[test]
fn help_prints_usage_and_succeeds() {
    for args in [&["--help"][..], &["help"], &["run", "--help"]] {
        let out = coordlab(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(stdout(&out).contains("USAGE"), "{args:?}");
    }
}

#[test]
fn unknown_scenario_is_a_usage_error_listing_scenarios() {
    let err = usage_error(&["run", "no-such-thing"]);
    assert!(
        err.contains("no-such-thing") && err.contains("lost-update"),
        "{err}"
    );
}

#[test]
fn unknown_set_key_is_a_usage_error_listing_parameters() {
    let err = usage_error(&["run", "lost-update", "--set", "colour=blue"]);
    assert!(err.contains("colour") && err.contains("lock"), "{err}");
}

#[test]
fn bad_lock_value_is_a_usage_error_listing_the_values() {
    let err = usage_error(&["run", "lost-update", "--set", "lock=mutex"]);
    assert!(err.contains("none, row-lock, conditional-update"), "{err}");
}

#[test]
fn bad_seed_is_a_usage_error() {
    let err = usage_error(&["run", "lost-update", "--seed", "twelve"]);
    assert!(err.contains("--seed") && err.contains("twelve"), "{err}");
}

#[test]
fn bad_format_is_a_usage_error_listing_formats() {
    let err = usage_error(&["run", "lost-update", "--format", "xml"]);
    assert!(err.contains("text, jsonl, mermaid, svg"), "{err}");
}

#[test]
fn bad_seeds_range_is_a_usage_error() {
    for range in ["0-200", "5..5", "9..3", "0..2000000", "a..b"] {
        let err = usage_error(&["check", "lost-update", "--seeds", range]);
        assert!(err.contains("--seeds") && err.contains("A..B"), "{range}: {err}");
    }
}

#[test]
fn bad_actions_are_a_usage_error() {
    let err = usage_error(&["run", "lost-update", "--actions", "5@explode:1"]);
    assert!(err.contains("explode") && err.contains("crash"), "{err}");
    let err = usage_error(&["run", "lost-update", "--actions", "5@crash:9"]);
    assert!(err.contains("no node 9") && err.contains("worker-2"), "{err}");
    let err = usage_error(&[
        "check",
        "lost-update",
        "--seeds",
        "0..3",
        "--actions",
        "soon@crash:1",
    ]);
    assert!(err.contains("step number"), "{err}");
}

#[test]
fn unknown_command_is_a_usage_error_listing_commands() {
    let err = usage_error(&["frobnicate"]);
    assert!(
        err.contains("frobnicate") && err.contains("list, bundles, describe, run, check"),
        "{err}"
    );
}

#[test]
fn missing_scenario_id_is_a_usage_error() {
    for command in ["run", "describe", "check"] {
        let err = usage_error(&[command]);
        assert!(
            err.contains("scenario id") && err.contains("lost-update"),
            "{command}: {err}"
        );
    }
}

#[test]
fn unknown_option_is_a_usage_error_listing_options() {
    let err = usage_error(&["run", "lost-update", "--seeds", "0..3"]);
    assert!(err.contains("--seeds") && err.contains("--format"), "{err}");
}

#[test]
fn sweep_finds_the_stale_write_without_fencing_and_exits_1() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_coordlab"))
        .args([
            "sweep",
            "zombie-worker",
            "--seeds",
            "0..300",
            "--set",
            "fencing=none",
            "--property",
            "fence-monotonic",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("fence-monotonic: violated in"), "{stdout}");
    assert!(
        stdout.contains("reproduce: coordlab run zombie-worker --seed"),
        "{stdout}"
    );
}

#[test]
fn sweep_with_the_write_predicate_finds_no_stale_write_and_exits_0() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_coordlab"))
        .args([
            "sweep",
            "zombie-worker",
            "--seeds",
            "0..300",
            "--set",
            "fencing=write-predicate",
            "--property",
            "fence-monotonic",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("fence-monotonic: never violated"));
}

#[test]
fn svg_draws_a_lane_per_participant_and_labels_the_pause() {
    let out = coordlab(&["run", "zombie-worker", "--format", "svg"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let svg = stdout(&out);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    for lane in ["lease-store", "worker-A", "worker-B", "ledger"] {
        assert!(svg.contains(&format!(">{lane}</text>")), "no lane for {lane}");
    }
    assert!(svg.contains(">paused 36 s</text>"));
    // Self-contained: nothing fetched, no stylesheet link.
    assert!(!svg.contains("href=\"http"), "no outside references");
}

#[test]
fn svg_at_a_step_is_the_players_followed_picture() {
    let at = |step: &str, axis: &str| {
        let out = coordlab(&[
            "run",
            "zombie-worker",
            "--format",
            "svg",
            "--step",
            step,
            "--axis",
            axis,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let time = at("40", "time");
    assert!(time.contains("width=\"960\""), "the followed picture is 960 wide");
    assert!(time.contains("step 40 ·"), "the cursor is at step 40");
    assert_ne!(time, at("40", "order"), "the axis changes the picture");
    let past = coordlab(&["run", "zombie-worker", "--format", "svg", "--step", "5000"]);
    assert_eq!(past.status.code(), Some(2));
    assert!(
        stderr(&past).contains("past the end of the run"),
        "{}",
        stderr(&past)
    );
    let bad = coordlab(&["run", "zombie-worker", "--format", "svg", "--axis", "log"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("choose time or order"));
    let stray = coordlab(&["run", "zombie-worker", "--step", "4"]);
    assert_eq!(stray.status.code(), Some(2));
    assert!(stderr(&stray).contains("goes with --format svg"));
}

#[test]
fn mermaid_notes_where_a_fault_span_begins_and_ends() {
    let out = coordlab(&["run", "zombie-worker", "--format", "mermaid"]);
    let text = stdout(&out);
    let begins = text
        .lines()
        .position(|l| l.contains("Note over n1: paused 36 s begins, lasts until 41 s"))
        .expect("a note where the pause begins");
    let ends = text
        .lines()
        .position(|l| l.contains("Note over n1: paused 36 s ends"))
        .expect("a note where it ends");
    assert!(begins < ends);
}
