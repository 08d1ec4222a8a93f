//! The scenario player: owns the reducer, the playback timer, the keyboard shortcuts and the
//! URL sync, and lays out the views.

use super::controls::Controls;
use super::event_log::EventLog;
use super::fault_panel::FaultPanel;
use super::inspector::Inspector;
use super::narration::Narration;
use super::network_panel::{offers_network, NetworkPanel};
use super::notices::Notices;
use super::property_panel::PropertyPanel;
use super::topology::Topology;
use crate::route::{self, PlayRoute, Route};
use crate::state::{Action, Player};
use crate::transport::{use_transport_keys, Move};
use gloo_timers::callback::Interval;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct PlayerProps {
    pub route: PlayRoute,
    pub notices: Vec<String>,
}

#[function_component(PlayerView)]
pub fn player_view(props: &PlayerProps) -> Html {
    let initial = (props.route.clone(), props.notices.clone());
    let player = use_reducer(move || {
        Player::from_route(&initial.0, initial.1.clone()).expect("the router only opens known scenarios")
    });
    let dispatch = player.dispatcher();

    // The URL changed underneath us (back button, a pasted link).
    {
        let dispatch = dispatch.clone();
        use_effect_with(
            (props.route.clone(), props.notices.clone()),
            move |(route, notices)| {
                dispatch.dispatch(Action::Load(route.clone(), notices.clone()));
            },
        );
    }

    // Keep the URL a permalink of what is on screen.
    use_effect_with(player.route(), |route| {
        let hash = route::format(&Route::Play(route.clone()));
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
        }
    });

    // Playback timer, owned by the effect so it is dropped when playback stops.
    {
        let dispatch = dispatch.clone();
        use_effect_with((player.playing, player.speed), move |(playing, speed)| {
            let interval = playing.then(|| {
                let period_ms = 1_000 / (*speed).max(1);
                Interval::new(period_ms, move || {
                    dispatch.dispatch(Action::Transport(Move::Tick))
                })
            });
            move || drop(interval)
        });
    }

    {
        let dispatch = dispatch.clone();
        use_transport_keys(Callback::from(move |m| dispatch.dispatch(Action::Transport(m))));
    }

    let entry = &player.trace.entries[player.cursor];
    let snapshot = entry.snapshot.clone().expect("the player records full snapshots");
    let on_dismiss = {
        let dispatch = dispatch.clone();
        Callback::from(move |_| dispatch.dispatch(Action::DismissNotices))
    };
    html! {
        <div class="player">
            <Notices notices={player.notices.clone()} on_dismiss={on_dismiss} />
            <div class="player-head">
                <h1>{ player.info.title }</h1>
                <p class="summary">{ player.info.summary }</p>
            </div>
            <Controls player={std::rc::Rc::new((*player).clone())} dispatch={dispatch.clone()} />
            <div class="stage">
                <div class="stage-main">
                    <Topology trace={player.trace.clone()} cursor={player.cursor} />
                    <Narration trace={player.trace.clone()} cursor={player.cursor} />
                    <FaultPanel trace={player.trace.clone()} snapshot={snapshot.clone()} actions={player.actions.clone()} dispatch={dispatch.clone()} />
                    if offers_network(&player.trace) {
                        <NetworkPanel trace={player.trace.clone()} snapshot={snapshot.clone()} dispatch={dispatch.clone()} />
                    }
                </div>
                <aside class="stage-side">
                    <PropertyPanel trace={player.trace.clone()} cursor={player.cursor} dispatch={dispatch.clone()} />
                    <Inspector snapshot={snapshot} />
                    <EventLog trace={player.trace.clone()} cursor={player.cursor} dispatch={dispatch} />
                </aside>
            </div>
        </div>
    }
}
