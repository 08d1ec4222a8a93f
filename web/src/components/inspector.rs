//! The state inspector: every participant's card in full (its state, every figure and every
//! detail, whatever the picture had room for), then the scenario's tables (accounts, lock
//! manager, workers…) at this step.

use crate::same_trace::SameTrace;
use coordlab_sim::kernel::time::format_duration;
use coordlab_sim::trace::{NodeStatus, Snapshot};
use std::rc::Rc;
use yew::prelude::*;

pub struct InspectorProps {
    pub trace: SameTrace,
    pub snapshot: Rc<Snapshot>,
}

pub fn inspector(props: &InspectorProps) -> Html {
    let participants = props.snapshot.nodes.iter().map(|n| {
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
        html! {
            <tr>
                <th scope="row">{ props.trace.node_name(n.id) }</th>
                <td>{ state }</td>
                <td>{ figures.join(" · ") }</td>
                <td>{ details.join(" · ") }</td>
            </tr>
        }
    });
    html! {
        <section class="inspector" aria-labelledby="inspector-title">
            <h2 id="inspector-title">{ "State" }</h2>
            <table data-table="participants">
                <caption>{ "Participants" }</caption>
                <thead><tr>
                    <th scope="col">{ "participant" }</th><th scope="col">{ "state" }</th>
                    <th scope="col">{ "figures" }</th><th scope="col">{ "details" }</th>
                </tr></thead>
                <tbody>{ for participants }</tbody>
            </table>
            { for props.snapshot.tables.iter().map(|t| html! {
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
