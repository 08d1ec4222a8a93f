//! `#/trace`: open a `--format jsonl` trace — from `coordlab run`, or any history written in
//! that schema — and step through it read-only: the space-time diagram, the narration and the
//! verdicts. The file is read in the tab; nothing is sent anywhere.

use super::narration::Narration;
use super::spacetime::SpaceTime;
use super::transport_buttons::{transport_buttons, TransportButtonsProps};
use crate::trace_view_state::{TraceAction, TraceView, SPEED};
use crate::transport::{use_playback, use_player_keys, Key, Move};
use coordlab_sim::kernel::time::format_instant;
use coordlab_sim::trace_file::MAX_BYTES;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DragEvent, File, HtmlInputElement};
use yew::prelude::*;

/// Reads `file` as text and hands it to the reducer, or says why it cannot.
fn read(file: File, dispatch: UseReducerDispatcher<TraceView>) {
    let name = file.name();
    if file.size() > MAX_BYTES as f64 {
        dispatch.dispatch(TraceAction::Refuse(format!(
            "{name} is larger than the {} MiB a trace file may be.",
            MAX_BYTES / (1024 * 1024)
        )));
        return;
    }
    yew::platform::spawn_local(async move {
        match JsFuture::from(file.text()).await.ok().and_then(|v| v.as_string()) {
            Some(text) => dispatch.dispatch(TraceAction::Open(name, text)),
            None => dispatch.dispatch(TraceAction::Refuse(format!("{name} could not be read as text."))),
        }
    });
}

#[function_component(TraceViewer)]
pub fn trace_viewer() -> Html {
    let view = use_reducer(TraceView::default);
    let dispatch = view.dispatcher();
    {
        let d = dispatch.clone();
        use_playback(
            view.playing,
            SPEED,
            Callback::from(move |()| d.dispatch(TraceAction::Transport(Move::Tick))),
        );
    }
    {
        let d = dispatch.clone();
        use_player_keys(Callback::from(move |k| match k {
            Key::Move(m) => d.dispatch(TraceAction::Transport(m)),
            Key::AllEvents => d.dispatch(TraceAction::ToggleAllEvents),
            _ => {}
        }));
    }
    let dragging = use_state_eq(|| false);
    let on_pick = {
        let d = dispatch.clone();
        Callback::from(move |e: Event| {
            let input = e.target_unchecked_into::<HtmlInputElement>();
            if let Some(file) = input.files().and_then(|f| f.get(0)) {
                read(file, d.clone());
            }
            // Choosing the same file again (after editing it) reads it again.
            input.set_value("");
        })
    };
    let on_drop = {
        let (d, dragging) = (dispatch.clone(), dragging.clone());
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(false);
            if let Some(file) = e.data_transfer().and_then(|t| t.files()).and_then(|f| f.get(0)) {
                read(file, d.clone());
            }
        })
    };
    let on_drag_over = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(true);
        })
    };
    let on_drag_leave = {
        let dragging = dragging.clone();
        Callback::from(move |_: DragEvent| dragging.set(false))
    };
    let shown = view.loaded.as_ref().map(|(trace, nav, name)| {
        let cursor = view.cursor;
        let entry = &trace.entries[cursor];
        let on_move = {
            let d = dispatch.clone();
            Callback::from(move |m: Move| d.dispatch(TraceAction::Transport(m)))
        };
        html! {
            <section class="trace-shown" aria-label="The trace">
                <h2>{ format!("{} · seed {}", trace.scenario, trace.seed) }<span class="trace-file">{ format!(" — {name}, read-only") }</span></h2>
                <div class="transport" role="group" aria-label="Playback">
                    { transport_buttons(&TransportButtonsProps { cursor, last: view.last(), playing: view.playing, on_move }) }
                    <span class="where">
                        <span class="step-count">{ format!("Step {cursor} of {}", view.last()) }</span>
                        <span class="sim-time">{ format!(" · t = {}", format_instant(entry.time_us)) }</span>
                        if !nav.beats.is_empty() {
                            <span class="beat-count">{ format!(" · beat {}/{}", nav.beat_at_or_before(cursor).map_or(0, |i| i + 1), nav.beats.len()) }</span>
                        }
                    </span>
                </div>
                <div class="trace-stage">
                    <SpaceTime trace={trace.clone()} cursor={cursor} axis={view.axis}
                        on_seek={{ let d = dispatch.clone(); Callback::from(move |i| d.dispatch(TraceAction::Seek(i))) }}
                        on_axis={{ let d = dispatch.clone(); Callback::from(move |a| d.dispatch(TraceAction::SetAxis(a))) }}
                        export_name={format!("coordlab-{}-step-{cursor}", trace.scenario)} />
                    <div class="story">
                        <Narration trace={trace.clone()} cursor={cursor} />
                        if !trace.properties.is_empty() {
                            <ul class="verdicts" aria-label="Properties, as the file states them">
                                { for trace.properties.iter().map(|p| html! {
                                    <li class={if p.verdict.as_str() == "violated" { "chip violated" } else { "chip holding" }}>
                                        { format!("{} {}", p.name, p.verdict.as_str()) }
                                    </li>
                                }) }
                            </ul>
                        }
                    </div>
                </div>
            </section>
        }
    });
    html! {
        <div class="trace-viewer">
            <h1>{ "Open a trace" }</h1>
            <p class="lead">
                { "A trace from " }<code>{ "coordlab run <scenario> --format jsonl" }</code>
                { ", or any history written in that schema (docs/cli.md in coordlab's source describes it), drawn as a space-time diagram you can step through. The file is read in this tab; nothing is uploaded." }
            </p>
            <label class={super::class_list("drop-zone", &[("dragging", *dragging)])}
                ondrop={on_drop} ondragover={on_drag_over} ondragleave={on_drag_leave}>
                <span>{ "Choose a .jsonl trace file, or drop one here" }</span>
                <input type="file" id="trace-file" accept=".jsonl,.ndjson,.json,.txt,application/x-ndjson" onchange={on_pick} />
            </label>
            if let Some(error) = &view.error {
                <div class="notice trace-error" role="alert"><p>{ error }</p></div>
            }
            { for shown }
        </div>
    }
}
