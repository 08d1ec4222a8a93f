//! `coordlab search`: the bounded search for the shortest failure, end to end.

use std::process::{Command, Output};

fn coordlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coordlab"))
        .args(args)
        .output()
        .expect("the coordlab binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

#[test]
fn an_unfenced_zombie_breaks_with_one_pause_and_the_chain_says_why() {
    let out = coordlab(&[
        "search",
        "zombie-worker",
        "--set",
        "fencing=none",
        "--faults",
        "1",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a broken property exits 1\n{stdout}{}",
        text(&out.stderr)
    );
    // The story's own 36 s pause is off: the search found a pause of its own.
    assert!(stdout.contains("its own fault is off (pause_ms=0)"), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("no-double-debit: broken by 1 fault: "))
        .unwrap_or_else(|| panic!("no one-fault witness for no-double-debit:\n{stdout}"));
    assert!(line.contains("@pause:1:"), "worker-A (node 1) pauses: {line}");
    // The chain: the pause, A's grant lost by the record, B's grant, then the violating write.
    let why = stdout
        .split("why no-double-debit broke:")
        .nth(1)
        .expect("a why section");
    let steps: Vec<&str> = why
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("    step"))
        .collect();
    assert!(
        steps.first().is_some_and(|l| l.contains("worker-A freezes")),
        "{why}"
    );
    assert!(
        steps
            .iter()
            .any(|l| l.contains("the record no longer names worker-A")),
        "{why}"
    );
    assert!(
        steps.iter().any(|l| l.contains("the record now names worker-B")),
        "{why}"
    );
    assert!(steps.last().is_some_and(|l| l.contains("-> ledger")), "{why}");
    // The reproduce line runs the witness and shows the same violation.
    let cmd = stdout
        .split("why no-double-debit broke:")
        .next()
        .and_then(|s| {
            s.lines()
                .rev()
                .find(|l| l.trim_start().starts_with("reproduce: "))
        })
        .expect("a reproduce line");
    let script = cmd
        .split("--actions ")
        .nth(1)
        .expect("the witness's actions")
        .trim();
    let run = coordlab(&[
        "run",
        "zombie-worker",
        "--set",
        "fencing=none",
        "--set",
        "pause_ms=0",
        "--actions",
        script,
    ]);
    assert!(
        text(&run.stdout).contains("no-double-debit  violated"),
        "{}",
        text(&run.stdout)
    );
}

#[test]
fn fencing_on_takeover_gets_the_bounded_claim() {
    let out = coordlab(&[
        "search",
        "zombie-worker",
        "--set",
        "fencing=fence-on-takeover",
        "--faults",
        "1",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    for property in ["fence-monotonic", "tokens-increase", "no-double-debit"] {
        let claim = format!(
            "{property}: no schedule of ≤ 1 fault (pauses of 5000, 9000, 12000, 15000, 27000, 36000 ms and crashes, at any step) breaks it — "
        );
        assert!(stdout.contains(&claim), "missing `{claim}` in\n{stdout}");
    }
    assert!(!stdout.contains("broken by"), "{stdout}");
}

/// Shards `0/N … N-1/N`, merged in a shuffled order, print what one run prints.
fn shards_merge_to_the_single_run(args: &[&str], n: u32) {
    let single = coordlab(args);
    let dir = std::env::temp_dir().join(format!("coordlab-search-{}-{}", std::process::id(), args[1]));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let mut files = Vec::new();
    for i in (0..n).rev() {
        let shard = format!("{i}/{n}");
        let mut with_shard = args.to_vec();
        with_shard.extend(["--shard", &shard]);
        let out = coordlab(&with_shard);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out.stderr));
        let file = dir.join(format!("part-{i}.json"));
        std::fs::write(&file, &out.stdout).expect("write a part");
        files.push(file.to_string_lossy().into_owned());
    }
    let mut merge = vec!["search", "--merge"];
    merge.extend(files.iter().map(String::as_str));
    let merged = coordlab(&merge);
    assert_eq!(
        text(&merged.stdout),
        text(&single.stdout),
        "merged shards differ from one run"
    );
    assert_eq!(merged.status.code(), single.status.code());
    // A part missing, or given twice, is refused by name.
    let short = coordlab(&merge[..merge.len() - 1]);
    assert_eq!(short.status.code(), Some(2));
    assert!(
        text(&short.stderr).contains("missing shards: "),
        "{}",
        text(&short.stderr)
    );
    let mut twice = merge.clone();
    twice.push(merge[2]);
    assert!(text(&coordlab(&twice).stderr).contains("is given twice"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shards_merged_equal_a_single_run_for_zombie_worker() {
    shards_merge_to_the_single_run(
        &[
            "search",
            "zombie-worker",
            "--set",
            "fencing=none",
            "--faults",
            "1",
        ],
        3,
    );
}

#[test]
fn shards_merged_equal_a_single_run_for_lease_lifecycle() {
    shards_merge_to_the_single_run(
        &["search", "lease-lifecycle", "--faults", "1", "--kinds", "crash"],
        4,
    );
}

#[test]
fn parts_of_different_searches_are_not_merged() {
    let dir = std::env::temp_dir().join(format!("coordlab-search-mixed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let a = coordlab(&[
        "search",
        "zombie-worker",
        "--faults",
        "1",
        "--kinds",
        "crash",
        "--shard",
        "0/2",
    ]);
    let b = coordlab(&[
        "search",
        "zombie-worker",
        "--faults",
        "1",
        "--kinds",
        "pause",
        "--shard",
        "1/2",
    ]);
    let (fa, fb) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&fa, &a.stdout).expect("write");
    std::fs::write(&fb, &b.stdout).expect("write");
    let out = coordlab(&["search", "--merge", &fa.to_string_lossy(), &fb.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("a part of a different search"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_search_input_exits_2_with_a_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["search", "zombie-worker"], "`search` needs --faults K"),
        (&["search", "zombie-worker", "--faults", "9"], "bad --faults `9`"),
        (
            &["search", "zombie-worker", "--faults", "1", "--kinds", "flood"],
            "`flood` is not a fault kind",
        ),
        (
            &["search", "zombie-worker", "--faults", "1", "--shard", "3/3"],
            "bad --shard `3/3`",
        ),
        (
            &["search", "zombie-worker", "--faults", "1", "--pause-ms", "5s"],
            "bad --pause-ms",
        ),
        (
            &[
                "search",
                "zombie-worker",
                "--faults",
                "1",
                "--property",
                "liveness",
            ],
            "has no safety property `liveness`",
        ),
        (&["search", "no-such", "--faults", "1"], "no-such"),
        (&["search", "--merge"], "needs the shard reports"),
        (&["search", "--merge", "/no/such/file.json"], "/no/such/file.json"),
    ];
    for (args, message) in cases {
        let out = coordlab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stdout));
        assert!(
            text(&out.stderr).contains(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn the_exported_regression_test_is_the_committed_one() {
    let out = coordlab(&[
        "search",
        "zombie-worker",
        "--set",
        "fencing=none",
        "--faults",
        "1",
        "--property",
        "no-double-debit",
        "--export-test",
    ]);
    let committed = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../coordlab-sim/tests/exported/zombie_worker.rs"),
    )
    .expect("the committed export");
    assert_eq!(
        text(&out.stdout),
        committed,
        "the exporter's output changed: re-export it"
    );
    assert!(committed.contains("#[test]\nfn zombie_worker_no_double_debit_breaks()"));
    // Nothing to export where nothing breaks.
    let none = coordlab(&[
        "search",
        "zombie-worker",
        "--set",
        "fencing=fence-on-takeover",
        "--faults",
        "1",
        "--export-test",
    ]);
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("no witness to export"));
}
