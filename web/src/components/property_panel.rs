//! Properties at this step — holding, not yet, or violated at step N (a button that jumps
//! there) — and the run's outcome.

use crate::same_trace::SameTrace;
use crate::state::{Action, Player};
use coordlab_sim::properties::PropertyKind;
use yew::prelude::*;

pub struct PropertyPanelProps {
    pub trace: SameTrace,
    pub cursor: usize,
    pub dispatch: UseReducerDispatcher<Player>,
}

pub fn property_panel(props: &PropertyPanelProps) -> Html {
    let cursor = props.cursor as u32;
    let rows = props.trace.properties.iter().map(|p| {
        let broken_at = p.first_violation_seq;
        let (state, icon, text) = match (p.kind, broken_at) {
            (PropertyKind::Always, Some(s)) if s <= cursor => ("violated", "✗", format!("violated at step {s}")),
            (PropertyKind::Always, Some(s)) => ("holding", "✓", format!("holds so far — breaks at step {s}")),
            (PropertyKind::Always, None) => ("holding", "✓", "holds at every step".to_string()),
            (PropertyKind::Eventually, _) => match p.satisfied_seq {
                Some(s) if s <= cursor => ("holding", "✓", format!("reached at step {s}")),
                Some(s) => ("pending", "…", format!("not yet — reached at step {s}")),
                None => match broken_at {
                    Some(s) if s <= cursor => ("violated", "✗", "never reached by the end of the run".to_string()),
                    _ => ("pending", "…", "not yet — never reached in this run".to_string()),
                },
            },
        };
        let jump = broken_at.map(|s| {
            let d = props.dispatch.clone();
            html! {
                <button class="jump" onclick={Callback::from(move |_| d.dispatch(Action::Seek(s as usize)))}
                    aria-label={format!("Go to step {s}, where {} fails", p.name)}>{ format!("Go to step {s}") }</button>
            }
        });
        html! {
            <li class={format!("property {state}")} data-property={p.name.clone()}>
                <span class="verdict-icon" aria-hidden="true">{ icon }</span>
                <div>
                    <div class="property-name">{ &p.name }<span class="kind">{ match p.kind { PropertyKind::Always => " · always", PropertyKind::Eventually => " · eventually" } }</span></div>
                    <div class="property-desc">{ &p.description }</div>
                    <div class="property-state">{ text }</div>
                </div>
                { for jump }
            </li>
        }
    });
    let outcome: Vec<String> = props
        .trace
        .outcome
        .iter()
        .map(|(k, v)| format!("{}: {}", k.replace('_', " "), outcome_text(v)))
        .collect();
    html! {
        <section class="properties" aria-labelledby="properties-title">
            <h2 id="properties-title">{ "Properties" }</h2>
            <ul>{ for rows }</ul>
            <p class="outcome"><strong>{ "End of run: " }</strong>{ outcome.join(" · ") }</p>
        </section>
    }
}

/// Outcome values as text without serde_json's number printer (which drags float formatting
/// into the bundle); outcomes are integers, strings, booleans or lists of them.
fn outcome_text(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "—".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n
            .as_i64()
            .map(|i| i.to_string())
            .or_else(|| n.as_u64().map(|u| u.to_string()))
            .unwrap_or_else(|| "?".to_string()),
        Value::String(s) => s.clone(),
        // Lists of records (writes, grants) are detailed in the inspector; here, their count.
        Value::Array(items) if items.is_empty() => "none".to_string(),
        Value::Array(items) if items.iter().any(Value::is_object) => items.len().to_string(),
        Value::Array(items) => items.iter().map(outcome_text).collect::<Vec<_>>().join(", "),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", outcome_text(v)))
            .collect::<Vec<_>>()
            .join(" "),
    }
}
