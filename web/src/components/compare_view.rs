//! Side by side: two scenarios with the same seed and the same fault clicks, stepping
//! together in true-time order, so a room sees one failure and two outcomes.
//!
//! It has the player's keys and presenter mode (`f`, `present=1` in the link): then the page is
//! two columns, each a picture over its caption (the run's beat, or what just happened in it),
//! with one row of transport under both; the faults and the run's settings step aside. The
//! picture boxes get their size from the layout (style.css), never from the drawing, so a
//! renderer that draws to its box fills them.

use super::help::{has_focus, help, settle_focus, HelpProps};
use super::narration::Narration;
use super::notices::{notices, NoticesProps};
use super::topology::Topology;
use super::transport_buttons::{transport_buttons, TransportButtonsProps};
use crate::compare_state::{Compare, CompareAction, CompareRoute, Side};
use crate::route::{self, Route};
use crate::transport::{use_playback, use_player_keys, Key, Move};
use coordlab_sim::kernel::faults::{FaultKind, MAX_FAULT_MS};
use coordlab_sim::kernel::time::format_instant;
use coordlab_sim::properties::Verdict;
use coordlab_sim::trace::NodeStatus;
use coordlab_sim::Fault;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Playback speeds of the side-by-side view, in steps per second.
const SPEEDS: [u32; 5] = [1, 2, 4, 8, 16];
const DEFAULT_PAUSE_MS: u64 = 40_000;

#[derive(Properties, PartialEq)]
pub struct CompareProps {
    pub route: CompareRoute,
    pub notices: Vec<String>,
}

#[function_component(CompareView)]
pub fn compare_view(props: &CompareProps) -> Html {
    let initial = (props.route.clone(), props.notices.clone());
    let state = use_reducer(move || match Compare::from_route(&initial.0, initial.1.clone()) {
        Ok(c) => c,
        Err(e) => {
            // The router only opens known scenarios; should one still fail, show the default
            // pair with the reason rather than a blank page.
            let fallback = route::default_compare_route();
            let mut c = Compare::from_route(&fallback, vec![]).expect("the default pair runs");
            c.notices.push(format!(
                "These runs could not be opened ({e}); showing the default pair."
            ));
            c
        }
    });
    let dispatch = state.dispatcher();

    {
        let dispatch = dispatch.clone();
        use_effect_with(
            (props.route.clone(), props.notices.clone()),
            move |(route, notices)| {
                dispatch.dispatch(CompareAction::Load(route.clone(), notices.clone()));
            },
        );
    }
    use_effect_with(state.route(), |route| {
        let hash = route::format(&Route::Compare(route.clone()));
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
        }
    });
    {
        let dispatch = dispatch.clone();
        let tick = Callback::from(move |()| dispatch.dispatch(CompareAction::Transport(Move::Tick)));
        use_playback(state.playing, state.speed, tick);
    }
    {
        let dispatch = dispatch.clone();
        use_player_keys(Callback::from(move |k| match k {
            Key::Move(m) => dispatch.dispatch(CompareAction::Transport(m)),
            Key::AllEvents => dispatch.dispatch(CompareAction::ToggleAllEvents),
            Key::Present => dispatch.dispatch(CompareAction::TogglePresent),
            Key::Leave => {
                let had_focus = has_focus();
                dispatch.dispatch(CompareAction::Leave);
                settle_focus(had_focus);
            }
            Key::Help => {
                dispatch.dispatch(CompareAction::ToggleHelp);
                settle_focus(true);
            }
            // The space-time diagram is the player's: beside the topology it would cost this
            // bundle ~22 KiB gzipped, more than its download cap leaves.
            Key::NextPicture => {}
        }));
    }
    // Full screen as the player has it: asked for with presenter mode; the browser leaving it
    // closes the key list if it is open, else presenter mode.
    {
        let dispatch = dispatch.clone();
        crate::presenter::use_full_screen(
            state.presenting,
            Callback::from(move |()| {
                let had_focus = has_focus();
                dispatch.dispatch(CompareAction::FullScreenEnded);
                settle_focus(had_focus);
            }),
        );
    }

    let c = &*state;
    let (l, r) = c.at();
    let moved = c.moved();
    let on_dismiss = {
        let d = dispatch.clone();
        Callback::from(move |_| d.dispatch(CompareAction::DismissNotices))
    };
    let side = |left: bool| {
        let (s, at) = if left { (&c.left, l) } else { (&c.right, r) };
        side_view(&SideProps {
            side: s.clone(),
            cursor: at,
            moved: moved == Some(left),
            label: if left { "left" } else { "right" },
        })
    };
    html! {
        <div class={super::class_list("compare", &[("compare-presenting", c.presenting)])}>
            if !c.presenting {
                { notices(&NoticesProps { notices: c.notices.clone(), on_dismiss: Some(on_dismiss) }) }
                <div class="player-head">
                    <h1>{ format!("Side by side: {} · {}", c.left.info.title, c.right.info.title) }</h1>
                    { mode_buttons(c.presenting, &dispatch) }
                    <p class="summary">{ "The same seed and the same fault clicks go to both runs. Each step is the next event of whichever run has one first, so both columns always show the same moment." }</p>
                </div>
            }
            // The transport is over the runs on a page, under them in presenter mode (where the
            // screen is the pictures'): in the order it is seen and reached by Tab.
            if !c.presenting {
                <Transport state={state.clone()} dispatch={dispatch.clone()} />
            }
            <div class="compare-sides">
                { side(true) }
                { side(false) }
            </div>
            if c.presenting {
                <Transport state={state.clone()} dispatch={dispatch.clone()} />
            }
            if !c.presenting {
                { shared_faults(&SharedFaultsProps { state: state.clone(), dispatch: dispatch.clone() }) }
            }
            if c.help {
                { help(&HelpProps {
                    on_close: { let d = dispatch.clone(); Callback::from(move |()| d.dispatch(CompareAction::Help(false))) },
                    pictures: false,
                }) }
            }
        </div>
    }
}

/// Presenter mode and the list of keys, as the player has them.
fn mode_buttons(presenting: bool, d: &UseReducerDispatcher<Compare>) -> Html {
    let act = |make: fn() -> CompareAction| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(make()))
    };
    html! {
        <span class="mode-buttons">
            <button class="present" onclick={act(|| CompareAction::TogglePresent)} title="Presenter mode (f)">
                if presenting {
                    { "✕" }<span class="word">{ " Leave presenter mode" }</span>
                } else {
                    { "▣" }<span class="word">{ " Present" }</span>
                }
            </button>
            <button id="help-button" class="help-button" title="Keyboard keys (?)" onclick={{
                let d = d.clone();
                Callback::from(move |_| {
                    d.dispatch(CompareAction::ToggleHelp);
                    settle_focus(true);
                })
            }}>
                { "?" }<span class="word">{ " Keys" }</span>
            </button>
        </span>
    }
}

#[derive(Properties, PartialEq)]
struct TransportProps {
    state: UseReducerHandle<Compare>,
    dispatch: UseReducerDispatcher<Compare>,
}

#[function_component(Transport)]
fn transport(props: &TransportProps) -> Html {
    let c = &*props.state;
    let d = &props.dispatch;
    let send = |make: fn() -> CompareAction| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(make()))
    };
    let on_seek = {
        let d = d.clone();
        Callback::from(move |e: InputEvent| {
            if let Ok(i) = e
                .target_unchecked_into::<HtmlInputElement>()
                .value()
                .parse::<usize>()
            {
                d.dispatch(CompareAction::Seek(i));
            }
        })
    };
    let seed_error = use_state(|| None::<String>);
    let on_seed = {
        let d = d.clone();
        let seed_error = seed_error.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value();
            match crate::route::parse_seed(&v) {
                Ok(seed) => {
                    seed_error.set(None);
                    d.dispatch(CompareAction::SetSeed(seed));
                }
                Err(message) => seed_error.set(Some(message)),
            }
        })
    };
    let on_move = {
        let d = d.clone();
        Callback::from(move |m: Move| d.dispatch(CompareAction::Transport(m)))
    };
    let on_speed = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<web_sys::HtmlSelectElement>().value();
            d.dispatch(CompareAction::SetSpeed(v.parse().unwrap_or(4)));
        })
    };
    let on_all = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            d.dispatch(CompareAction::SetAllEvents(
                e.target_unchecked_into::<HtmlInputElement>().checked(),
            ))
        })
    };
    html! {
        <div class="controls">
            <div class="transport" role="group" aria-label="Playback of both runs">
                { transport_buttons(&TransportButtonsProps { cursor: c.cursor, last: c.last(), playing: c.playing, on_move }) }
                <button class="next-violation" onclick={send(|| CompareAction::Transport(Move::NextViolation))}
                    disabled={c.nav.next_violation(c.cursor).is_none()} title="Next broken property (v)">
                    <span aria-hidden="true">{ "⚠" }</span><span class="label">{ " Next violation" }</span>
                </button>
                <span class="where position" aria-live="off">
                    { format!("step {} of {} · t = {}", c.cursor, c.last(), format_instant(c.time_us())) }
                </span>
                if c.presenting {
                    { mode_buttons(true, d) }
                }
                <span class="transport-options">
                    <label class="speed">
                        { "Speed " }
                        <select onchange={on_speed}>
                            { for SPEEDS.iter().map(|s| html! {
                                <option value={s.to_string()} selected={*s == c.speed}>{ format!("{s}/s") }</option>
                            }) }
                        </select>
                    </label>
                    <label class="all-events" title="Also step through heartbeats and acks (a)">
                        <input type="checkbox" checked={c.stepping.all_events} onchange={on_all} />
                        { " All events" }
                    </label>
                    <label class="seed">
                        { "Seed " }
                        <input type="text" inputmode="numeric" value={c.seed.to_string()} onchange={on_seed} aria-label="Seed for both runs" />
                    </label>
                </span>
            </div>
            if let Some(err) = (*seed_error).clone() {
                <p class="field-error" role="alert">{ err }</p>
            }
            <div class="timeline slider-row">
                <input type="range" min="0" max={c.last().to_string()} value={c.cursor.to_string()}
                    oninput={on_seek} aria-label="Shared step" class="scrub" />
            </div>
            <div class="marks">
                <span role="group" aria-label="Beats of both runs">{ for beat_ticks(c, d) }</span>
            </div>
        </div>
    }
}

/// The beats of both runs as labelled ticks on the shared timeline, each a button that goes
/// there; a tick names its run ("Redis failover: Two holders").
fn beat_ticks(c: &Compare, d: &UseReducerDispatcher<Compare>) -> Vec<Html> {
    let last = c.last().max(1) as u64;
    let lefts = crate::nav::tick_lefts(
        &c.nav
            .beats
            .iter()
            .map(|&i| i as u64 * 1000 / last)
            .collect::<Vec<_>>(),
    );
    c.nav
        .beats
        .iter()
        .zip(lefts)
        .enumerate()
        .map(|(k, (&i, left))| {
            let (now, before) = (c.steps[i], c.steps[i.saturating_sub(1)]);
            let (side, entry) = if now.0 != before.0 { (&c.left, now.0) } else { (&c.right, now.1) };
            let seq = side.trace.entries[entry].seq;
            let title = side
                .trace
                .reached_beats()
                .find(|(s, _)| *s == seq)
                .map_or(String::new(), |(_, b)| format!("{}: {}", side.info.title, b.title));
            let d = d.clone();
            html! {
                <button class={super::class_list("tick", &[("past", i <= c.cursor), ("current", i == c.cursor)])}
                    ~style={left} title={title.clone()}
                    onclick={Callback::from(move |_| d.dispatch(CompareAction::Seek(i)))}>
                    <span class="tick-no">{ k + 1 }</span>
                    <span class="visually-hidden">{ format!(" Go to beat {}: {title}", k + 1) }</span>
                </button>
            }
        })
        .collect()
}

struct SharedFaultsProps {
    state: UseReducerHandle<Compare>,
    dispatch: UseReducerDispatcher<Compare>,
}

/// Crash, restart and pause for every node both runs have under the same name and id.
fn shared_faults(props: &SharedFaultsProps) -> Html {
    let c = &*props.state;
    let (l, r) = c.at();
    let status = |side: &Side, at: usize, id: usize| side.states.at(at).nodes.get(id).map(|n| n.status);
    let inject = |fault: Fault| {
        let d = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(CompareAction::Inject(fault.clone())))
    };
    let shared: Vec<_> = c
        .left
        .trace
        .nodes
        .iter()
        .filter(|n| {
            c.right
                .trace
                .nodes
                .get(n.id.index())
                .is_some_and(|m| m.name == n.name && !n.faults.is_empty())
        })
        .collect();
    let clear = {
        let d = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(CompareAction::ClearFaults))
    };
    let injected = c.left.actions.len().max(c.right.actions.len());
    html! {
        <section class="fault-panel compare-faults" aria-labelledby="compare-faults-title">
            <h2 id="compare-faults-title">{ "Faults — each click goes to both runs, right after the step on screen" }</h2>
            <ul>
                { for shared.iter().map(|n| {
                    let i = n.id.index();
                    let crashed = status(&c.left, l, i) == Some(NodeStatus::Crashed)
                        && status(&c.right, r, i) == Some(NodeStatus::Crashed);
                    let up = status(&c.left, l, i) != Some(NodeStatus::Crashed)
                        && status(&c.right, r, i) != Some(NodeStatus::Crashed);
                    let allows = |k: FaultKind| n.faults.contains(&k);
                    let pause_ms = DEFAULT_PAUSE_MS.min(MAX_FAULT_MS);
                    html! {
                        <li data-node={n.name.clone()}>
                            <span class="fault-node">{ &n.name }</span>
                            if allows(FaultKind::Crash) {
                                <button onclick={inject(Fault::Crash { node: n.id })} disabled={!up}
                                    aria-label={format!("Crash {} in both runs", n.name)}>{ "Crash" }</button>
                            }
                            if allows(FaultKind::Restart) {
                                <button onclick={inject(Fault::Restart { node: n.id })} disabled={!crashed}
                                    aria-label={format!("Restart {} in both runs", n.name)}>{ "Restart" }</button>
                            }
                            if allows(FaultKind::Pause) {
                                <button onclick={inject(Fault::Pause { node: n.id, duration_ms: pause_ms })} disabled={!up}
                                    aria-label={format!("Pause {} s ({}) in both runs", pause_ms / 1_000, n.name)}>
                                    { format!("Pause {} s", pause_ms / 1_000) }
                                </button>
                            }
                        </li>
                    }
                }) }
            </ul>
            if injected > 0 {
                <p class="injected">
                    { format!("{injected} fault(s) injected. ") }
                    <button onclick={clear} aria-label="Remove every injected fault from both runs">{ "Clear faults" }</button>
                </p>
            }
        </section>
    }
}

struct SideProps {
    side: Side,
    cursor: usize,
    moved: bool,
    label: &'static str,
}

fn side_view(props: &SideProps) -> Html {
    let trace = &props.side.trace;
    let entry = &trace.entries[props.cursor];
    let violated: Vec<&str> = trace
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Violated && p.first_violation_seq.is_some_and(|s| s <= entry.seq))
        .map(|p| p.name.as_str())
        .collect();
    let at_end = props.cursor + 1 >= trace.entries.len();
    let beats: Vec<_> = trace.reached_beats().collect();
    let beat = beats
        .iter()
        .enumerate()
        .rev()
        .find(|(_, (seq, _))| *seq <= entry.seq);
    let holders = trace.outcome.get("max_concurrent_holders").cloned();
    let now = beat.is_some_and(|(_, (seq, _))| *seq == entry.seq);
    let title = props.side.info.title;
    html! {
        <section class={super::class_list("compare-side", &[("moved", props.moved), ("between-beats", !now)])}
            data-side={props.label} aria-label={title}>
            <div class="side-head">
                <h2>{ title }</h2>
                <p class="side-status" aria-live="polite">
                    if violated.is_empty() {
                        <span class="verdict ok">{ "✓ every property holds so far" }</span>
                    } else {
                        <span class="verdict bad">{ format!("✗ violated: {}", violated.join(", ")) }</span>
                    }
                    if at_end {
                        if let Some(h) = holders {
                            <span class="holders">{ format!(" · at most {h} holder(s) at once") }</span>
                        }
                    }
                </p>
            </div>
            <div class="side-pictures">
                <Topology trace={trace.clone()} cursor={props.cursor} snapshot={props.side.states.at(props.cursor)} phone=true />
            </div>
            <div class="side-caption">
                if let Some((i, (seq, b))) = beat {
                    <div class={super::class_list("beat", &[("now", *seq == entry.seq)])}>
                        <p class="beat-no">{ format!("Beat {} of {}", i + 1, beats.len()) }</p>
                        <h3 class="beat-title">{ &b.title }</h3>
                        <p class="beat-text">{ &b.text }</p>
                    </div>
                }
                <Narration trace={trace.clone()} cursor={props.cursor}
                    label={format!("What is happening in {title}")} />
            </div>
        </section>
    }
}
