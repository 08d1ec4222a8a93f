//! The scenario player: owns the reducer, the playback timer, the keys, presenter mode and
//! the URL sync, and lays out the views. The first screen holds what a room looks at — the
//! picture, the story so far (beat and narration) and the property strip — with the transport
//! under it; parameters, faults, the network, the state tables and the event log sit in tabs
//! below.

use super::beat_list::{beat_list, BeatListProps};
use super::embed_dialog::{embed_dialog, EmbedDialogProps};
use super::event_log::EventLog;
use super::fault_panel::FaultPanel;
use super::help::{has_focus, help, settle_focus, HelpProps};
use super::inspector::{inspector, InspectorProps};
use super::network_panel::{offers_network, NetworkPanel};
use super::notices::{notices, NoticesProps};
use super::property_panel::{property_panel, PropertyPanelProps};
use super::run_settings::RunSettings;
use super::spacetime::{picture_switch, PictureSwitchProps, SpaceTime};
use super::story::{story, StoryProps};
use super::timeline::{timeline, TimelineProps};
use super::topology::Topology;
use super::transport_bar::{mode_buttons, transport_bar, PositionProps, TransportBarProps};
use crate::route::{self, PlayRoute};
use crate::state::{Action, Player, Tab};
use crate::transport::{use_playback, use_player_keys, Key};
use std::rc::Rc;
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
        let hash = route::play_hash(route);
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
        }
    });

    {
        let dispatch = dispatch.clone();
        let tick =
            Callback::from(move |()| dispatch.dispatch(Action::Transport(crate::transport::Move::Tick)));
        use_playback(player.playing, player.speed, tick);
    }

    // Presenter mode asks for full screen; the browser leaving it (its own Escape, its
    // control) closes the key list if it is open, else presenter mode.
    {
        let dispatch = dispatch.clone();
        crate::presenter::use_full_screen(
            player.presenting,
            Callback::from(move |()| {
                let had_focus = has_focus();
                dispatch.dispatch(Action::FullScreenEnded);
                settle_focus(had_focus);
            }),
        );
    }

    {
        // Registered once: each key becomes an action the reducer applies to the state it has.
        let dispatch = dispatch.clone();
        use_player_keys(Callback::from(move |k: Key| match k {
            Key::Move(m) => dispatch.dispatch(Action::Transport(m)),
            Key::Present => dispatch.dispatch(Action::TogglePresent),
            Key::Leave => {
                let had_focus = has_focus();
                dispatch.dispatch(Action::Leave);
                settle_focus(had_focus);
            }
            Key::Help => {
                dispatch.dispatch(Action::ToggleHelp);
                settle_focus(true);
            }
            Key::AllEvents => dispatch.dispatch(Action::ToggleAllEvents),
            Key::NextPicture => dispatch.dispatch(Action::NextPicture),
        }));
    }

    let p: Rc<Player> = Rc::new((*player).clone());
    let snapshot = p.snapshot();
    let on_dismiss = {
        let dispatch = dispatch.clone();
        Callback::from(move |_| dispatch.dispatch(Action::DismissNotices))
    };
    let tab_button = |tab: Tab, label: &'static str| {
        let d = dispatch.clone();
        let selected = p.tab == tab;
        html! {
            <button role="tab" aria-selected={if selected { "true" } else { "false" }}
                class={super::class_list("tab", &[("selected", selected)])}
                onclick={Callback::from(move |_| d.dispatch(Action::Tab(tab)))}>{ label }</button>
        }
    };
    let network = offers_network(&p.trace);
    let diagram = html! {
        <SpaceTime trace={p.trace.clone()} cursor={p.cursor} axis={p.view.axis}
            on_seek={{ let d = dispatch.clone(); Callback::from(move |i| d.dispatch(Action::Seek(i))) }}
            on_axis={{ let d = dispatch.clone(); Callback::from(move |a| d.dispatch(Action::SetAxis(a))) }}
            export_name={format!("coordlab-{}-step-{}", p.info.id, p.cursor)}
            fitted=true presenting={p.presenting} />
    };
    let tools = match p.tab {
        Tab::Story => {
            html! { { beat_list(&BeatListProps { player: p.clone(), dispatch: dispatch.clone() }) } }
        }
        Tab::Run => html! {
            <RunSettings info={p.info.clone()} params={p.params.clone()} seed={p.seed} dispatch={dispatch.clone()} />
        },
        Tab::Faults => html! {
            <FaultPanel trace={p.trace.clone()} snapshot={snapshot.clone()} actions={p.actions.clone()} dispatch={dispatch.clone()} />
        },
        Tab::Network if network => html! {
            <NetworkPanel trace={p.trace.clone()} snapshot={snapshot.clone()} dispatch={dispatch.clone()} />
        },
        Tab::Network => html! { <p class="hint">{ "This scenario offers no network faults." }</p> },
        Tab::State => html! {
            <div class="state-tab">
                { property_panel(&PropertyPanelProps { trace: p.trace.clone(), cursor: p.cursor, dispatch: dispatch.clone() }) }
                { inspector(&InspectorProps { trace: p.trace.clone(), snapshot: snapshot.clone() }) }
            </div>
        },
        Tab::Events => html! {
            <EventLog trace={p.trace.clone()} nav={p.nav.clone()} cursor={p.cursor}
                all_events={p.stepping.all_events} dispatch={dispatch.clone()} />
        },
    };
    html! {
        <div class={super::class_list("player", &[("presenting", p.presenting)])}>
            // The first screen: the heading, the picture with the story, and the transport. Its
            // height is the window's, so the transport stays put at every step and beat.
            <div class="first-screen">
            { notices(&NoticesProps { notices: p.notices.clone(), on_dismiss: Some(on_dismiss) }) }
            <div class="player-head">
                <h1>{ p.info.title }</h1>
                { picture_switch(&PictureSwitchProps { view: p.view, on_pick: {
                    let d = dispatch.clone();
                    Callback::from(move |pic| d.dispatch(Action::SetPicture(pic)))
                } }) }
                { mode_buttons(&PositionProps { player: p.clone(), dispatch: dispatch.clone() }) }
                <p class="summary">{ p.info.summary }</p>
            </div>
            <div class={format!("stage picture-{}", p.view.picture.code())}>
                <div class="pictures">
                    if p.view.picture.shows_topology() {
                        <Topology trace={p.trace.clone()} cursor={p.cursor} snapshot={snapshot.clone()} phone=true />
                    }
                    if p.view.picture.shows_diagram() {
                        { diagram.clone() }
                    }
                </div>
                { story(&StoryProps { player: p.clone(), dispatch: dispatch.clone() }) }
            </div>
            <div class="controls">
                { transport_bar(&TransportBarProps { player: p.clone(), dispatch: dispatch.clone() }) }
                { timeline(&TimelineProps { player: p.clone(), dispatch: dispatch.clone() }) }
            </div>
            </div>
            if !p.presenting {
                <section class="tools" aria-label="Tools">
                    <div class="tabs" role="tablist" aria-label="Tools">
                        { tab_button(Tab::Story, "Beats") }
                        { tab_button(Tab::Run, "Parameters") }
                        { tab_button(Tab::Faults, "Faults") }
                        if network {
                            { tab_button(Tab::Network, "Network") }
                        }
                        { tab_button(Tab::State, "State") }
                        { tab_button(Tab::Events, "Events") }
                    </div>
                    <div class="tab-panel" role="tabpanel">{ tools }</div>
                </section>
            }
            if p.help {
                { help(&HelpProps {
                    on_close: { let d = dispatch.clone(); Callback::from(move |()| d.dispatch(Action::Help(false))) },
                    pictures: true,
                }) }
            }
            if p.embedding && !p.presenting {
                { embed_dialog(&EmbedDialogProps { player: p.clone(), dispatch: dispatch.clone() }) }
            }
        </div>
    }
}
