//! The timeline: a slider over the run with the beats as labelled ticks (each one a button
//! that goes there), faults and broken properties as marks, and the unsafe window as a band.

use super::transport_bar::{position, PositionProps};
use crate::same_trace::SameTrace;
use crate::state::{Action, Player};
use std::rc::Rc;
use web_sys::HtmlInputElement;
use yew::prelude::*;

pub struct TimelineProps {
    pub player: Rc<Player>,
    pub dispatch: UseReducerDispatcher<Player>,
}

/// `left: x%` for step `seq` of `last`, in tenths of a percent (integers only: no float
/// formatting in the bundle).
fn at(seq: u64, last: u64) -> String {
    let permille = seq * 1000 / last.max(1);
    format!("left: {}.{}%", permille / 10, permille % 10)
}

pub fn timeline(props: &TimelineProps) -> Html {
    let p = &props.player;
    let d = &props.dispatch;
    let last = p.last() as u64;
    let on_seek = {
        let d = d.clone();
        Callback::from(move |e: InputEvent| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value();
            if let Ok(i) = v.parse::<usize>() {
                d.dispatch(Action::Seek(i));
            }
        })
    };
    let entry = &p.trace.entries[p.cursor];
    let lefts = crate::nav::tick_lefts(
        &p.trace
            .reached_beats()
            .map(|(seq, _)| u64::from(seq) * 1000 / last.max(1))
            .collect::<Vec<_>>(),
    );
    let beats = p
        .trace
        .reached_beats()
        .zip(lefts)
        .enumerate()
        .map(|(i, ((seq, b), left))| {
            let d = d.clone();
            let here = seq as usize <= p.cursor;
            let current = p.nav.beat_at_or_before(p.cursor) == Some(i);
            html! {
                <button class={super::class_list("tick", &[("past", here), ("current", current)])}
                    ~style={left} title={format!("Beat {}: {} (step {seq})", i + 1, b.title)}
                    onclick={Callback::from(move |_| d.dispatch(Action::Seek(seq as usize)))}>
                    <span class="tick-no">{ i + 1 }</span>
                    <span class="visually-hidden">{ format!(" Go to beat {}: {}", i + 1, b.title) }</span>
                </button>
            }
        });
    html! {
        <div class="timeline">
            <div class="slider-row">
                <input id="timeline" type="range" min="0" max={p.last().to_string()} value={p.cursor.to_string()}
                    oninput={on_seek} aria-label="Timeline"
                    aria-valuetext={format!("step {} of {}: {}", p.cursor, p.last(), entry.text)} />
                { position(&PositionProps { player: p.clone(), dispatch: d.clone() }) }
            </div>
            <div class="marks">
                <Marks trace={p.trace.clone()} />
                if !p.nav.beats.is_empty() {
                    <span role="group" aria-label="Beats">{ for beats }</span>
                }
            </div>
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct MarksProps {
    trace: SameTrace,
}

/// Faults, broken properties and unsafe windows along the slider. They depend on the run
/// only, so a step does not redraw them (a component with the trace as its one prop; the
/// trace compares by identity).
#[function_component(Marks)]
fn marks(props: &MarksProps) -> Html {
    let last = props.trace.entries.len().saturating_sub(1) as u64;
    let marks = props.trace.entries.iter().filter_map(|e| {
        if !e.violations.is_empty() {
            Some(html! { <span class="mark violation" ~style={at(u64::from(e.seq), last)} title={format!("step {}: {} violated", e.seq, e.violations.join(", "))}>{ "!" }</span> })
        } else if e.fault.is_some() {
            Some(html! { <span class="mark fault" ~style={at(u64::from(e.seq), last)} title={format!("step {}: {}", e.seq, e.text)}>{ "⚡" }</span> })
        } else {
            None
        }
    });
    // Bands over runs of steps where the world raises a warning (the unsafe window).
    let mut bands = Vec::new();
    let mut start: Option<(u32, String)> = None;
    for e in &props.trace.entries {
        let warning = e.highlight.clone();
        match (warning, &start) {
            (Some(text), None) => start = Some((e.seq, text)),
            (None, Some((s, text))) => {
                bands.push((*s, e.seq.saturating_sub(1), text.clone()));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((s, text)) = start {
        bands.push((s, last as u32, text));
    }
    let pct = |seq: u32| u64::from(seq) * 1000 / last.max(1);
    let bands = bands.into_iter().map(|(a, b, text)| {
        let (l, r) = (pct(a), pct(b).max(pct(a) + 4));
        let style = format!("left: {}.{}%; width: {}.{}%", l / 10, l % 10, (r - l) / 10, (r - l) % 10);
        html! { <span class="band unsafe" ~style={style} title={format!("steps {a}–{b}: {text}")}>{ format!("⚠ {text}") }</span> }
    });
    html! { <span aria-hidden="true">{ for bands }{ for marks }</span> }
}
