//! Transport (first, back, play/pause, forward, last), the timeline, speed, seed and the
//! scenario's parameters. Native buttons and inputs only, so everything works by keyboard.

use crate::state::{Action, Player, SPEEDS};
use crate::transport::Move;
use coordlab_sim::kernel::time::format_time;
use coordlab_sim::scenarios::ParamKind;
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ControlsProps {
    pub player: Rc<Player>,
    pub dispatch: UseReducerDispatcher<Player>,
}

#[function_component(Controls)]
pub fn controls(props: &ControlsProps) -> Html {
    let p = &props.player;
    let d = &props.dispatch;
    let send = |make: fn() -> Action| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(make()))
    };
    let on_seek = {
        let d = d.clone();
        Callback::from(move |e: InputEvent| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value();
            if let Ok(i) = v.parse::<usize>() {
                d.dispatch(Action::Seek(i));
            }
        })
    };
    let on_speed = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            d.dispatch(Action::SetSpeed(v.parse().unwrap_or(0)));
        })
    };
    let seed_error = use_state(|| None::<String>);
    let on_seed = {
        let d = d.clone();
        let seed_error = seed_error.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value();
            match v.trim().parse::<u64>() {
                Ok(seed) => {
                    seed_error.set(None);
                    d.dispatch(Action::SetSeed(seed));
                }
                Err(_) => seed_error.set(Some(format!(
                    "“{v}” is not a seed: use a whole number from 0 to 18446744073709551615."
                ))),
            }
        })
    };
    let next_seed = {
        let d = d.clone();
        let seed = p.seed;
        Callback::from(move |_: MouseEvent| d.dispatch(Action::SetSeed(seed.wrapping_add(1))))
    };
    let entry = &p.trace.entries[p.cursor];
    let at_end = p.cursor >= p.last();
    html! {
        <div class="controls">
            <div class="transport" role="group" aria-label="Playback">
                <button onclick={send(|| Action::Transport(Move::First))} disabled={p.cursor == 0} aria-label="Restart from the first step" title="First step (Home)">{ "|◀ First" }</button>
                <button onclick={send(|| Action::Transport(Move::Back))} disabled={p.cursor == 0} aria-label="Step back" title="Step back (←)">{ "◀ Back" }</button>
                <button class="play" onclick={send(|| Action::Transport(Move::TogglePlay))} aria-label={if p.playing { "Pause" } else { "Play" }} title="Play / pause (Space)">
                    { if p.playing { "‖ Pause" } else { "▶ Play" } }
                </button>
                <button onclick={send(|| Action::Transport(Move::Forward))} disabled={at_end} aria-label="Step forward" title="Step forward (→)">{ "Step ▶" }</button>
                <button onclick={send(|| Action::Transport(Move::Last))} disabled={at_end} aria-label="Jump to the last step" title="Last step (End)">{ "Last ▶|" }</button>
                <label class="speed">
                    { "Speed " }
                    <select onchange={on_speed} aria-label="Playback speed">
                        { for SPEEDS.iter().map(|s| html! {
                            <option value={s.to_string()} selected={*s == p.speed}>{ format!("{s} steps/s") }</option>
                        }) }
                    </select>
                </label>
            </div>
            <div class="timeline">
                <label for="timeline" class="step-label">
                    <span class="step-count">{ format!("Step {} of {}", p.cursor, p.last()) }</span>
                    <span class="sim-time">{ format!(" · t = {}", format_time(entry.time_us)) }</span>
                </label>
                <input id="timeline" type="range" min="0" max={p.last().to_string()} value={p.cursor.to_string()}
                    oninput={on_seek} aria-valuetext={format!("step {} of {}: {}", p.cursor, p.last(), entry.text)} />
                <TimelineMarks player={p.clone()} />
            </div>
            <div class="settings" role="group" aria-label="Run settings">
                { for p.info.params.iter().map(|spec| {
                    let key = spec.key.to_string();
                    let d = d.clone();
                    let current = p.params.get(spec.key).cloned().unwrap_or_default();
                    match &spec.kind {
                        ParamKind::Choice { options } => {
                            let onchange = Callback::from(move |e: Event| {
                                let v = e.target_unchecked_into::<HtmlSelectElement>().value();
                                d.dispatch(Action::SetParam(key.clone(), v));
                            });
                            html! {
                                <label title={spec.help}>
                                    { format!("{} ", spec.label) }
                                    <select name={spec.key} onchange={onchange}>
                                        { for options.iter().map(|o| html! {
                                            <option value={o.value} selected={o.value == current}>{ o.label }</option>
                                        }) }
                                    </select>
                                </label>
                            }
                        }
                        ParamKind::Int { min, max, unit } => {
                            let onchange = Callback::from(move |e: Event| {
                                let v = e.target_unchecked_into::<HtmlInputElement>().value();
                                d.dispatch(Action::SetParam(key.clone(), v));
                            });
                            html! {
                                <label title={spec.help}>
                                    { if unit.is_empty() { format!("{} ", spec.label) } else { format!("{} ({unit}) ", spec.label) } }
                                    <input type="number" name={spec.key} min={min.to_string()} max={max.to_string()} value={current} onchange={onchange} />
                                </label>
                            }
                        }
                    }
                }) }
                <label title="The seed decides every latency and delay; same seed, same run.">
                    { "Seed " }
                    <input class="seed" type="text" inputmode="numeric" name="seed" value={p.seed.to_string()} onchange={on_seed} />
                </label>
                <button onclick={next_seed} title="Try the next seed">{ "Next seed" }</button>
                if let Some(err) = (*seed_error).clone() {
                    <span class="field-error" role="alert">{ err }</span>
                }
            </div>
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct MarksProps {
    player: Rc<Player>,
}

/// Ticks under the timeline for faults and property violations, so the moments that matter
/// can be found at a glance.
#[function_component(TimelineMarks)]
fn timeline_marks(props: &MarksProps) -> Html {
    let p = &props.player;
    let last = p.last().max(1) as u64;
    let marks = p.trace.entries.iter().filter_map(|e| {
        // Tenths of a percent in integers: no float formatting in the bundle.
        let permille = u64::from(e.seq) * 1000 / last;
        let left = format!("left: {}.{}%", permille / 10, permille % 10);
        if !e.violations.is_empty() {
            Some(html! { <span class="mark violation" style={left} title={format!("step {}: {} violated", e.seq, e.violations.join(", "))}>{ "!" }</span> })
        } else if e.fault.is_some() {
            Some(html! { <span class="mark fault" style={left} title={format!("step {}: {}", e.seq, e.text)}>{ "⚡" }</span> })
        } else {
            None
        }
    });
    // Bands over runs of steps where the world raises a warning (the unsafe window).
    let mut bands = Vec::new();
    let mut start: Option<(u32, String)> = None;
    let warning = |e: &coordlab_sim::trace::TraceEntry| e.snapshot.as_ref().and_then(|s| s.highlight.clone());
    for e in &p.trace.entries {
        match (warning(e), &start) {
            (Some(text), None) => start = Some((e.seq, text)),
            (None, Some((s, text))) => {
                bands.push((*s, e.seq.saturating_sub(1), text.clone()));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((s, text)) = start {
        bands.push((s, p.last() as u32, text));
    }
    let pct = |seq: u32| u64::from(seq) * 1000 / last;
    let bands = bands.into_iter().map(|(a, b, text)| {
        let (l, r) = (pct(a), pct(b).max(pct(a) + 4));
        let style = format!("left: {}.{}%; width: {}.{}%", l / 10, l % 10, (r - l) / 10, (r - l) % 10);
        html! { <span class="band unsafe" style={style} title={format!("steps {a}–{b}: {text}")}>{ format!("⚠ {text}") }</span> }
    });
    html! { <div class="marks" aria-hidden="true">{ for bands }{ for marks }</div> }
}
