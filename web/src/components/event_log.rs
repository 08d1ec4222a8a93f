//! The event log: every step as a button; the current one is marked and kept in view.

use crate::state::{Action, Player};
use coordlab_sim::kernel::time::format_time;
use coordlab_sim::trace::{EventKind, Trace};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct EventLogProps {
    pub trace: Rc<Trace>,
    pub cursor: usize,
    pub dispatch: UseReducerDispatcher<Player>,
}

#[function_component(EventLog)]
pub fn event_log(props: &EventLogProps) -> Html {
    let list_ref = use_node_ref();
    {
        let list_ref = list_ref.clone();
        use_effect_with(props.cursor, move |cursor| {
            // Scroll the list itself (not the page) so the current step stays visible.
            if let Some(list) = list_ref.cast::<web_sys::HtmlElement>() {
                if let Some(item) = list
                    .children()
                    .item(*cursor as u32)
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                {
                    let target = item.offset_top() - list.client_height() / 2;
                    list.set_scroll_top(target.max(0));
                }
            }
        });
    }
    html! {
        <section class="event-log" aria-labelledby="log-title">
            <h2 id="log-title">{ "Event log" }</h2>
            <ol ref={list_ref}>
                { for props.trace.entries.iter().map(|e| {
                    let i = e.seq as usize;
                    let d = props.dispatch.clone();
                    let current = i == props.cursor;
                    let class = classes!(
                        "log-row",
                        current.then_some("current"),
                        (i > props.cursor).then_some("future"),
                        (!e.violations.is_empty()).then_some("violation"),
                        (e.kind == EventKind::Fault).then_some("fault"),
                    );
                    html! {
                        <li key={i.to_string()}>
                            <button class={class} aria-current={current.then_some("step")}
                                onclick={Callback::from(move |_| d.dispatch(Action::Seek(i)))}>
                                <span class="seq">{ e.seq }</span>
                                <span class="time">{ format_time(e.time_us) }</span>
                                <span class="text">{ &e.text }</span>
                            </button>
                        </li>
                    }
                }) }
            </ol>
        </section>
    }
}
