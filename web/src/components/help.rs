//! The keys, listed: `?` opens this, Escape or Close closes it. A dialog that stays inside the
//! screen in every mode (the player, presenter mode, the side-by-side view, a phone): its list
//! scrolls when the screen is short, by keyboard too (the list takes the focus when it opens,
//! see [`settle_focus`], and keeps Page Down / Up, Home, End and Space for scrolling while it
//! has it), and Close stays in view above it.

use wasm_bindgen::JsCast;
use yew::prelude::*;

pub struct HelpProps {
    /// Close was pressed.
    pub on_close: Callback<()>,
    /// Whether `d` switches pictures here (the side-by-side view shows the topology only).
    pub pictures: bool,
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
    ("f", "presenter mode (full screen)"),
    ("?", "this list"),
    (
        "Escape",
        "closes what is on top, one at a time: this list, then a dialog, then presenter mode",
    ),
];

fn document() -> Option<web_sys::Document> {
    web_sys::window().and_then(|w| w.document())
}

/// Whether the focus is in the key list: asked before an action that may close it.
pub fn has_focus() -> bool {
    document()
        .and_then(|d| d.active_element())
        .and_then(|el| el.closest(".help").ok().flatten())
        .is_some()
}

/// Puts the focus where it belongs once the key list has opened or closed: in the list when it
/// is open (so the keyboard scrolls it at once); back on the Keys button when it has closed
/// and `had_focus` (the focus then went with it). Call it after the action. A plain function
/// rather than a component with an effect: that cost every player bundle ~1.5 KB.
pub fn settle_focus(had_focus: bool) {
    gloo_timers::callback::Timeout::new(0, move || {
        let Some(doc) = document() else { return };
        let target = match doc.get_element_by_id("help-keys") {
            Some(list) => Some(list),
            None if had_focus => doc.get_element_by_id("help-button"),
            None => None,
        };
        if let Some(el) = target.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = el.focus();
        }
    })
    .forget();
}

pub fn help(props: &HelpProps) -> Html {
    let close = {
        let on_close = props.on_close.clone();
        Callback::from(move |_| {
            on_close.emit(());
            settle_focus(true);
        })
    };
    html! {
        <div class="help" role="dialog" aria-modal="false" aria-labelledby="help-title">
            <div class="help-head">
                <h2 id="help-title">{ "Keys" }</h2>
                <button class="close" onclick={close}>{ "Close" }</button>
            </div>
            <div id="help-keys" class="help-keys" tabindex="0" role="region" aria-label="The list of keys" data-scroll-keys="">
                <p class="hint">{ "They work wherever the focus is, except while you type in a field." }</p>
                <dl>
                    { for KEYS.iter().filter(|(k, _)| props.pictures || *k != "d")
                        .map(|(k, what)| html! { <><dt><kbd>{ *k }</kbd></dt><dd>{ *what }</dd></> }) }
                </dl>
            </div>
        </div>
    }
}
