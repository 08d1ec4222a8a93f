//! What the player and the side-by-side view share: the transport commands, how each moves a
//! cursor through a run, and the keyboard.
//!
//! The keys act on the player wherever the focus is, except while typing in a text field:
//! Space plays even right after a button was clicked (it must not press that button again),
//! and ← → step even when a drop-down has the focus (they must not change its value). Presenter
//! clickers send PageDown / PageUp: those move by beat.

use crate::nav::Nav;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::KeyboardEvent;
use yew::prelude::*;

/// A transport command, from a button or a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    Forward,
    Back,
    NextBeat,
    PrevBeat,
    /// To the next step where a property breaks (stays put if none is left).
    NextViolation,
    First,
    Last,
    TogglePlay,
    /// Advance during playback; stops at the end (and at a beat when playback stops there).
    Tick,
}

/// How the cursor moves: every event or only the narrated ones, and whether playback pauses
/// at each beat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stepping {
    pub all_events: bool,
    pub stop_at_beats: bool,
}

impl Default for Stepping {
    fn default() -> Self {
        Stepping {
            all_events: false,
            stop_at_beats: true,
        }
    }
}

/// Applies `m` to a cursor; returns the new cursor and whether playback runs. Stepping by
/// hand stops playback; playing from the end starts over.
pub fn apply(m: Move, cursor: usize, nav: &Nav, how: Stepping, playing: bool) -> (usize, bool) {
    match m {
        Move::Forward => (nav.next(cursor, how.all_events), false),
        Move::Back => (nav.prev(cursor, how.all_events), false),
        Move::NextBeat => (nav.next_beat(cursor), false),
        Move::PrevBeat => (nav.prev_beat(cursor), false),
        Move::NextViolation => (nav.next_violation(cursor).unwrap_or(cursor), false),
        Move::First => (0, false),
        Move::Last => (nav.last, false),
        Move::TogglePlay if !playing && cursor >= nav.last => (0, true),
        Move::TogglePlay => (cursor, !playing),
        Move::Tick if !playing || cursor >= nav.last => (cursor, false),
        Move::Tick => {
            let next = nav.next(cursor, how.all_events);
            let pause = next >= nav.last || (how.stop_at_beats && nav.is_beat(next));
            (next, !pause)
        }
    }
}

/// A key the player acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Move(Move),
    /// `f`: presenter mode on or off.
    Present,
    /// Escape: leave presenter mode, close the help.
    Leave,
    /// `?`: the list of keys.
    Help,
    /// `a`: every event, or only the narrated ones.
    AllEvents,
    /// `d`: the next picture (topology, space-time diagram, both).
    NextPicture,
}

/// The key a keydown means, given what has the focus (`tag` of the target, and its `type`
/// for an `INPUT`).
pub fn key_for(key: &str, tag: &str, input_type: &str) -> Option<Key> {
    let typing = match tag {
        "TEXTAREA" => true,
        "INPUT" => !matches!(input_type, "checkbox" | "radio" | "button" | "submit" | "range"),
        _ => false,
    };
    // A range slider keeps its own arrow keys (they step it, which seeks).
    let slider = tag == "INPUT" && input_type == "range";
    if typing && key != "Escape" {
        return None;
    }
    // A checkbox toggles with Space (Enter does not), so Space stays its own there.
    if key == " " && tag == "INPUT" && matches!(input_type, "checkbox" | "radio") {
        return None;
    }
    Some(match key {
        "ArrowRight" | "l" if !slider => Key::Move(Move::Forward),
        "ArrowLeft" | "j" if !slider => Key::Move(Move::Back),
        "n" | "PageDown" => Key::Move(Move::NextBeat),
        "p" | "PageUp" => Key::Move(Move::PrevBeat),
        "v" => Key::Move(Move::NextViolation),
        "Home" if !slider => Key::Move(Move::First),
        "End" if !slider => Key::Move(Move::Last),
        " " | "k" => Key::Move(Move::TogglePlay),
        "f" => Key::Present,
        "Escape" => Key::Leave,
        "?" => Key::Help,
        "a" => Key::AllEvents,
        "d" => Key::NextPicture,
        _ => return None,
    })
}

/// Whether a scrolling list that has the focus (the key list, marked `data-scroll-keys`) keeps
/// `key` for scrolling itself instead of the player acting on it: Page Down / Up, Home, End and
/// Space scroll the list in front of the room, not the run behind it.
pub fn scrolls_list(key: &str) -> bool {
    matches!(key, "PageDown" | "PageUp" | "Home" | "End" | " ")
}

/// Sends `on_tick` `speed` times a second while `playing`. The timer belongs to the effect, so
/// it is dropped the moment playback stops.
#[hook]
pub fn use_playback(playing: bool, speed: u32, on_tick: Callback<()>) {
    use_effect_with((playing, speed), move |(playing, speed)| {
        let interval = playing
            .then(|| gloo_timers::callback::Interval::new(1_000 / (*speed).max(1), move || on_tick.emit(())));
        move || drop(interval)
    });
}

/// Listens for the player's keys anywhere on the page.
#[hook]
pub fn use_player_keys(on_key: Callback<Key>) {
    use_effect_with((), move |_| {
        let listener = Closure::<dyn Fn(KeyboardEvent)>::new(move |e: KeyboardEvent| {
            if e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            let target = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok());
            let tag = target.as_ref().map(|el| el.tag_name()).unwrap_or_default();
            let input_type = target
                .as_ref()
                .and_then(|el| el.get_attribute("type"))
                .unwrap_or_default();
            let in_list = target
                .as_ref()
                .and_then(|el| el.closest("[data-scroll-keys]").ok().flatten())
                .is_some();
            if in_list && scrolls_list(&e.key()) {
                return;
            }
            if let Some(k) = key_for(&e.key(), &tag, &input_type) {
                e.prevent_default();
                on_key.emit(k);
            }
        });
        crate::listen::listen(web_sys::window(), "keydown", listener)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nav() -> Nav {
        Nav {
            narrated: vec![0, 2, 4, 5],
            beats: vec![2, 4],
            violations: vec![4],
            last: 5,
        }
    }

    #[test]
    fn moves_stay_within_the_run_and_playback_pauses_at_beats_and_the_end() {
        let n = nav();
        let how = Stepping::default();
        assert_eq!(apply(Move::Back, 0, &n, how, false), (0, false));
        assert_eq!(apply(Move::Forward, 5, &n, how, false), (5, false));
        assert_eq!(
            apply(Move::Forward, 0, &n, how, true),
            (2, false),
            "a manual step stops playback"
        );
        assert_eq!(
            apply(Move::TogglePlay, 5, &n, how, false),
            (0, true),
            "playing from the end starts over"
        );
        assert_eq!(
            apply(Move::Tick, 0, &n, how, true),
            (2, false),
            "playback pauses at a beat"
        );
        assert_eq!(
            apply(
                Move::Tick,
                0,
                &n,
                Stepping {
                    stop_at_beats: false,
                    ..how
                },
                true
            ),
            (2, true)
        );
        assert_eq!(apply(Move::Tick, 4, &n, how, true), (5, false), "and at the end");
        assert_eq!(
            apply(Move::Tick, 2, &n, how, false),
            (2, false),
            "a late tick after pause does nothing"
        );
        assert_eq!(apply(Move::NextBeat, 0, &n, how, false), (2, false));
        assert_eq!(apply(Move::PrevBeat, 4, &n, how, false), (2, false));
    }

    #[test]
    fn keys_never_misfire_on_the_focused_control() {
        assert_eq!(
            key_for(" ", "BUTTON", ""),
            Some(Key::Move(Move::TogglePlay)),
            "Space plays, not clicks again"
        );
        assert_eq!(
            key_for("ArrowRight", "SELECT", ""),
            Some(Key::Move(Move::Forward)),
            "← → never change a drop-down"
        );
        assert_eq!(key_for("PageDown", "BODY", ""), Some(Key::Move(Move::NextBeat)));
        assert_eq!(key_for("n", "INPUT", "text"), None, "typing is typing");
        assert_eq!(key_for("Escape", "INPUT", "number"), Some(Key::Leave));
        assert_eq!(
            key_for("ArrowRight", "INPUT", "range"),
            None,
            "the slider keeps its arrows"
        );
        assert_eq!(key_for(" ", "INPUT", "checkbox"), None, "Space ticks a checkbox");
        assert_eq!(key_for("?", "BODY", ""), Some(Key::Help));
        assert!(scrolls_list("PageDown") && scrolls_list("End") && scrolls_list(" "));
        assert!(
            !scrolls_list("Escape") && !scrolls_list("n") && !scrolls_list("ArrowRight"),
            "Escape closes the list, n and → still move the run"
        );
    }
}
