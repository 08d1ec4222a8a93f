//! The keys, listed: `?` opens this, Escape closes it.

use crate::state::{Action, Player};
use yew::prelude::*;

pub struct HelpProps {
    pub dispatch: UseReducerDispatcher<Player>,
}

const KEYS: &[(&str, &str)] = &[
    (
        "n  or  Page Down",
        "next beat (a presentation clicker sends Page Down)",
    ),
    ("p  or  Page Up", "previous beat"),
    ("v", "to the next step where a property breaks"),
    ("→  or  l", "step forward (to the next narrated event)"),
    ("←  or  j", "step back"),
    ("Space  or  k", "play / pause (pauses at each beat)"),
    ("Home / End", "first / last step"),
    ("a", "all events: also step through heartbeats and acks"),
    ("d", "the picture: topology, space-time diagram, or both"),
    ("f", "presenter mode (full screen); Escape leaves it"),
    ("?", "this list; Escape closes it"),
];

pub fn help(props: &HelpProps) -> Html {
    let close = {
        let d = props.dispatch.clone();
        Callback::from(move |_| d.dispatch(Action::Help(false)))
    };
    html! {
        <div class="help" role="dialog" aria-modal="false" aria-labelledby="help-title">
            <h2 id="help-title">{ "Keys" }</h2>
            <p class="hint">{ "They work wherever the focus is, except while you type in a field." }</p>
            <dl>
                { for KEYS.iter().map(|(k, what)| html! { <><dt><kbd>{ *k }</kbd></dt><dd>{ *what }</dd></> }) }
            </dl>
            <button onclick={close}>{ "Close" }</button>
        </div>
    }
}
