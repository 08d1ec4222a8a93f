//! Listening to a DOM event for as long as an effect lasts: the one place that pairs
//! `addEventListener` with its `removeEventListener`, for the window's keys and address, the
//! document's full screen and visibility, a media query's changes and a host page's messages.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::EventTarget;

/// Calls `listener` on each `kind` event at `target` (none: nothing to listen to) until the
/// returned teardown runs; an effect returns it as its cleanup. The teardown owns the
/// listener, so it lives exactly as long as it is registered.
pub fn listen<T: ?Sized>(
    target: Option<impl Into<EventTarget>>,
    kind: &'static str,
    listener: Closure<T>,
) -> impl FnOnce() {
    let target: Option<EventTarget> = target.map(Into::into);
    if let Some(t) = &target {
        let _ = t.add_event_listener_with_callback(kind, listener.as_ref().unchecked_ref());
    }
    move || {
        if let Some(t) = target {
            let _ = t.remove_event_listener_with_callback(kind, listener.as_ref().unchecked_ref());
        }
    }
}
