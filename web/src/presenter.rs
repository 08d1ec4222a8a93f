//! Presenter mode's plumbing, shared by the player and the side-by-side view: what Escape
//! closes, full screen, and the keyboard lock that lets the page see Escape in full screen.
//!
//! Escape closes only the top-most thing open: the key list, then a dialog (the player's Embed
//! dialog), then presenter mode. In real full screen the browser keeps Escape for itself: it
//! leaves full screen and the page only hears `fullscreenchange`. Where the browser offers the
//! Keyboard Lock API (`navigator.keyboard.lock(["Escape"])`), the page locks Escape while in
//! full screen, so a short press reaches it (holding Escape still leaves full screen). Where it
//! does not, leaving full screen with the key list open closes the list and keeps presenter
//! mode, which works without full screen.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use yew::prelude::*;

/// The things Escape can close, top-most first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layers {
    pub help: bool,
    /// A dialog (the Embed dialog); presenter mode never shows one.
    pub dialog: bool,
    pub presenting: bool,
}

impl Layers {
    /// Escape: closes the top-most thing open, and only that.
    pub fn escape(&mut self) {
        if self.help {
            self.help = false;
        } else if self.dialog {
            self.dialog = false;
        } else {
            self.presenting = false;
        }
    }
}

/// The browser left full screen (its own Escape, its control, a call of ours): with the key
/// list open in presenter mode it is the key list that closes — the Escape was meant for it —
/// and presenter mode stays; otherwise presenter mode ends. Outside presenter mode nothing
/// changes (its end asked the browser to leave full screen). Returns `(presenting, help)`.
pub fn full_screen_ended(presenting: bool, help: bool) -> (bool, bool) {
    match (presenting, help) {
        (true, true) => (true, false),
        (true, false) => (false, false),
        (false, help) => (false, help),
    }
}

fn document() -> Option<web_sys::Document> {
    web_sys::window().and_then(|w| w.document())
}

fn in_full_screen() -> bool {
    document().is_some_and(|d| d.fullscreen_element().is_some())
}

/// Asks the browser for full screen (it may refuse: presenter mode works without it).
fn enter_full_screen() {
    if let Some(root) = document().and_then(|d| d.document_element()) {
        let _ = root.request_fullscreen();
    }
}

fn leave_full_screen() {
    if let Some(doc) = document() {
        if doc.fullscreen_element().is_some() {
            doc.exit_fullscreen();
        }
    }
}

// The Keyboard Lock API, declared here: web-sys has it only behind its unstable flag, and this
// is all we need of it.
#[wasm_bindgen]
extern "C" {
    type Keyboard;
    #[wasm_bindgen(method)]
    fn lock(this: &Keyboard, keys: &js_sys::Array) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn unlock(this: &Keyboard);
}

/// `navigator.keyboard.lock(["Escape"])` (or `unlock()`) where the browser has it.
fn lock_escape(on: bool) {
    let keyboard = web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w.navigator(), &JsValue::from_str("keyboard")).ok())
        .filter(|k| k.is_object());
    let Some(keyboard) = keyboard.map(JsCast::unchecked_into::<Keyboard>) else {
        return;
    };
    if !on {
        return keyboard.unlock();
    }
    // A refused lock (not in full screen any more, a browser that says no) is no error: Escape
    // then works as the browser's, and leaving full screen is handled.
    let ignore = Closure::<dyn FnMut(JsValue)>::new(|_| {});
    let _ = keyboard
        .lock(&js_sys::Array::of1(&JsValue::from_str("Escape")))
        .catch(&ignore);
    ignore.forget();
}

/// Full screen follows presenter mode: it is asked for when presenter mode starts (a key press
/// or a click just happened, which browsers require) and given back when it ends; opening a link
/// with `present=1` is no such moment, so the first run asks for nothing. While in full screen
/// Escape is locked for the page where the browser allows it. `on_end` hears the browser leave
/// full screen.
#[hook]
pub fn use_full_screen(presenting: bool, on_end: Callback<()>) {
    use_effect_with((), move |_| {
        let listener = Closure::<dyn Fn()>::new(move || {
            if in_full_screen() {
                lock_escape(true);
            } else {
                lock_escape(false);
                on_end.emit(());
            }
        });
        crate::listen::listen(document(), "fullscreenchange", listener)
    });
    let mounted = use_mut_ref(|| false);
    use_effect_with(presenting, move |presenting| {
        let first = !std::mem::replace(&mut *mounted.borrow_mut(), true);
        if !first {
            if *presenting {
                enter_full_screen();
            } else {
                leave_full_screen();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_closes_the_top_most_thing_only() {
        let mut all = Layers {
            help: true,
            dialog: true,
            presenting: true,
        };
        all.escape();
        assert_eq!((all.help, all.dialog, all.presenting), (false, true, true));
        all.escape();
        assert_eq!((all.help, all.dialog, all.presenting), (false, false, true));
        all.escape();
        assert_eq!(all, Layers::default());
        all.escape();
        assert_eq!(all, Layers::default());
    }

    #[test]
    fn leaving_full_screen_closes_the_key_list_before_presenter_mode() {
        assert_eq!(full_screen_ended(true, true), (true, false));
        assert_eq!(full_screen_ended(true, false), (false, false));
        assert_eq!(full_screen_ended(false, true), (false, true));
        assert_eq!(full_screen_ended(false, false), (false, false));
    }
}
