//! The scenario library, grouped by the curriculum's chapters.

use super::notices::Notices;
use coordlab_sim::scenarios::{catalog, CHAPTERS};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct LibraryProps {
    pub notices: Vec<String>,
}

#[function_component(Library)]
pub fn library(props: &LibraryProps) -> Html {
    let scenarios = catalog();
    html! {
        <section class="library" aria-labelledby="library-title">
            <Notices notices={props.notices.clone()} />
            <h1 id="library-title">{ "Scenario library" }</h1>
            <p class="lead">
                { "Every scenario is a deterministic simulation: pick a seed, step forward and back, inject a crash or a pause at any step, and share the exact view as a link." }
            </p>
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
                        </ul>
                    </section>
                })
            }) }
        </section>
    }
}
