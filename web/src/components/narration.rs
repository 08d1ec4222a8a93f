//! The narration pane: what this step means, announced once per step to screen readers. The
//! first use of a glossary term in the run is a button that shows its definition.

use crate::glossary::{linked, next_uid, on_escape, on_focus_out, use_definitions, FirstUses, Terms};
use crate::same_trace::SameTrace;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct NarrationProps {
    pub trace: SameTrace,
    pub cursor: usize,
    /// The section's name for screen readers; the side-by-side view names each run's.
    #[prop_or(AttrValue::Static("What is happening"))]
    pub label: AttrValue,
}

#[function_component(Narration)]
pub fn narration(props: &NarrationProps) -> Html {
    let entry = &props.trace.entries[props.cursor];
    let firsts = use_memo(props.trace.clone(), FirstUses::of);
    let uid = use_memo((), |_| next_uid());
    use_definitions();
    // The term whose definition is open, and at which step (another step closes it).
    let open = use_state_eq(|| None::<(usize, usize)>);
    let cursor = props.cursor;
    let toggle = {
        let open = open.clone();
        Callback::from(move |t: usize| {
            open.set(if *open == Some((cursor, t)) {
                None
            } else {
                Some((cursor, t))
            })
        })
    };
    let close = {
        let open = open.clone();
        Callback::from(move |()| open.set(None))
    };
    let terms = Terms {
        open: (*open).filter(|(step, _)| *step == cursor).map(|(_, t)| t),
        uid: *uid,
        toggle: &toggle,
    };
    let mut introduced = firsts.introduced_before(cursor);
    let text = linked(&entry.text, &mut introduced, &terms);
    let notes: Vec<Html> = entry
        .notes
        .iter()
        .map(|n| html! { <p>{ linked(n, &mut introduced, &terms) }</p> })
        .collect();
    html! {
        // Labelled by text, not by an id: the side-by-side view shows two narrations, each
        // named after its run.
        <section class="narration" aria-label={props.label.clone()}
            onkeydown={on_escape(close.clone())} onfocusout={on_focus_out(close)}>
            <p class="event-text"><span class="step-no">{ format!("Step {}", entry.seq) }</span>{ text }</p>
            <div aria-live="polite" aria-atomic="true" class="notes">
                { for notes }
                { for entry.violations.iter().map(|v| html! {
                    <p class="violation-note" role="status">{ format!("⚠ Property “{v}” is violated at this step.") }</p>
                }) }
            </div>
        </section>
    }
}
