//! The story so far: the beat the run has reached (its title and what it means), the
//! narration of the step on screen, a question for the room at a beat that asks one, and the
//! properties as a strip that turns red when one breaks.

use super::narration::Narration;
use crate::state::{Action, Player};
use coordlab_sim::properties::{PropertyKind, PropertyReport};
use std::rc::Rc;
use yew::prelude::*;

pub struct StoryProps {
    pub player: Rc<Player>,
    pub dispatch: UseReducerDispatcher<Player>,
}

/// A property at step `cursor`: holding (✓), broken (✗) or not yet reached (…).
pub fn verdict_at(p: &PropertyReport, cursor: u32) -> (&'static str, &'static str) {
    match (p.kind, p.first_violation_seq, p.satisfied_seq) {
        (PropertyKind::Always, Some(s), _) if s <= cursor => ("violated", "✗"),
        (PropertyKind::Always, _, _) => ("holding", "✓"),
        (PropertyKind::Eventually, _, Some(s)) if s <= cursor => ("holding", "✓"),
        (PropertyKind::Eventually, Some(s), None) if s <= cursor => ("violated", "✗"),
        (PropertyKind::Eventually, _, _) => ("pending", "…"),
    }
}

/// More properties than this fold their holding chips into one on a short screen.
const FOLD_OVER: usize = 3;

pub fn story(props: &StoryProps) -> Html {
    let p = &props.player;
    let d = &props.dispatch;
    let cursor = p.cursor as u32;
    let beat = p
        .nav
        .beat_at_or_before(p.cursor)
        .and_then(|i| p.trace.reached_beats().nth(i).map(|(seq, b)| (i, seq, b)));
    let question = p.question().map(|(i, q)| {
        let answered = p.answered(i);
        let picked = p.picked.filter(|(b, _)| *b == i).map(|(_, a)| a);
        html! {
            <div class="question" role="group" aria-label="Question">
                <p class="prompt">{ &q.prompt }</p>
                <div class="answers">
                    { for q.answers.iter().enumerate().map(|(k, a)| {
                        let k = k as u8;
                        let d = d.clone();
                        let state = match (answered, k == q.correct, picked == Some(k)) {
                            (true, true, _) => Some("right"),
                            (true, false, true) => Some("wrong"),
                            _ => None,
                        };
                        html! {
                            <button class={super::class_list("answer", &[("right", state == Some("right")), ("wrong", state == Some("wrong"))])} disabled={answered}
                                onclick={Callback::from(move |_| d.dispatch(Action::Pick(i, k)))}>
                                { a }
                                if state == Some("right") { <span>{ " ✓" }</span> }
                                if state == Some("wrong") { <span>{ " ✗" }</span> }
                            </button>
                        }
                    }) }
                </div>
                if answered {
                    <p class="why" role="status">{ &q.why }</p>
                } else if p.presenting {
                    <p class="hint">{ "Ask the room; the next step shows the answer." }</p>
                } else {
                    <p class="hint">{ "Pick an answer, then step on to see." }</p>
                }
            </div>
        }
    });
    let strip = p.trace.properties.iter().map(|prop| {
        let (state, icon) = verdict_at(prop, cursor);
        let d = d.clone();
        let broken = prop.first_violation_seq.filter(|s| *s <= cursor && prop.kind == PropertyKind::Always);
        let title = format!("{} — {}", prop.name, prop.description);
        html! {
            <li class={format!("chip {state}")} data-chip={prop.name.clone()} title={title}>
                if let Some(s) = broken {
                    <button onclick={Callback::from(move |_| d.dispatch(Action::Seek(s as usize)))}>
                        <span aria-hidden="true">{ icon }</span>{ format!(" {}", prop.name) }
                        <span class="broke-at">{ format!(" — broke at step {s}") }</span>
                    </button>
                } else {
                    <span aria-hidden="true">{ icon }</span>
                    { format!(" {}", prop.name) }
                    <span class="visually-hidden">{ match state { "holding" => " holds", "pending" => " not yet", _ => " violated" } }</span>
                }
            </li>
        }
    });
    // On a short screen (a projector at 150%) a long strip of green chips would push the story
    // out of view: there the holding ones fold into one chip (CSS shows it only then), and the
    // broken and pending ones keep their own.
    let holding: Vec<&str> = p
        .trace
        .properties
        .iter()
        .filter(|prop| verdict_at(prop, cursor).0 == "holding")
        .map(|prop| prop.name.as_str())
        .collect();
    let many = p.trace.properties.len() > FOLD_OVER;
    let folded = (many && !holding.is_empty()).then(|| {
        html! {
            <li class="chip holding holds-summary" title={holding.join(", ")} aria-hidden="true">
                { format!("✓ {} hold", holding.len()) }
            </li>
        }
    });
    // In presenter mode a beat's own step shows the beat alone (its text is the narration a
    // room needs); between beats the step's narration shows under the beat's title.
    let at_beat = beat.is_some_and(|(_, seq, _)| seq == cursor);
    let narrate = !(p.presenting && at_beat);
    html! {
        <aside class={super::class_list("story", &[("between-beats", !at_beat)])} aria-label="The story so far">
            if let Some((i, seq, b)) = beat {
                <div class={super::class_list("beat", &[("now", seq == cursor)])}>
                    <p class="beat-no">{ format!("Beat {} of {}", i + 1, p.nav.beats.len()) }</p>
                    <h2 class="beat-title">{ &b.title }</h2>
                    <p class="beat-text">{ &b.text }</p>
                </div>
            } else if !p.nav.beats.is_empty() {
                <div class="beat">
                    <p class="beat-no">{ "Before the first beat" }</p>
                    <h2 class="beat-title">{ p.info.title }</h2>
                    <p class="beat-text">{ "Press n (or Page Down) for the first beat, → to step." }</p>
                </div>
            }
            { for question }
            if narrate {
                <Narration trace={p.trace.clone()} cursor={p.cursor} />
            }
            <ul class={super::class_list("property-strip", &[("many", many)])} aria-label="Properties">{ for strip }{ for folded }</ul>
        </aside>
    }
}
