//! Reading a trace the way the conformance checks need it: who sent what to whom, and when
//! the model answered.

use coordlab_sim::kernel::engine::{Limits, Recording};
use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::scenarios::{run, RunRequest};
use coordlab_sim::trace::{EventKind, MessageRecord, TableView, Trace, TraceEntry};

/// Runs a scenario with every snapshot (the checks read the tables the player shows).
pub fn full_trace(scenario: &str, params: &[(&str, &str)], seed: u64) -> Trace {
    let request = RunRequest {
        scenario: scenario.to_string(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        seed,
        actions: Vec::new(),
    };
    run(&request, Limits::default(), Recording::Full)
        .unwrap_or_else(|e| panic!("{scenario}: the model refused the run: {e:?}"))
}

pub fn node(trace: &Trace, name: &str) -> NodeId {
    trace
        .nodes
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("{}: no node named {name}", trace.scenario))
        .id
}

/// The message an entry delivered, if it is a delivery.
pub fn delivered(entry: &TraceEntry) -> Option<&MessageRecord> {
    match entry.kind {
        EventKind::Deliver => entry.message.as_ref(),
        _ => None,
    }
}

/// The model's answer to the request delivered at `at`: the next delivery from the server
/// back to the sender, and the index of the step at which the server sent it (the request's
/// own step when it answered at once, a later one when the request waited).
pub fn answer(trace: &Trace, at: usize) -> Option<(usize, &MessageRecord)> {
    let request = delivered(&trace.entries[at])?;
    let (server, client) = (request.to, request.from);
    let reply = trace.entries[at + 1..]
        .iter()
        .filter_map(delivered)
        .find(|m| m.from == server && m.to == client)?;
    let sent_at = trace
        .entries
        .iter()
        .enumerate()
        .skip(at)
        .find(|(_, e)| e.time_us == reply.sent_us && e.nodes.first() == Some(&server))?
        .0;
    Some((sent_at, reply))
}

/// A table of the snapshot after entry `at`.
pub fn table<'a>(trace: &'a Trace, at: usize, title: &str) -> &'a TableView {
    trace.entries[at]
        .snapshot
        .as_ref()
        .and_then(|s| s.tables.iter().find(|t| t.title == title))
        .unwrap_or_else(|| panic!("{}: no table `{title}` after step {at}", trace.scenario))
}

/// A node's own clock after entry `at`, in µs.
pub fn local_time_us(trace: &Trace, at: usize, node: NodeId) -> u64 {
    trace.entries[at]
        .snapshot
        .as_ref()
        .map(|s| s.nodes[node.index()].local_time_us)
        .unwrap_or_else(|| panic!("{}: no snapshot after step {at}", trace.scenario))
}

/// `₹100` as 100.
pub fn rupees(text: &str) -> i64 {
    text.trim_start_matches('₹')
        .parse()
        .unwrap_or_else(|_| panic!("not an amount in rupees: {text}"))
}
