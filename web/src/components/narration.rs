//! The narration pane: what this step means, announced once per step to screen readers.

use coordlab_sim::trace::Trace;
use std::rc::Rc;
use yew::prelude::*;

pub struct NarrationProps {
    pub trace: Rc<Trace>,
    pub cursor: usize,
}

pub fn narration(props: &NarrationProps) -> Html {
    let entry = &props.trace.entries[props.cursor];
    html! {
        // Labelled by text, not by an id: the side-by-side view shows two narrations.
        <section class="narration" aria-label="What is happening">
            <p class="event-text"><span class="step-no">{ format!("Step {}", entry.seq) }</span>{ &entry.text }</p>
            <div aria-live="polite" aria-atomic="true" class="notes">
                { for entry.notes.iter().map(|n| html! { <p>{ n }</p> }) }
                { for entry.violations.iter().map(|v| html! {
                    <p class="violation-note" role="status">{ format!("⚠ Property “{v}” is violated at this step.") }</p>
                }) }
            </div>
        </section>
    }
}
