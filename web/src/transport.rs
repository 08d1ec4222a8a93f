//! What the player and the side-by-side view share: the transport keys (← → Home End Space)
//! and how a cursor moves through a run for each transport command.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::KeyboardEvent;
use yew::prelude::*;

/// A transport command, from a button or a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    Forward,
    Back,
    First,
    Last,
    TogglePlay,
    /// Advance during playback; stops at the end.
    Tick,
}

/// Applies `m` to a cursor over steps `0..=last`; returns the new cursor and whether playback
/// runs. Stepping by hand stops playback; playing from the end starts over.
pub fn apply(m: Move, cursor: usize, last: usize, playing: bool) -> (usize, bool) {
    match m {
        Move::Forward => ((cursor + 1).min(last), false),
        Move::Back => (cursor.saturating_sub(1), false),
        Move::First => (0, false),
        Move::Last => (last, false),
        Move::TogglePlay if !playing && cursor >= last => (0, true),
        Move::TogglePlay => (cursor, !playing),
        Move::Tick if !playing => (cursor, false),
        Move::Tick if cursor >= last => (cursor, false),
        Move::Tick => (cursor + 1, true),
    }
}

/// Listens for the transport keys anywhere on the page, except while typing in a field.
#[hook]
pub fn use_transport_keys(on_move: Callback<Move>) {
    use_effect_with((), move |_| {
        let listener = Closure::<dyn Fn(KeyboardEvent)>::new(move |e: KeyboardEvent| {
            if e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            let tag = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .map(|el| el.tag_name())
                .unwrap_or_default();
            if matches!(tag.as_str(), "INPUT" | "SELECT" | "TEXTAREA") {
                return;
            }
            let on_button = tag == "BUTTON" || tag == "A";
            let m = match e.key().as_str() {
                "ArrowRight" | "l" => Some(Move::Forward),
                "ArrowLeft" | "j" => Some(Move::Back),
                "Home" => Some(Move::First),
                "End" => Some(Move::Last),
                // Space on a focused button presses the button instead.
                " " | "k" if !on_button || e.key() == "k" => Some(Move::TogglePlay),
                _ => None,
            };
            if let Some(m) = m {
                e.prevent_default();
                on_move.emit(m);
            }
        });
        let window = web_sys::window();
        if let Some(w) = &window {
            let _ = w.add_event_listener_with_callback("keydown", listener.as_ref().unchecked_ref());
        }
        move || {
            if let Some(w) = window {
                let _ = w.remove_event_listener_with_callback("keydown", listener.as_ref().unchecked_ref());
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_stay_within_the_run_and_playback_stops_at_the_end() {
        assert_eq!(apply(Move::Back, 0, 5, false), (0, false));
        assert_eq!(apply(Move::Forward, 5, 5, false), (5, false));
        assert_eq!(
            apply(Move::Forward, 2, 5, true),
            (3, false),
            "a manual step stops playback"
        );
        assert_eq!(
            apply(Move::TogglePlay, 5, 5, false),
            (0, true),
            "playing from the end starts over"
        );
        assert_eq!(apply(Move::Tick, 4, 5, true), (5, true));
        assert_eq!(apply(Move::Tick, 5, 5, true), (5, false));
        assert_eq!(
            apply(Move::Tick, 2, 5, false),
            (2, false),
            "a late tick after pause does nothing"
        );
    }
}
