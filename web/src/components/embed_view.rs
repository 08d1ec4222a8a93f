//! An embed: one run in a documentation page's frame — the picture, the story on screen (its
//! beat and narration) and a small control bar, sized to the frame, nothing else of the site.
//! It plays only when the link says `autoplay=1` (and the reader has not asked for reduced
//! motion), pauses when scrolled out of view or when the tab is hidden, never moves the focus,
//! and talks to the page around it through postMessage (`embed_api`).

use super::narration::Narration;
use super::notices::{notices, NoticesProps};
use super::spacetime::SpaceTime;
use super::topology::Topology;
use super::transport_buttons::{transport_buttons, TransportButtonsProps};
use crate::embed_api::{self, Command, Fields, Target, Val};
use crate::embed_route::{Controls, EmbedRoute};
use crate::route::{self, Route};
use crate::state::{Action, Player};
use crate::transport::{use_playback, use_player_keys, Key, Move};
use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{HtmlInputElement, IntersectionObserver, IntersectionObserverEntry, MessageEvent};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct EmbedProps {
    pub route: EmbedRoute,
    pub notices: Vec<String>,
}

fn own_origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// The page around the frame, if there is one.
fn host() -> Option<web_sys::Window> {
    let w = web_sys::window()?;
    let parent = w.parent().ok()??;
    (!js_sys::Object::is(&parent, &w)).then_some(parent)
}

/// A message as a JavaScript object.
fn to_js(fields: &Fields) -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in fields {
        let v = match value {
            Val::Int(n) => JsValue::from_f64(*n as f64),
            Val::Text(t) => JsValue::from_str(t),
            Val::Bool(b) => JsValue::from_bool(*b),
            Val::List(items) => items.iter().map(to_js).collect::<js_sys::Array>().into(),
            Val::Other | Val::Missing => JsValue::NULL,
        };
        let _ = js_sys::Reflect::set(&object, &JsValue::from_str(key), &v);
    }
    object.into()
}

/// A field of a received message.
fn field_of(data: &JsValue, key: &str) -> Val {
    if !data.is_object() {
        return Val::Missing;
    }
    let v = js_sys::Reflect::get(data, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
    if v.is_undefined() {
        Val::Missing
    } else if let Some(t) = v.as_string() {
        Val::Text(t)
    } else if let Some(n) = v
        .as_f64()
        .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n < 9.0e15)
    {
        Val::Int(n as u64)
    } else {
        Val::Other
    }
}

/// Sends a message to the page around the frame; only a page of `origin` receives it.
fn post(message: &Fields, origin: &str) {
    if let Some(h) = host() {
        let _ = h.post_message(&to_js(message), origin);
    }
}

fn reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-reduced-motion: reduce)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// The player action a page's command stands for, or why the embed cannot follow it.
fn action_for(command: Command, p: &Player) -> Result<Action, String> {
    let (lo, hi) = p.bounds();
    let seek = |step: usize, what: String| {
        if (lo..=hi).contains(&step) {
            Ok(Action::Seek(step))
        } else {
            Err(format!("{what} is outside this embed's steps {lo}–{hi}"))
        }
    };
    Ok(match command {
        Command::Seek(Target::Step(s)) => return seek(s, format!("step {s}")),
        Command::Seek(Target::Beat(key)) => {
            return match p.trace.beats.iter().find(|b| b.key == key) {
                Some(b) => match b.seq {
                    Some(s) => seek(s as usize, format!("beat “{key}” (step {s})")),
                    None => Err(format!("beat “{key}” does not happen in this run")),
                },
                None => Err(format!("this scenario has no beat “{key}”")),
            }
        }
        Command::Play => Action::SetPlaying(true),
        Command::Pause => Action::SetPlaying(false),
        Command::NextBeat => Action::Transport(Move::NextBeat),
        Command::PrevBeat => Action::Transport(Move::PrevBeat),
        Command::Forward => Action::Transport(Move::Forward),
        Command::Back => Action::Transport(Move::Back),
    })
}

/// Marks the page as an embed (no site chrome, no scrolling) in the theme asked for.
#[hook]
fn use_frame_look(theme: &'static str) {
    use_effect_with(theme, |theme| {
        let root = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element());
        if let Some(r) = &root {
            let _ = r.class_list().add_1("embedded");
            let _ = r.set_attribute("data-theme", theme);
        }
        move || {
            if let Some(r) = root {
                let _ = r.class_list().remove_1("embedded");
                let _ = r.remove_attribute("data-theme");
            }
        }
    });
}

/// Pauses when the frame leaves the reader's view or the tab is hidden; starts playing the
/// first time it comes into view when `autoplay` is set.
#[hook]
fn use_pause_out_of_view(root: NodeRef, autoplay: bool, dispatch: UseReducerDispatcher<Player>) {
    use_effect_with((), move |_| {
        let pending = Rc::new(Cell::new(autoplay));
        let d = dispatch.clone();
        let on_view = Closure::<dyn Fn(js_sys::Array)>::new(move |entries: js_sys::Array| {
            let visible = entries
                .iter()
                .last()
                .and_then(|e| e.dyn_into::<IntersectionObserverEntry>().ok())
                .is_some_and(|e| e.is_intersecting());
            if !visible {
                d.dispatch(Action::SetPlaying(false));
            } else if pending.replace(false) {
                d.dispatch(Action::SetPlaying(true));
            }
        });
        let observer = IntersectionObserver::new(on_view.as_ref().unchecked_ref()).ok();
        if let (Some(o), Some(el)) = (&observer, root.cast::<web_sys::Element>()) {
            o.observe(&el);
        }
        let doc = web_sys::window().and_then(|w| w.document());
        let on_hidden = {
            let doc = doc.clone();
            Closure::<dyn Fn()>::new(move || {
                if doc.as_ref().is_some_and(|d| d.hidden()) {
                    dispatch.dispatch(Action::SetPlaying(false));
                }
            })
        };
        let stop_hidden = crate::listen::listen(doc, "visibilitychange", on_hidden);
        move || {
            if let Some(o) = observer {
                o.disconnect();
            }
            stop_hidden();
            drop(on_view);
        }
    });
}

/// Follows the commands of the page around the frame (from its own origin or the one the link
/// names); `latest` is the state on screen.
#[hook]
fn use_host_commands(
    latest: Rc<std::cell::RefCell<Option<Rc<Player>>>>,
    named: Option<String>,
    reply_to: String,
    dispatch: UseReducerDispatcher<Player>,
) {
    use_effect_with((), move |_| {
        let own = own_origin();
        let listener = Closure::<dyn Fn(MessageEvent)>::new(move |e: MessageEvent| {
            if !embed_api::allowed(&e.origin(), &own, named.as_deref()) {
                return;
            }
            let data = e.data();
            let answer = embed_api::parse_command(|k| field_of(&data, k)).and_then(|command| {
                let (Some(command), Some(p)) = (command, latest.borrow().clone()) else {
                    return Ok(());
                };
                action_for(command, &p).map(|a| dispatch.dispatch(a))
            });
            if let Err(why) = answer {
                post(&embed_api::error(&why), &reply_to);
            }
        });
        crate::listen::listen(web_sys::window(), "message", listener)
    });
}

#[function_component(EmbedView)]
pub fn embed_view(props: &EmbedProps) -> Html {
    let initial = (props.route.clone(), props.notices.clone());
    let player = use_reducer(move || {
        Player::for_embed(&initial.0, initial.1).expect("the router only opens known scenarios")
    });
    let dispatch = player.dispatcher();
    let p: Rc<Player> = Rc::new((*player).clone());
    let reply_to = props.route.origin.clone().unwrap_or_else(own_origin);
    let root = use_node_ref();

    use_frame_look(props.route.theme.name());
    {
        let dispatch = dispatch.clone();
        use_playback(
            p.playing,
            p.speed,
            Callback::from(move |()| dispatch.dispatch(Action::Transport(Move::Tick))),
        );
    }
    {
        // Only the transport keys, and only while the focus is inside the frame (the page
        // around it keeps its own). Space plays here instead of scrolling the page.
        let dispatch = dispatch.clone();
        use_player_keys(Callback::from(move |k: Key| {
            if let Key::Move(m) = k {
                dispatch.dispatch(Action::Transport(m))
            }
        }));
    }
    use_pause_out_of_view(
        root.clone(),
        props.route.autoplay && !reduced_motion(),
        dispatch.clone(),
    );
    let latest = use_mut_ref(|| None::<Rc<Player>>);
    *latest.borrow_mut() = Some(p.clone());
    use_host_commands(
        latest,
        props.route.origin.clone(),
        reply_to.clone(),
        dispatch.clone(),
    );
    {
        // Tell the page what is on screen: `ready` first, then every change of step or playback.
        let shown = use_mut_ref(|| None::<usize>);
        let p = p.clone();
        use_effect_with((p.cursor, p.playing), move |_| {
            let before = shown.replace(Some(p.cursor));
            if before.is_none() {
                post(&embed_api::ready(&p), &reply_to);
            }
            for m in embed_api::events(&p, before) {
                post(&m, &reply_to);
            }
        });
    }

    let (lo, hi) = p.bounds();
    let go = {
        let d = dispatch.clone();
        Callback::from(move |m: Move| d.dispatch(Action::Transport(m)))
    };
    let on_dismiss = {
        let d = dispatch.clone();
        Callback::from(move |_| d.dispatch(Action::DismissNotices))
    };
    let beat = p
        .nav
        .beat_at_or_before(p.cursor)
        .and_then(|i| p.trace.reached_beats().nth(i).map(|(seq, b)| (i, seq, b)));
    let open = route::format(&Route::Play(crate::route::PlayRoute {
        present: false,
        ..p.route()
    }));
    let snapshot = p.snapshot();
    let at_start = p.cursor <= lo;
    let at_end = p.cursor >= hi;
    let button = |m: Move,
                  class: &'static str,
                  arrow: &'static str,
                  word: &'static str,
                  key: &'static str,
                  off: bool| {
        let go = go.clone();
        html! {
            <button class={class} onclick={Callback::from(move |_| go.emit(m))} disabled={off} title={key}>
                <span aria-hidden="true">{ arrow }</span>{ word }
            </button>
        }
    };
    let controls = match props.route.controls {
        Controls::None => html! {},
        Controls::Min => html! {
            <>
                { button(Move::Back, "back", "◀", " Back", "Step back (←)", at_start) }
                <button class="play" onclick={go.reform(|_| Move::TogglePlay)} title="Play / pause (Space)">
                    <span aria-hidden="true">{ if p.playing { "‖ " } else { "▶ " } }</span>{ if p.playing { "Pause" } else { "Play" } }
                </button>
                { button(Move::Forward, "forward", "▶", " Step", "Step forward (→)", at_end) }
                { button(Move::NextBeat, "next-beat", "▶▶", " Beat", "Next beat (n)", at_end) }
            </>
        },
        Controls::Full => {
            let d = dispatch.clone();
            let on_slide = Callback::from(move |e: InputEvent| {
                if let Some(v) = e
                    .target_dyn_into::<HtmlInputElement>()
                    .and_then(|i| i.value().parse().ok())
                {
                    d.dispatch(Action::Seek(v));
                }
            });
            html! {
                <>
                    // The buttons see the range as the whole run: their "first" and "last" are its ends.
                    { transport_buttons(&TransportButtonsProps { cursor: p.cursor - lo, last: hi - lo, playing: p.playing, on_move: go.clone() }) }
                    <input type="range" class="embed-slider" aria-label="Step" min={lo.to_string()} max={hi.to_string()}
                        value={p.cursor.to_string()} oninput={on_slide} />
                </>
            }
        }
    };
    html! {
        <div class={format!("embed controls-{}", props.route.controls.name())} ref={root}>
            { notices(&NoticesProps { notices: p.notices.clone(), on_dismiss: Some(on_dismiss) }) }
            <div class={format!("embed-stage picture-{}", p.view.picture.code())}>
                if p.view.picture.shows_topology() {
                    <Topology trace={p.trace.clone()} cursor={p.cursor} snapshot={snapshot.clone()} min_text={11} />
                }
                if p.view.picture.shows_diagram() {
                    <SpaceTime trace={p.trace.clone()} cursor={p.cursor} axis={p.view.axis}
                        on_seek={{ let d = dispatch.clone(); Callback::from(move |i| d.dispatch(Action::Seek(i))) }}
                        on_axis={{ let d = dispatch.clone(); Callback::from(move |a| d.dispatch(Action::SetAxis(a))) }}
                        export_name={format!("coordlab-{}-step-{}", p.info.id, p.cursor)} />
                }
                // Scrolls when the frame is small: focusable, so the keyboard can scroll it too.
                <section class="embed-story" tabindex="0" aria-label={format!("{}: the story so far", p.info.title)}>
                    if let Some(h) = &snapshot.highlight {
                        <p class="unsafe-banner">{ format!("⚠ {h}") }</p>
                    }
                    if let Some((i, seq, b)) = beat {
                        <p class={super::class_list("embed-beat", &[("now", seq as usize == p.cursor)])}>
                            <span class="beat-no">{ format!("Beat {} of {}", i + 1, p.nav.beats.len()) }</span>
                            <strong>{ &b.title }</strong>
                        </p>
                    }
                    <Narration trace={p.trace.clone()} cursor={p.cursor} />
                </section>
            </div>
            <div class="embed-bar" role="group" aria-label="Playback">
                { controls }
                <a class="open-full" href={open} target="_blank" rel="noopener"
                    title="Open this run in the full coordlab player (new tab)">{ "coordlab ↗" }</a>
            </div>
        </div>
    }
}
