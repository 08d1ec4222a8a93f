//! coordlab in the browser: a scenario library and a player for simulator traces.
//! All protocol logic lives in `coordlab-sim`; this crate renders traces and dispatches
//! commands (step, seek, inject a fault, change a parameter).
//!
//! The site's Content Security Policy (`style-src 'self'`) refuses `style` attributes, so an
//! element positioned from data (a timeline mark, an event-log row, a message in flight) gets
//! its declarations as the `style` *property* — `~style={…}` in `html!`, which Yew assigns
//! through the CSSOM (`el.style = …`, i.e. `style.cssText`), which the policy allows. Never
//! write `style={…}`: the end-to-end tests fail on the violation it causes.

// The trace bundle (`#/trace`) shows loaded files only, and the choosing bundle (`#/choose`, the
// throughput chart) a page and a chart: the simulation-facing parts the other
// bundles share (running a scenario, the topology, the notices) go unused there.
#![cfg_attr(
    not(any(feature = "player", feature = "embed", feature = "compare")),
    allow(dead_code)
)]

// The browser's allocator: talc instead of the standard library's dlmalloc, which is
// larger in every bundle's download.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[cfg(feature = "compare")]
mod compare_state;
mod components;
#[cfg(all(test, feature = "embed", feature = "player"))]
mod doc_links;
#[cfg(feature = "embed")]
mod embed_api;
#[cfg(all(test, feature = "embed", feature = "player"))]
mod heading_slug;
#[cfg(feature = "embed")]
mod search_worker;
// The player only writes embed links (the Embed dialog); the embed bundles read them.
#[cfg_attr(not(feature = "embed"), allow(dead_code))]
mod embed_route;
mod glossary;
mod listen;
// Read in the trace bundle (`#/lesson`); the unit tests and the fuzzer read it everywhere.
#[cfg(any(feature = "lesson", test))]
#[cfg_attr(not(feature = "lesson"), allow(dead_code))]
mod lesson;
mod nav;
// Links carry the picture everywhere; only the player and the embed switch it.
#[cfg_attr(not(any(feature = "player", feature = "embed")), allow(dead_code))]
mod picture;
// The embed shares the player's reducer, and with it what Escape closes.
#[cfg(any(feature = "player", feature = "compare", feature = "embed"))]
#[cfg_attr(not(any(feature = "player", feature = "compare")), allow(dead_code))]
mod presenter;
// The course's progress: web/lessons.js records it as the learner walks the course, the
// library shows and resets it.
#[cfg(any(feature = "library", test))]
mod progress;
#[cfg_attr(not(feature = "player"), allow(dead_code))]
mod route;
#[cfg(all(test, feature = "embed", feature = "compare"))]
mod route_fuzz;
mod same_trace;
// An embed uses the player's reducer for a part of what it can do.
#[cfg(any(feature = "player", feature = "embed"))]
#[cfg_attr(not(feature = "player"), allow(dead_code))]
mod state;
#[cfg(feature = "trace")]
mod trace_view_state;
mod transport;

#[cfg(feature = "choosing")]
use components::choose::ChoosePage;
#[cfg(feature = "compare")]
use components::compare_view::CompareView;
#[cfg(feature = "embed")]
use components::embed_view::EmbedView;
#[cfg(feature = "lesson")]
use components::lesson_page::LessonPage;
#[cfg(feature = "library")]
use components::library::Library;
#[cfg(feature = "player")]
use components::player::PlayerView;
#[cfg(feature = "choosing")]
use components::throughput_chart::ThroughputChart;
#[cfg(feature = "trace")]
use components::trace_viewer::TraceViewer;
use route::{Parsed, Route};
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

fn current_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

#[function_component(App)]
fn app() -> Html {
    let parsed = use_state(|| route::parse(&current_hash()));
    {
        let parsed = parsed.clone();
        use_effect_with((), move |_| {
            let listener = Closure::<dyn Fn()>::new(move || parsed.set(route::parse(&current_hash())));
            listen::listen(web_sys::window(), "hashchange", listener)
        });
    }
    // The trace and choosing bundles read nothing from a link that a notice would report.
    #[cfg_attr(
        not(any(
            feature = "library",
            feature = "player",
            feature = "compare",
            feature = "embed"
        )),
        allow(unused_variables)
    )]
    let Parsed { route, notices } = (*parsed).clone();
    // An embed is the run alone: no site header around it.
    match route {
        #[cfg(feature = "embed")]
        Route::Embed(embed) if route::runnable_here(&embed.play.scenario) => {
            let key = route::format(&Route::Embed(embed.clone()));
            return html! { <main id="main"><EmbedView key={key} route={embed} notices={notices} /></main> };
        }
        Route::Embed(_) => return html! { <main id="main">{ loading() }</main> },
        #[cfg(feature = "embed")]
        Route::BadEmbed => return html! { <main id="main">{ bad_embed(&notices) }</main> },
        _ => {}
    }
    html! {
        <>
            <header class="site-header">
                <a class="brand" href="#/">{ "coordlab" }</a>
                <span class="tagline">{ "see distributed coordination fail — and why the fix works" }</span>
            </header>
            <main id="main">
                { match route {
                    #[cfg(feature = "library")]
                    Route::Library => html! { <Library notices={notices} /> },
                    #[cfg(not(feature = "library"))]
                    Route::Library => loading(),
                    #[cfg(feature = "library")]
                    Route::Glossary => glossary::page(),
                    #[cfg(not(feature = "library"))]
                    Route::Glossary => loading(),
                    #[cfg(feature = "player")]
                    Route::Play(play) if route::runnable_here(&play.scenario) => {
                        let key = play.scenario.clone();
                        html! { <PlayerView key={key} route={play} notices={notices} /> }
                    }
                    Route::Play(_) => loading(),
                    #[cfg(feature = "compare")]
                    Route::Compare(compare) => html! { <CompareView route={compare} notices={notices} /> },
                    #[cfg(not(feature = "compare"))]
                    Route::Compare(_) => loading(),
                    #[cfg(feature = "trace")]
                    Route::Trace => html! { <TraceViewer /> },
                    #[cfg(not(feature = "trace"))]
                    Route::Trace => loading(),
                    #[cfg(feature = "lesson")]
                    Route::Lesson => html! { <LessonPage /> },
                    #[cfg(not(feature = "lesson"))]
                    Route::Lesson => loading(),
                    #[cfg(feature = "choosing")]
                    Route::Choose => html! { <ChoosePage /> },
                    #[cfg(feature = "choosing")]
                    Route::Throughput => html! { <ThroughputChart /> },
                    #[cfg(not(feature = "choosing"))]
                    Route::Choose | Route::Throughput => loading(),
                    Route::Embed(_) => loading(),
                    #[cfg(feature = "embed")]
                    Route::BadEmbed => loading(),
                } }
            </main>
        </>
    }
}

/// What shows for the moment between a link to another bundle's scenario and the loader
/// fetching that bundle (web/loader.js reloads the page with it).
fn loading() -> Html {
    html! { <p class="loading" role="status">{ "Loading this chapter's simulations…" }</p> }
}

/// An embed link that names no scenario: the frame says what is wrong and where to look.
#[cfg(feature = "embed")]
fn bad_embed(notices: &[String]) -> Html {
    html! {
        <div class="notice" role="alert">
            <ul>{ for notices.iter().map(|n| html! { <li>{ n }</li> }) }</ul>
            <a href="#/" target="_blank" rel="noopener">{ "The scenario library ↗" }</a>
        </div>
    }
}

fn main() {
    // In the search's Web Worker (web/loader.js, web/search.js), which loads an embed bundle,
    // there is no page to draw.
    #[cfg(feature = "embed")]
    if web_sys::window().is_none() {
        return;
    }
    yew::Renderer::<App>::new().render();
}
