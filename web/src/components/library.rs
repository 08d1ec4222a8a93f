//! The scenario library, grouped by the curriculum's chapters.

use super::notices::{notices, NoticesProps};
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
            <p class="glossary-link"><a href="#/glossary">{ "Glossary: every term the scenarios use, in one line each →" }</a></p>
            <p class="glossary-link"><a href="#/choose">{ "Choosing a design: a few questions, a recommendation, and the rules of thumb →" }</a></p>
            <p class="glossary-link"><a href="#/trace">{ "Open a trace file: step through a run saved with --format jsonl, or a history of your own →" }</a></p>
            { for CHAPTERS.iter().filter_map(|chapter| {
                let here: Vec<_> = scenarios.iter().filter(|s| s.chapter == chapter.number).collect();
                if here.is_empty() {
                    return None;
                }
                Some(html! {
                    <section class="chapter" aria-labelledby={format!("chapter-{}", chapter.number)}>
                        <h2 id={format!("chapter-{}", chapter.number)}>
                            <span class="chapter-number">{ format!("Chapter {}", chapter.number) }</span>
                            { chapter.title }
                        </h2>
                        <ul class="cards">
                            { for here.iter().map(|s| html! {
                                <li class="card">
                                    <a href={format!("#/play/{}", s.id)}>
                                        <h3>{ s.title }</h3>
                                        <p class="sections">{ format!("curriculum {}", s.sections) }</p>
                                        <p>{ s.summary }</p>
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
