//! The state inspector: every participant's card in full (its state, every figure and every
//! detail, whatever the picture had room for), then the scenario's tables (accounts, lock
//! manager, workers…) at this step.

use crate::same_trace::SameTrace;
use coordlab_sim::kernel::time::format_duration;
use coordlab_sim::trace::{columns, NodeStatus, Snapshot, TableView};
use yew::prelude::*;

pub struct InspectorProps {
    pub trace: SameTrace,
    pub snapshot: crate::same_trace::SameState,
}

/// The participants' cards as a table: state, figures, details.
fn participants(trace: &SameTrace, snapshot: &Snapshot) -> TableView {
    let rows = snapshot
        .nodes
        .iter()
        .map(|n| {
            let s = &n.summary;
            let state = match n.status {
                NodeStatus::Up => s.word.clone(),
                NodeStatus::Crashed => format!("crashed (on disk: {})", s.word),
                NodeStatus::Paused { until_us } => {
                    format!("paused until {} ({})", format_duration(until_us), s.word)
                }
            };
            let figures: Vec<String> = s
                .badges
                .iter()
                .map(|b| format!("{} {}", b.label, b.value))
                .collect();
            let details: Vec<&str> = s.details.iter().map(|d| d.text.as_str()).collect();
            vec![
                trace.node_name(n.id).to_string(),
                state,
                figures.join(" · "),
                details.join(" · "),
            ]
        })
        .collect();
    TableView {
        title: "participants".into(),
        columns: columns(&["participant", "state", "figures", "details"]),
        rows,
    }
}

pub fn inspector(props: &InspectorProps) -> Html {
    let cards = participants(&props.trace, &props.snapshot);
    html! {
        <section class="inspector" aria-labelledby="inspector-title">
            <h2 id="inspector-title">{ "State" }</h2>
            { for std::iter::once(&cards).chain(&props.snapshot.tables).map(|t| html! {
                <table data-table={t.title.clone()}>
                    <caption>{ &t.title }</caption>
                    <thead><tr>{ for t.columns.iter().map(|c| html! { <th scope="col">{ c }</th> }) }</tr></thead>
                    <tbody>
                        { for t.rows.iter().map(|r| html! {
                            <tr>{ for r.iter().map(|cell| html! { <td>{ cell }</td> }) }</tr>
                        }) }
                    </tbody>
                </table>
            }) }
        </section>
    }
}
