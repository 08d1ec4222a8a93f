//! The transport: first, previous beat, back, play, forward, next beat, last; the speed; and
//! whether stepping takes every event or only the narrated ones. Each button says its key.

use super::transport_buttons::{transport_buttons, TransportButtonsProps};
use crate::state::{Action, Player, SPEEDS};
use crate::transport::Move;
use coordlab_sim::kernel::time::format_instant;
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

pub struct TransportBarProps {
    pub player: Rc<Player>,
    pub dispatch: UseReducerDispatcher<Player>,
}

pub fn transport_bar(props: &TransportBarProps) -> Html {
    let p = &props.player;
    let d = &props.dispatch;
    let on_move = {
        let d = d.clone();
        Callback::from(move |m: Move| d.dispatch(Action::Transport(m)))
    };
    html! {
        <div class="transport" role="group" aria-label="Playback">
            { transport_buttons(&TransportButtonsProps { cursor: p.cursor, last: p.last(), playing: p.playing, on_move }) }
            <span class="where">
                <span class="step-count">{ format!("Step {} of {}", p.cursor, p.last()) }</span>
                <span class="sim-time">{ format!(" · t = {}", format_instant(p.trace.entries[p.cursor].time_us)) }</span>
                if !p.nav.beats.is_empty() {
                    <span class="beat-count">{ format!(" · beat {}/{}", p.nav.beat_at_or_before(p.cursor).map_or(0, |i| i + 1), p.nav.beats.len()) }</span>
                }
            </span>
        </div>
    }
}

pub struct PositionProps {
    pub player: Rc<Player>,
    pub dispatch: UseReducerDispatcher<Player>,
}

/// How the run plays: its speed, and every event or only the narrated ones.
pub fn position(props: &PositionProps) -> Html {
    let p = &props.player;
    let d = &props.dispatch;
    let on_speed = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            d.dispatch(Action::SetSpeed(v.parse().unwrap_or(0)));
        })
    };
    let on_all = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            d.dispatch(Action::SetAllEvents(
                e.target_unchecked_into::<HtmlInputElement>().checked(),
            ))
        })
    };
    html! {
        <span class="playback-options">
            <label class="speed">
                { "Speed " }
                <select onchange={on_speed}>
                    { for SPEEDS.iter().map(|s| html! {
                        <option value={s.to_string()} selected={*s == p.speed}>{ format!("{s}/s") }</option>
                    }) }
                </select>
            </label>
            <label class="all-events" title="Also step through heartbeats and acks (a)">
                <input type="checkbox" checked={p.stepping.all_events} onchange={on_all} />
                { " All events" }
            </label>
        </span>
    }
}

/// Presenter mode and the list of keys: the switches of the whole page.
pub fn mode_buttons(props: &PositionProps) -> Html {
    let p = &props.player;
    let act = |make: fn() -> Action| {
        let d = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(make()))
    };
    html! {
        <span class="mode-buttons">
            <button class="present" onclick={act(|| Action::TogglePresent)} title="Presenter mode (f)">
                if p.presenting { { "Leave presenter mode" } } else { { "▣" }<span class="word">{ " Present" }</span> }
            </button>
            <button id="help-button" class="help-button" onclick={{
                let d = props.dispatch.clone();
                Callback::from(move |_| {
                    d.dispatch(Action::ToggleHelp);
                    crate::components::help::settle_focus(true);
                })
            }} title="Keyboard keys (?)">{ "?" }<span class="word">{ " Keys" }</span></button>
            if !p.presenting {
                <button id="embed-button" class="embed-button" title="Put this run in a documentation page"
                    onclick={{
                        let d = props.dispatch.clone();
                        Callback::from(move |_| {
                            d.dispatch(Action::Embed(true));
                            crate::components::embed_dialog::focus_soon("embed-title");
                        })
                    }}>{ "</>" }<span class="word">{ " Embed" }</span></button>
            }
        </span>
    }
}
