//! `--format mermaid`: the run as a Mermaid `sequenceDiagram`.
//!
//! Participants get ids `n0`, `n1`, … with their names as aliases (names contain hyphens).
//! Every delivered message is a `->>` arrow at its delivery; a message the network lost, or
//! that reached a crashed or cut-off node, is a `-x` arrow; faults, pause ends and noticed
//! disconnections are notes over their nodes; property violations are notes over everyone.
//! Each fault that lasts (a pause, a crash, a partition, a cut or held link, a slowed node, a
//! drifting clock) is a span: a note where it begins, saying how long it lasts, and one where
//! it ends — the same spans the space-time diagram draws (`coordlab_render::spacetime`).

use crate::util::{params_code, reproduce_trace};
use coordlab_render::spacetime::model::{Diagram, Span, SpanKind};
use coordlab_sim::kernel::time::format_time;
use coordlab_sim::trace::{EventKind, MessageRecord, Trace, TraceEntry};
use coordlab_sim::NodeId;
use std::fmt::Write;

pub fn render(trace: &Trace) -> String {
    let mut out = String::new();
    // A `%%` line is a comment to its end, so only line breaks need removing.
    let _ = writeln!(out, "%% {}", reproduce_trace(trace).replace(['\n', '\r'], " "));
    let _ = writeln!(
        out,
        "%% seed={} params: {}",
        trace.seed,
        params_code(&trace.params).replace(['\n', '\r'], " ")
    );
    out.push_str("sequenceDiagram\n");
    for n in &trace.nodes {
        let _ = writeln!(out, "    participant {} as {}", n.id, sanitize(&n.name));
    }
    let spans: Vec<Span> = Diagram::new(trace)
        .spans
        .into_iter()
        .filter(|s| !matches!(s.kind, SpanKind::Believes | SpanKind::Granted))
        .collect();
    for (i, e) in trace.entries.iter().enumerate() {
        entry(&mut out, trace, e);
        for s in spans.iter().filter(|s| s.start == i) {
            span_note(&mut out, trace, s, true);
        }
        for s in spans.iter().filter(|s| s.end == Some(i)) {
            span_note(&mut out, trace, s, false);
        }
    }
    out
}

/// A note where a fault span begins (with how long it lasts) or ends.
fn span_note(out: &mut String, trace: &Trace, s: &Span, begins: bool) {
    let time = |i: usize| trace.entries[i].time_us;
    let text = if begins {
        let until = match s.end {
            Some(end) => format!(
                "until {} (step {end}, {} later)",
                format_time(time(end)),
                format_time(time(end) - time(s.start))
            ),
            None => "to the end of the run".to_string(),
        };
        format!("{} begins, lasts {until}", s.label)
    } else {
        format!("{} ends", s.label)
    };
    let _ = writeln!(
        out,
        "    Note over {}: {}",
        NodeId(s.lane as u32),
        sanitize(&text)
    );
}

fn entry(out: &mut String, trace: &Trace, e: &TraceEntry) {
    match e.kind {
        EventKind::Deliver => {
            if let Some(m) = &e.message {
                arrow(out, m, "->>", "");
            }
        }
        EventKind::Undeliverable => {
            if let Some(m) = &e.message {
                arrow(out, m, "-x", "lost: ");
            }
        }
        EventKind::Fault | EventKind::Resume | EventKind::PeerDown => {
            let _ = writeln!(
                out,
                "    Note over {}: {}",
                over(trace, &e.nodes),
                sanitize(&e.text)
            );
        }
        EventKind::Start | EventKind::Timer => {}
    }
    for m in &e.lost {
        arrow(out, m, "-x", "lost: ");
    }
    for v in &e.violations {
        let _ = writeln!(
            out,
            "    Note over {}: violated: {}",
            over(trace, &[]),
            sanitize(v)
        );
    }
}

fn arrow(out: &mut String, m: &MessageRecord, arrow: &str, prefix: &str) {
    let _ = writeln!(
        out,
        "    {}{arrow}{}: {prefix}{}",
        m.from,
        m.to,
        sanitize(&m.label)
    );
}

/// The span a note covers: the lowest to the highest of `nodes`, or every participant.
fn over(trace: &Trace, nodes: &[NodeId]) -> String {
    let (lo, hi) = if nodes.is_empty() {
        (NodeId(0), NodeId(trace.nodes.len().saturating_sub(1) as u32))
    } else {
        (
            nodes.iter().copied().min().unwrap_or(NodeId(0)),
            nodes.iter().copied().max().unwrap_or(NodeId(0)),
        )
    };
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo},{hi}")
    }
}

/// Text Mermaid's sequence-diagram grammar accepts after a `:`: no statement separators
/// (`;`, newlines), no entity codes (`#`), no HTML (`<`, `>`), no comment markers (`%%`).
fn sanitize(text: &str) -> String {
    let text = text.replace("->", "→").replace("<-", "←").replace("%%", "%");
    text.chars()
        .map(|c| match c {
            ';' => ',',
            '#' => '№',
            '<' => '‹',
            '>' => '›',
            '{' => '(',
            '}' => ')',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn sanitize_removes_what_mermaid_chokes_on() {
        assert_eq!(sanitize("a;b#c\nd -> e <x> ₹70"), "a,b№c d → e ‹x› ₹70");
    }
}
