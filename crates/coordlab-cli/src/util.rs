//! Small text helpers shared by the output formats.

use coordlab_sim::kernel::faults::script_code;
use coordlab_sim::scenarios::{Expectation, Params};
use coordlab_sim::{Action, Trace};
use std::collections::BTreeMap;

/// `key=value` pairs separated by spaces, `(none)` when empty.
pub fn params_code(params: &Params) -> String {
    if params.is_empty() {
        return "(none)".to_string();
    }
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A JSON value for humans: strings without quotes.
pub fn value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The outcome as `key=value` pairs.
pub fn outcome_code(outcome: &BTreeMap<String, serde_json::Value>) -> String {
    outcome
        .iter()
        .map(|(k, v)| format!("{k}={}", value_text(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What an expectation declares, in one line.
pub fn expectation_text(e: &Expectation) -> String {
    let outcome = e.outcome.iter().map(|(k, v)| format!("{k}={}", value_text(v)));
    let verdicts = e
        .verdicts
        .iter()
        .map(|(name, v)| format!("{name} {}", v.as_str()));
    outcome.chain(verdicts).collect::<Vec<_>>().join(", ")
}

/// Said under a missed expectation when the run had fault actions: the expectation is
/// declared for the parameters alone, so a user's crash or pause may rightly change the
/// outcome, and the miss is then news about the faults, not about the scenario.
pub const ACTIONS_CAVEAT: &str =
    "the expectation is declared for the parameters alone: the actions may change the story";

/// Quotes an argument for a POSIX shell when it needs it.
pub fn shell_quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_=:.,/@+".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// The command line that reproduces one run.
pub fn reproduce(scenario: &str, seed: u64, params: &Params, actions: &[Action]) -> String {
    let mut cmd = format!("coordlab run {} --seed {seed}", shell_quote(scenario));
    for (k, v) in params {
        cmd.push_str(&format!(" --set {}", shell_quote(&format!("{k}={v}"))));
    }
    if !actions.is_empty() {
        cmd.push_str(&format!(" --actions {}", shell_quote(&script_code(actions))));
    }
    cmd
}

/// The command line that reproduces a trace.
pub fn reproduce_trace(trace: &Trace) -> String {
    reproduce(&trace.scenario, trace.seed, &trace.params, &trace.actions)
}
