//! `--format text`: one line per event with its narration, then a summary block.

use crate::util::{expectation_text, outcome_code, params_code, reproduce_trace, ACTIONS_CAVEAT};
use coordlab_sim::scenarios::Expectation;
use coordlab_sim::trace::Trace;
use std::fmt::Write;

pub fn render(trace: &Trace, expectation: &Expectation, mismatches: &[String]) -> String {
    let mut out = String::new();
    for e in &trace.entries {
        let _ = writeln!(out, "{}", e.line());
        for (n, b) in trace
            .beats
            .iter()
            .enumerate()
            .filter(|(_, b)| b.seq == Some(e.seq))
        {
            let _ = writeln!(out, "  * beat {}: {} — {}", n + 1, b.title, b.text);
        }
        for note in &e.notes {
            let _ = writeln!(out, "  | {note}");
        }
        for m in &e.lost {
            let _ = writeln!(
                out,
                "  x lost: {} -> {}: {}",
                trace.node_name(m.from),
                trace.node_name(m.to),
                m.label
            );
        }
        for v in &e.violations {
            let _ = writeln!(out, "  ! violated: {v}");
        }
    }
    out.push_str(&summary(trace, expectation, mismatches));
    out
}

fn summary(trace: &Trace, expectation: &Expectation, mismatches: &[String]) -> String {
    let mut out = String::from("\n== summary\n");
    let _ = writeln!(out, "scenario    {}", trace.scenario);
    let _ = writeln!(out, "seed        {}", trace.seed);
    let _ = writeln!(out, "params      {}", params_code(&trace.params));
    if !trace.actions.is_empty() {
        let actions: Vec<String> = trace.actions.iter().map(|a| a.to_code()).collect();
        let _ = writeln!(out, "actions     {}", actions.join(";"));
    }
    for a in &trace.unapplied_actions {
        let _ = writeln!(
            out,
            "never ran   {} (the run ended after {} events)",
            a.to_code(),
            trace.event_count
        );
    }
    let _ = writeln!(
        out,
        "stopped     {} after {} events",
        stop_text(trace),
        trace.event_count
    );
    let _ = writeln!(out, "outcome     {}", outcome_code(&trace.outcome));
    out.push_str("properties\n");
    let width = trace.properties.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &trace.properties {
        let at = p
            .first_violation_seq
            .map(|s| format!(" at step {s}"))
            .unwrap_or_default();
        let _ = writeln!(out, "  {:<width$}  {}{at}", p.name, p.verdict.as_str());
    }
    let declared = expectation_text(expectation);
    if mismatches.is_empty() {
        let _ = writeln!(out, "expected    {declared}: met");
    } else {
        let _ = writeln!(out, "expected    {declared}: NOT met");
        for m in mismatches {
            let _ = writeln!(out, "              - {m}");
        }
        if !trace.actions.is_empty() {
            let _ = writeln!(out, "            ({ACTIONS_CAVEAT})");
        }
    }
    let _ = writeln!(out, "reproduce   {}", reproduce_trace(trace));
    out
}

fn stop_text(trace: &Trace) -> &'static str {
    use coordlab_sim::trace::StopReason;
    match trace.stop {
        StopReason::Quiescent => "quiescent (nothing left to happen)",
        StopReason::MaxEvents => "at the event limit",
        StopReason::MaxTime => "at the time limit",
    }
}
