//! Fault buttons by delegation: a button carries its fault as text (`data-fault="crash:2"`,
//! the same code as in URLs) and one click handler on the panel injects whichever was
//! pressed. One handler per panel instead of one closure per button keeps the bundle small.
//!
//! A button's accessible name starts with its visible text and adds the rest in visually
//! hidden text, so speech input ("click Drop") and screen readers agree.

use crate::state::{Action, Player};
use coordlab_sim::Fault;
use wasm_bindgen::JsCast;
use web_sys::Element;
use yew::prelude::*;

/// A button that injects `fault`; `more` is read after the visible `text` by screen readers.
pub fn fault_button(fault: &Fault, text: &str, more: &str, disabled: bool) -> Html {
    html! {
        <button type="button" data-fault={fault.to_code()} {disabled}>
            { text }
            if !more.is_empty() {
                <span class="visually-hidden">{ format!(" {more}") }</span>
            }
        </button>
    }
}

/// The one click handler of a panel of fault buttons.
pub fn on_fault_click(dispatch: &UseReducerDispatcher<Player>) -> Callback<MouseEvent> {
    let dispatch = dispatch.clone();
    Callback::from(move |e: MouseEvent| {
        let code = e
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|t| t.closest("button[data-fault]").ok().flatten())
            .and_then(|b| b.get_attribute("data-fault"));
        if let Some(fault) = code.and_then(|c| Fault::from_code(&c).ok()) {
            dispatch.dispatch(Action::Inject(fault));
        }
    })
}
