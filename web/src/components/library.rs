//! The scenario library, grouped by the curriculum's chapters: the course's way in (Start
//! here, beside a moving picture of its first scenario), each chapter's introduction and
//! rules, and the learner's progress, which a button resets.

use super::notices::{notices, NoticesProps};
use crate::progress::{self, Progress};
use crate::route::{self, Route, DEFAULT_PAIR};
use coordlab_sim::scenarios::{self, catalog, CHAPTERS};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct LibraryProps {
    pub notices: Vec<String>,
}

#[function_component(Library)]
pub fn library(props: &LibraryProps) -> Html {
    let scenarios = catalog();
    let progress = use_state(progress::load);
    let course = scenarios::course();
    let (started, answered) = progress.tally(course.iter().map(|d| d.id));
    // Once begun, the button goes on from the first run whose question is still open.
    // The course is a lesson file (lessons/course.json, made from the scenarios' notes) walked
    // in presenter mode, one stop per run: `at` counts its stops from 1.
    let resume = course
        .iter()
        .position(|d| started == 0 || !progress.of(d.id).answered)
        .unwrap_or(0);
    let reset = {
        let progress = progress.clone();
        Callback::from(move |_| {
            progress::clear();
            progress.set(Progress::default());
        })
    };
    // The side-by-side card sits with the left scenario of the pair, if both exist.
    let compare_chapter = match (scenarios::find(DEFAULT_PAIR.0), scenarios::find(DEFAULT_PAIR.1)) {
        (Ok(left), Ok(_)) => left.info().chapter,
        _ => 0,
    };
    html! {
        <section class="library" aria-labelledby="library-title">
            { notices(&NoticesProps { notices: props.notices.clone(), on_dismiss: None }) }
            <h1 id="library-title">{ "Scenario library" }</h1>
            <p class="lead">
                { "Every scenario is a deterministic simulation: pick a seed, step forward and back, inject a crash or a pause at any step, and share the exact view as a link." }
            </p>
            <section class="start" aria-labelledby="start-title">
                <div class="start-text">
                    <h2 id="start-title">{ "New here? Take the course" }</h2>
                    <p>{ format!("Six chapters, {} runs, from two workers losing a debit to a lock service that survives its leader's crash. Each run states what it teaches and asks one question; Next (or n) takes you on.", course.len()) }</p>
                    <a class="start-here" href={format!("#/lesson?src=lessons/course.json&present=1&at={}", resume + 1)}>{ if started == 0 { "Start here →" } else { "Continue the course →" } }</a>
                    <p class="course-progress" role="status">
                        { format!("Your progress: {started} of {} runs begun, {answered} questions answered. It stays in this browser.", course.len()) }
                        if started > 0 {
                            { " " }<button class="reset-progress" onclick={reset}>{ "Reset progress" }</button>
                        }
                    </p>
                </div>
                // The poster: recorded from the first scenario, it holds the place until
                // web/start.js has put the run itself beside Start here (an embed, playing), and
                // stays for readers who prefer reduced motion or ask to save data.
                <img class="start-picture" src="start.svg" width="480" height="270"
                    alt="The first run: two workers both read a balance of ₹100, both write ₹70, and one debit is lost." />
            </section>
            <p class="glossary-link"><a href="#/glossary">{ "Glossary: every term the scenarios use, in one line each →" }</a></p>
            <p class="glossary-link"><a href="#/choose">{ "Choosing a design: a few questions, a recommendation, and the rules of thumb →" }</a></p>
            <p class="glossary-link"><a href="#/trace">{ "Open a trace file: step through a run saved with --format jsonl, or a history of your own →" }</a></p>
            <p class="glossary-link"><a href="docs/index.html">{ "Guides: learning, teaching, embedding a run, the command line →" }</a></p>
            { for CHAPTERS.iter().filter_map(|chapter| {
                let here: Vec<_> = scenarios.iter().filter(|s| s.chapter == chapter.number).collect();
                if here.is_empty() {
                    return None;
                }
                let (begun, done) = progress.tally(here.iter().map(|s| s.id));
                Some(html! {
                    <section class="chapter" aria-labelledby={format!("chapter-{}", chapter.number)}>
                        <h2 id={format!("chapter-{}", chapter.number)}>
                            <span class="chapter-number">{ format!("Chapter {}", chapter.number) }</span>
                            { chapter.title }
                        </h2>
                        <p class="chapter-progress">{ format!("{begun} of {} runs begun · {done} questions answered", here.len()) }</p>
                        <ul class="cards">
                            { for here.iter().map(|s| html! {
                                <li class="card">
                                    <a href={format!("#/play/{}", s.id)}>
                                        <h3>{ s.title }</h3>
                                        <p class="sections">{ format!("curriculum {}", s.sections) }</p>
                                        <p>{ s.summary }</p>
                                        { seen(progress.of(s.id)) }
                                        <span class="open">{ "Open →" }</span>
                                    </a>
                                </li>
                            }) }
                            if chapter.number == compare_chapter {
                                <li class="card compare-card">
                                    <a href={route::format(&Route::Compare(route::default_compare_route()))}>
                                        <h3>{ "Side by side: Redis failover vs the consensus lock" }</h3>
                                        <p class="sections">{ "two runs, one seed, the same fault clicks" }</p>
                                        <p>{ "The node that granted the lock crashes right after granting it. On the left Redis promotes a replica that never heard of the lock and hands it out again; on the right the grant was already on a majority, so the new leader still knows who holds it. Step both together." }</p>
                                        <span class="open">{ "Compare →" }</span>
                                    </a>
                                </li>
                            }
                        </ul>
                    </section>
                })
            }) }
        </section>
    }
}

/// A card's progress line: nothing until the learner has opened the run.
fn seen(p: progress::ScenarioProgress) -> Html {
    if !p.started() {
        return Html::default();
    }
    let answered = if p.answered {
        "question answered ✓"
    } else {
        "question not answered"
    };
    html! { <p class="seen">{ format!("{} of {} beats seen · {answered}", p.beats_seen(), p.beats) }</p> }
}
