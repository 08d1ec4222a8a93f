//! Golden traces (testing layer 3): the exact text a run produces, checked into the repo.
//!
//! - `tests/golden/lost-update-<lock>-seed1.txt`: every entry's one-line form
//!   (`TraceEntry::line()`), followed by its narration notes indented with `  | ` and its new
//!   property violations indented with `  ! `.
//! - `tests/golden/fingerprints.txt`: one line per run, exactly
//!   `<lock> <seed> <actions or -> <fingerprint as 16 lowercase hex digits>`, no header. A
//!   wasm32 test `include_str!`s this same file to prove native and wasm runs are identical,
//!   so keep the format stable.
//!
//! When a change to the simulator legitimately changes a trace, regenerate the files with
//!
//! ```text
//! COORDLAB_BLESS=1 cargo test -p coordlab-sim --test golden
//! ```
//!
//! and review the diff (`git diff crates/coordlab-sim/tests/golden`) before committing it.
//! Without `COORDLAB_BLESS=1` the test only compares and never writes.

use coordlab_sim::kernel::faults::{parse_script, script_code};
use coordlab_sim::scenarios::Params;
use coordlab_sim::{run, Action, Limits, Recording, RunRequest, Trace};
use std::path::PathBuf;

const LOCKS: [&str; 3] = ["none", "row-lock", "conditional-update"];
const FINGERPRINT_SEEDS: [u64; 3] = [1, 2, 3];
/// Runs of `fingerprints.txt` with an action script: the same script for every lock at seed 1.
const SCRIPTED: &str = "6@pause:1:30";

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
}

fn blessing() -> bool {
    std::env::var("COORDLAB_BLESS").is_ok_and(|v| v == "1")
}

fn request(lock: &str, seed: u64, actions: Vec<Action>) -> RunRequest {
    let mut params = Params::new();
    params.insert("lock".to_string(), lock.to_string());
    RunRequest {
        scenario: "lost-update".to_string(),
        params,
        seed,
        actions,
    }
}

fn full(lock: &str, seed: u64, actions: Vec<Action>) -> Trace {
    run(&request(lock, seed, actions), Limits::default(), Recording::Full).expect("valid request")
}

/// The one-line text form of every entry plus its narration.
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
    out
}

/// Compares `actual` with the golden file `name`, or rewrites it when blessing.
fn check_golden(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if blessing() {
        std::fs::create_dir_all(golden_dir()).expect("create tests/golden");
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        eprintln!("blessed {}", path.display());
        return;
    }
    let expected = match std::fs::read_to_string(&path) {
        Ok(text) => text.replace("\r\n", "\n"),
        Err(e) => panic!(
            "cannot read golden file {}: {e}\nrun with COORDLAB_BLESS=1 to create it",
            path.display()
        ),
    };
    if expected == actual {
        return;
    }
    let exp: Vec<&str> = expected.lines().collect();
    let act: Vec<&str> = actual.lines().collect();
    let first = (0..exp.len().max(act.len())).find(|&i| exp.get(i) != act.get(i));
    let hint = match first {
        Some(i) => format!(
            "first difference at line {}:\n  expected: {}\n  actual:   {}",
            i + 1,
            exp.get(i)
                .map_or("<end of file>".to_string(), |l| format!("{l:?}")),
            act.get(i)
                .map_or("<end of output>".to_string(), |l| format!("{l:?}")),
        ),
        None => "the files differ only in trailing newlines".to_string(),
    };
    panic!(
        "{} does not match this run ({} expected lines, {} actual lines)\n{hint}\n\
         if the change is intended, rerun with COORDLAB_BLESS=1 and review `git diff`",
        path.display(),
        exp.len(),
        act.len()
    );
}

fn golden_trace(lock: &str) {
    let trace = full(lock, 1, vec![]);
    assert!(!trace.entries.is_empty(), "{lock}: empty trace");
    check_golden(&format!("lost-update-{lock}-seed1.txt"), &render(&trace));
}

#[test]
fn golden_lost_update_none_seed1() {
    golden_trace("none");
}

#[test]
fn golden_lost_update_row_lock_seed1() {
    golden_trace("row-lock");
}

#[test]
fn golden_lost_update_conditional_update_seed1() {
    golden_trace("conditional-update");
}

/// The runs `fingerprints.txt` covers, in file order.
fn fingerprint_cases() -> Vec<(&'static str, u64, Vec<Action>)> {
    let mut cases = Vec::new();
    for lock in LOCKS {
        for seed in FINGERPRINT_SEEDS {
            cases.push((lock, seed, Vec::new()));
        }
    }
    let scripted = parse_script(SCRIPTED).expect("valid script");
    for lock in LOCKS {
        cases.push((lock, 1, scripted.clone()));
    }
    cases
}

fn fingerprint_line(lock: &str, seed: u64, actions: &[Action]) -> String {
    let code = script_code(actions);
    let code = if code.is_empty() { "-".to_string() } else { code };
    let fp = full(lock, seed, actions.to_vec()).fingerprint();
    format!("{lock} {seed} {code} {fp:016x}")
}

#[test]
fn golden_fingerprints() {
    let mut text = String::new();
    for (lock, seed, actions) in fingerprint_cases() {
        text.push_str(&fingerprint_line(lock, seed, &actions));
        text.push('\n');
    }
    check_golden("fingerprints.txt", &text);
}

/// Reads `fingerprints.txt` the way the wasm32 test does and recomputes every line from its
/// own fields, so the file stays self-describing.
#[test]
fn fingerprints_file_is_self_describing() {
    if blessing() {
        return; // the file may be being rewritten concurrently
    }
    let path = golden_dir().join("fingerprints.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}\nrun with COORDLAB_BLESS=1 to create it",
            path.display()
        )
    });
    let mut count = 0;
    for (n, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(
            fields.len(),
            4,
            "line {}: expected `lock seed actions_or_dash hex`, got {line:?}",
            n + 1
        );
        let seed: u64 = fields[1]
            .parse()
            .unwrap_or_else(|_| panic!("line {}: bad seed {:?}", n + 1, fields[1]));
        let script = if fields[2] == "-" { "" } else { fields[2] };
        let actions = parse_script(script).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        assert!(
            fields[3].len() == 16
                && fields[3]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "line {}: fingerprint must be 16 lowercase hex digits, got {:?}",
            n + 1,
            fields[3]
        );
        let want = u64::from_str_radix(fields[3], 16).unwrap();
        let got = full(fields[0], seed, actions).fingerprint();
        assert_eq!(got, want, "line {}: {line:?} recomputes to {got:016x}", n + 1);
        count += 1;
    }
    assert_eq!(
        count,
        fingerprint_cases().len(),
        "fingerprints.txt has the wrong number of lines"
    );
}
