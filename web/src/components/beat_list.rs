//! The story as a list of beats: each one a button that goes to it; the one reached is marked,
//! and a beat the run never reached (a fault changed the story) says so.

use crate::state::{Action, Player};
use std::rc::Rc;
use yew::prelude::*;

pub struct BeatListProps {
    pub player: Rc<Player>,
    pub dispatch: UseReducerDispatcher<Player>,
}

pub fn beat_list(props: &BeatListProps) -> Html {
    let p = &props.player;
    let current = p.nav.beat_at_or_before(p.cursor);
    let mut reached = 0;
    let rows = p.trace.beats.iter().map(|b| {
        let Some(seq) = b.seq else {
            return html! {
                <li class="beat-row missed">
                    <span class="beat-title">{ &b.title }</span>
                    <span class="hint">{ " — does not happen in this run" }</span>
                </li>
            };
        };
        let index = reached;
        reached += 1;
        let d = props.dispatch.clone();
        let is_current = current == Some(index);
        html! {
            <li class={super::class_list("beat-row", &[("current", is_current)])}>
                <button onclick={Callback::from(move |_| d.dispatch(Action::Seek(seq as usize)))}
                    aria-current={is_current.then_some("step")}>
                    <span class="beat-index">{ index + 1 }</span>
                    <span class="beat-title">{ &b.title }</span>
                    <span class="beat-step">{ format!("step {seq}") }</span>
                </button>
                <p class="beat-text">{ &b.text }</p>
            </li>
        }
    });
    let on_stop = {
        let d = props.dispatch.clone();
        Callback::from(move |e: Event| {
            let on = e.target_unchecked_into::<web_sys::HtmlInputElement>().checked();
            d.dispatch(Action::SetStopAtBeats(on));
        })
    };
    html! {
        <section class="beats" aria-labelledby="beats-title">
            <h2 id="beats-title">{ "The story in beats" }</h2>
            if p.trace.beats.is_empty() {
                <p class="hint">{ "This scenario has no beats yet: step through its events." }</p>
            } else {
                <ol>{ for rows }</ol>
                <label class="stop-at-beats">
                    <input type="checkbox" checked={p.stepping.stop_at_beats} onchange={on_stop} />
                    { " Play pauses at each beat" }
                </label>
            }
        </section>
    }
}
