//! The trace file reads back what it wrote, for every scenario: the player's `#/trace` page
//! shows exactly the run the CLI exported.

use coordlab_sim::kernel::faults::parse_script;
use coordlab_sim::scenarios::{expectation_for, registry, Params};
use coordlab_sim::trace_file::{parse, write};
use coordlab_sim::{run, Action, Limits, Recording, RunRequest, Trace};

fn lines_run(scenario: &str, actions: Vec<Action>) -> (Trace, Vec<String>) {
    let request = RunRequest {
        scenario: scenario.to_string(),
        params: Params::new(),
        seed: 1,
        actions,
    };
    let trace = run(&request, Limits::default(), Recording::Lines).expect("valid request");
    let mismatches = expectation_for(&request)
        .expect("known scenario")
        .mismatches(&trace);
    (trace, mismatches)
}

/// Writes, reads and writes again, and compares everything the file carries.
fn assert_round_trip(original: &Trace, mismatches: &[String]) {
    let id = &original.scenario;
    let text = write(original, mismatches);
    let parsed = parse(&text).unwrap_or_else(|e| panic!("{id}: {e}"));
    assert_eq!(write(&parsed, mismatches), text, "{id}");
    // Entries without snapshots carry nothing the file leaves out, so they compare whole:
    // seq, time, kind, text, nodes, message, lost, fault, notes, violations, highlight and
    // holdings.
    assert_eq!(parsed.entries.len(), original.entries.len(), "{id}");
    for (p, o) in parsed.entries.iter().zip(&original.entries) {
        assert!(o.snapshot.is_none());
        assert_eq!(p, o, "{id}");
    }
    assert_eq!(
        (
            &parsed.scenario,
            parsed.seed,
            &parsed.params,
            &parsed.actions,
            &parsed.outcome
        ),
        (
            &original.scenario,
            original.seed,
            &original.params,
            &original.actions,
            &original.outcome
        ),
    );
    assert_eq!(
        (parsed.stop, parsed.event_count),
        (original.stop, original.event_count),
        "{id}"
    );
    let nodes = |t: &Trace| -> Vec<(u32, String, String)> {
        t.nodes
            .iter()
            .map(|n| (n.id.0, n.name.clone(), n.kind.clone()))
            .collect()
    };
    assert_eq!(nodes(&parsed), nodes(original), "{id}");
    let verdicts = |t: &Trace| -> Vec<(String, &'static str, Option<u32>)> {
        t.properties
            .iter()
            .map(|p| (p.name.clone(), p.verdict.as_str(), p.first_violation_seq))
            .collect()
    };
    assert_eq!(verdicts(&parsed), verdicts(original), "{id}");
    let beats = |t: &Trace| -> Vec<(u32, String, String)> {
        t.reached_beats()
            .map(|(s, b)| (s, b.key.clone(), b.title.clone()))
            .collect()
    };
    assert_eq!(beats(&parsed), beats(original), "{id}");
}

#[test]
fn every_scenario_round_trips_through_the_trace_file() {
    let (mut warnings, mut holdings, mut faults) = (0, 0, 0);
    for def in registry() {
        let (trace, mismatches) = lines_run(def.id, vec![]);
        assert_round_trip(&trace, &mismatches);
        warnings += trace.entries.iter().filter(|e| e.highlight.is_some()).count();
        holdings += trace.entries.iter().filter(|e| !e.holdings.is_empty()).count();
        faults += trace.entries.iter().filter(|e| e.fault.is_some()).count();
    }
    // The optional fields are exercised, not just absent everywhere.
    assert!(
        warnings > 0 && holdings > 0 && faults > 0,
        "{warnings} {holdings} {faults}"
    );
}

#[test]
fn a_run_with_an_action_script_round_trips() {
    let actions = parse_script("12@pause:1:400;20@crash:2").expect("valid script");
    let (trace, mismatches) = lines_run("lost-update", actions.clone());
    assert_eq!(trace.actions, actions);
    assert_round_trip(&trace, &mismatches);
    let text = write(&trace, &mismatches);
    assert!(
        text.contains(r#""actions":"12@pause:1:400;20@crash:2""#),
        "{text}"
    );
}

#[test]
fn the_summary_lists_the_nodes_in_id_order() {
    let (trace, mismatches) = lines_run("zombie-worker", vec![]);
    let text = write(&trace, &mismatches);
    let summary: serde_json::Value =
        serde_json::from_str(text.lines().last().expect("a summary")).expect("JSON");
    let names: Vec<&str> = summary["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["lease-store", "worker-A", "worker-B", "ledger"]);
    assert_eq!(summary["nodes"][1]["kind"], "worker");
}
