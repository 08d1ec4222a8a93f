//! The narration pane: what this step means, announced once per step to screen readers. The
//! first use of a glossary term in the run is a button that shows its definition.

use crate::glossary::{linked, FirstUses, SameTrace};
use coordlab_sim::trace::Trace;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct NarrationProps {
    pub trace: Rc<Trace>,
    pub cursor: usize,
}

#[function_component(Narration)]
pub fn narration(props: &NarrationProps) -> Html {
    let entry = &props.trace.entries[props.cursor];
    let firsts = use_memo(SameTrace(props.trace.clone()), |t| FirstUses::of(&t.0));
    let mut introduced = firsts.introduced_before(props.cursor);
    let text = linked(&entry.text, &mut introduced, props.cursor);
    let notes: Vec<Html> = entry
        .notes
        .iter()
        .map(|n| html! { <p>{ linked(n, &mut introduced, props.cursor) }</p> })
        .collect();
    html! {
        // Labelled by text, not by an id: the side-by-side view shows two narrations.
        <section class="narration" aria-label="What is happening">
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
