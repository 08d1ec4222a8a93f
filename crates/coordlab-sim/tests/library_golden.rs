//! Golden runs of the whole library (testing layers 3 and 5).
//!
//! - `tests/golden/library-fingerprints.txt`: one line per run, `<request line> <hex>`, where
//!   the request line is [`RunRequest::to_line`]: every scenario with its defaults, every other
//!   option of every choice parameter, and one run per scenario with a crash, a restart and a
//!   pause scripted. The wasm32 test
//!   (`crates/coordlab-wasm-check/tests/wasm_fingerprint.rs`) reads the same file, so every
//!   scenario and variant is proven identical natively and on wasm32.
//! - `tests/golden/<scenario>-<variant>-seed1.txt`: the readable text of a few key runs, so a
//!   change to a story shows up as a diff in review.
//!
//! Regenerate after an intended change with
//! `COORDLAB_BLESS=1 cargo test -p coordlab-sim --test library_golden` and review the diff.

use coordlab_sim::kernel::faults::{parse_script, FaultKind};
use coordlab_sim::scenarios::{catalog, ParamKind};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
}

fn blessing() -> bool {
    std::env::var("COORDLAB_BLESS").is_ok_and(|v| v == "1")
}

fn request(scenario: &str, params: &[(&str, &str)], seed: u64, script: &str) -> RunRequest {
    RunRequest {
        scenario: scenario.to_string(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        seed,
        actions: parse_script(script).expect("valid script"),
    }
}

fn full(request: &RunRequest) -> Trace {
    run(request, Limits::default(), Recording::Full)
        .unwrap_or_else(|e| panic!("`{}` does not run: {e}", request.to_line()))
}

/// A crash and restart of the first node that allows both, and a pause of the next node that
/// allows one: the fault paths of every participant family.
fn fault_script(trace: &Trace) -> String {
    let mut script = Vec::new();
    let crashable = trace
        .nodes
        .iter()
        .rev()
        .find(|n| n.faults.contains(&FaultKind::Crash) && n.faults.contains(&FaultKind::Restart));
    if let Some(n) = crashable {
        script.push(format!("5@crash:{}", n.id.0));
        script.push(format!("15@restart:{}", n.id.0));
    }
    let pausable = trace
        .nodes
        .iter()
        .find(|n| n.faults.contains(&FaultKind::Pause) && Some(n.id) != crashable.map(|c| c.id));
    if let Some(n) = pausable {
        script.push(format!("8@pause:{}:500", n.id.0));
    }
    script.join(";")
}

/// Every run `library-fingerprints.txt` covers, in file order.
fn cases() -> Vec<RunRequest> {
    let mut out = Vec::new();
    for info in catalog() {
        let defaults = request(info.id, &[], 1, "");
        let default_trace = run(&defaults, Limits::default(), Recording::Lines).expect("defaults run");
        out.push(defaults);
        for p in &info.params {
            if let ParamKind::Choice { options } = &p.kind {
                for o in options.iter().filter(|o| o.value != p.default) {
                    out.push(request(info.id, &[(p.key, o.value)], 1, ""));
                }
            }
        }
        out.push(request(info.id, &[], 2, &fault_script(&default_trace)));
    }
    out
}

fn fingerprint_line(r: &RunRequest) -> String {
    format!("{} {:016x}", r.to_line(), full(r).fingerprint())
}

fn compare_or_bless(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if blessing() {
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        eprintln!("blessed {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; bless with COORDLAB_BLESS=1", path.display()));
    if expected == actual {
        return;
    }
    let first = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(expected.lines().count().min(actual.lines().count()));
    panic!(
        "{} differs from this run at line {}:\n  expected: {:?}\n  actual:   {:?}\n\
         if the change is intended, rerun with COORDLAB_BLESS=1 and review `git diff`",
        path.display(),
        first + 1,
        expected.lines().nth(first).unwrap_or("<end>"),
        actual.lines().nth(first).unwrap_or("<end>"),
    );
}

#[test]
fn every_scenario_and_variant_keeps_its_fingerprint() {
    let mut text = String::new();
    for r in cases() {
        text.push_str(&fingerprint_line(&r));
        text.push('\n');
    }
    compare_or_bless("library-fingerprints.txt", &text);
}

#[test]
fn the_fingerprint_file_covers_every_scenario_and_choice() {
    if blessing() {
        return;
    }
    let text = std::fs::read_to_string(golden_dir().join("library-fingerprints.txt")).expect("golden file");
    let requests: Vec<RunRequest> = text
        .lines()
        .map(|l| {
            let (req, _) = l.rsplit_once(' ').expect("request and fingerprint");
            RunRequest::parse_line(req).expect("request line parses")
        })
        .collect();
    for info in catalog() {
        assert!(
            requests
                .iter()
                .any(|r| r.scenario == info.id && r.params.is_empty()),
            "{} has no default run in the file",
            info.id
        );
        for p in &info.params {
            if let ParamKind::Choice { options } = &p.kind {
                for o in options {
                    let covered = requests.iter().any(|r| {
                        r.scenario == info.id
                            && r.params.get(p.key).map_or(o.value == p.default, |v| v == o.value)
                    });
                    assert!(covered, "{} {}={} is not in the file", info.id, p.key, o.value);
                }
            }
        }
    }
}

/// The readable text of a run: every entry's line with its narration and violations.
fn render(trace: &Trace) -> String {
    let mut out = String::new();
    for e in &trace.entries {
        out.push_str(&e.line());
        out.push('\n');
        for n in &e.notes {
            out.push_str("  | ");
            out.push_str(n);
            out.push('\n');
        }
        for v in &e.violations {
            out.push_str("  ! ");
            out.push_str(v);
            out.push('\n');
        }
    }
    out.push_str(&format!(
        "outcome {}\n",
        serde_json::to_string(&trace.outcome).expect("outcome serialises")
    ));
    out
}

fn golden_text(scenario: &str, params: &[(&str, &str)]) {
    let variant = params.iter().map(|(_, v)| *v).collect::<Vec<_>>().join("-");
    let variant = if variant.is_empty() {
        "default".to_string()
    } else {
        variant
    };
    let trace = full(&request(scenario, params, 1, ""));
    compare_or_bless(&format!("{scenario}-{variant}-seed1.txt"), &render(&trace));
}

#[test]
fn golden_zombie_worker_write_predicate() {
    golden_text("zombie-worker", &[("fencing", "write-predicate")]);
}

#[test]
fn golden_lease_lifecycle() {
    golden_text("lease-lifecycle", &[]);
}

#[test]
fn golden_redis_failover() {
    golden_text("redis-failover", &[]);
}

#[test]
fn golden_raft_election() {
    golden_text("raft-election", &[]);
}

#[test]
fn golden_zookeeper_lock() {
    golden_text("zookeeper-lock", &[]);
}

#[test]
fn golden_raft_figure_8() {
    golden_text("raft-figure-8", &[]);
}

#[test]
fn golden_skip_locked_queue() {
    golden_text("skip-locked-queue", &[]);
}

#[test]
fn golden_deadlock() {
    golden_text("deadlock", &[]);
}

#[test]
fn request_lines_round_trip() {
    let r = request(
        "zombie-worker",
        &[("fencing", "none"), ("ttl_ms", "30000")],
        7,
        "12@pause:1:400;20@crash:2",
    );
    assert_eq!(
        r.to_line(),
        "zombie-worker fencing=none,ttl_ms=30000 7 12@pause:1:400;20@crash:2"
    );
    assert_eq!(RunRequest::parse_line(&r.to_line()), Ok(r));
    assert!(RunRequest::parse_line("zombie-worker - x -")
        .unwrap_err()
        .contains("seed"));
    assert!(RunRequest::parse_line("only three fields")
        .unwrap_err()
        .contains("four fields"));
}
