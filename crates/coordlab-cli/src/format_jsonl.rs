//! `--format jsonl`: one JSON object per event, then one summary object.

use coordlab_sim::kernel::faults::script_code;
use coordlab_sim::trace::{MessageRecord, Trace, TraceEntry};
use serde_json::{json, Value};

pub fn render(trace: &Trace, mismatches: &[String]) -> String {
    let mut out = String::new();
    for e in &trace.entries {
        out.push_str(&entry(trace, e).to_string());
        out.push('\n');
    }
    out.push_str(&summary(trace, mismatches).to_string());
    out.push('\n');
    out
}

fn message(trace: &Trace, m: &MessageRecord) -> Value {
    json!({
        "id": m.id.0,
        "from": trace.node_name(m.from),
        "to": trace.node_name(m.to),
        "label": m.label,
        "sent_us": m.sent_us,
    })
}

fn entry(trace: &Trace, e: &TraceEntry) -> Value {
    let mut obj = json!({
        "seq": e.seq,
        "time_us": e.time_us,
        "kind": e.kind.as_str(),
        "text": e.text,
        "nodes": e.nodes.iter().map(|n| trace.node_name(*n)).collect::<Vec<_>>(),
        "notes": e.notes,
        "violations": e.violations,
        "lost": e.lost.iter().map(|m| message(trace, m)).collect::<Vec<_>>(),
    });
    if let Some(m) = &e.message {
        obj["message"] = message(trace, m);
    }
    if let Some(f) = &e.fault {
        obj["fault"] = Value::String(f.to_code());
    }
    obj
}

fn summary(trace: &Trace, mismatches: &[String]) -> Value {
    let properties: Vec<Value> = trace
        .properties
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "verdict": p.verdict.as_str(),
                "first_violation_seq": p.first_violation_seq,
            })
        })
        .collect();
    json!({
        "kind": "summary",
        "scenario": trace.scenario,
        "seed": trace.seed,
        "params": trace.params,
        "actions": script_code(&trace.actions),
        "outcome": trace.outcome,
        "properties": properties,
        "beats": trace
            .reached_beats()
            .map(|(seq, b)| json!({"seq": seq, "key": b.key, "title": b.title}))
            .collect::<Vec<_>>(),
        "expected": { "met": mismatches.is_empty(), "mismatches": mismatches },
        "stop": trace.stop,
        "event_count": trace.event_count,
    })
}
