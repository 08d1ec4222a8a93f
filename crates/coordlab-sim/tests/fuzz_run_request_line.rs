//! Fuzzing `RunRequest::parse_line`, the one-line form of a run (`zombie-worker
//! fencing=none,ttl_ms=30000 1 12@pause:1:400`) that golden files and the sweep's
//! reproduction commands use: it never panics, a rejection quotes what was wrong, and an
//! accepted line's `to_line` reads back as the same request.
//!
//! `cargo test` runs 20,000 inputs; `scripts/fuzz.sh` a million (`COORDLAB_FUZZ_INPUTS`).

use coordlab_fuzz::{grammar, messages, mutate, Campaign, Choices, Verdict};
use coordlab_sim::RunRequest;

/// Every golden request line (each line ends with its fingerprint): the mutation corpus.
const GOLDEN: &str = include_str!("golden/library-fingerprints.txt");

/// Pieces a mutation may insert.
const TOKENS: &[&str] = &[
    " ",
    "-",
    ",",
    "=",
    "@",
    ";",
    ":",
    "18446744073709551616",
    "lock=row-lock",
];

fn corpus() -> Vec<&'static str> {
    GOLDEN
        .lines()
        .filter_map(|l| l.rsplit_once(' ').map(|(request, _)| request))
        .collect()
}

fn line(c: &mut Choices) -> String {
    let scenario = if c.chance(1, 10) {
        grammar::noise(c)
    } else {
        c.pick(&["lost-update", "zombie-worker", "raft-chaos", "redlock"])
            .to_string()
    };
    let params = match c.below(4) {
        0 => "-".to_string(),
        1 => grammar::noise(c),
        _ => {
            let pairs: Vec<String> = (0..1 + c.below(3))
                .map(|_| {
                    format!(
                        "{}={}",
                        c.pick(&["lock", "ttl_ms", "", "fencing"]),
                        grammar::number(c)
                    )
                })
                .collect();
            pairs.join(",")
        }
    };
    let actions = if c.chance(1, 3) {
        "-".to_string()
    } else {
        grammar::script(c)
    };
    let mut fields = vec![scenario, params, grammar::number(c), actions];
    if c.chance(1, 20) {
        fields.truncate(c.index(4));
    }
    fields.join(" ")
}

fn make(c: &mut Choices, corpus: &[&str]) -> String {
    match c.below(10) {
        0..=4 => line(c),
        5..=8 => {
            let base = c.pick(corpus).to_string();
            let other = *c.pick(corpus);
            mutate(c, &base, other, TOKENS)
        }
        _ => grammar::noise(c),
    }
}

fn check(text: &str) -> Verdict {
    match RunRequest::parse_line(text) {
        Err(message) => {
            let mut typed: Vec<&str> = text.split([' ', ',', ';']).collect();
            typed.push(text);
            match messages::check_names_input(&message, &typed) {
                Ok(()) => Verdict::Rejected,
                Err(what) => Verdict::Broken(what),
            }
        }
        Ok(request) => {
            let line = request.to_line();
            match RunRequest::parse_line(&line) {
                Ok(again) if again == request => Verdict::Accepted,
                again => Verdict::Broken(format!("its line {line:?} reads back as {again:?}")),
            }
        }
    }
}

#[test]
fn run_request_line() {
    let corpus = corpus();
    assert!(corpus.len() > 20, "the golden requests are the corpus");
    Campaign::from_env(
        "run-request-line",
        20_000,
        "cargo test -p coordlab-sim --test fuzz_run_request_line",
    )
    .run(|c| make(c, &corpus), check)
    .assert_clean();
}

/// What this harness found: empty fields and parameters were quoted as ``.
#[test]
fn empty_fields_and_parameters_are_named() {
    let err = RunRequest::parse_line("raft-chaos  25 -").unwrap_err();
    assert!(
        err.contains("parameters field is empty in `raft-chaos  25 -`"),
        "{err}"
    );
    let err = RunRequest::parse_line("redlock - 1 ").unwrap_err();
    assert!(err.contains("actions field is empty"), "{err}");
    let err = RunRequest::parse_line("duplicate-job ,lock=lease 1 -").unwrap_err();
    assert!(
        err.contains("an empty parameter in `duplicate-job ,lock=lease 1 -`"),
        "{err}"
    );
}
