//! `#/lesson?src=lessons/locks-101.json` (a file of the same site, fetched relative to the
//! page), or a lesson file chosen or dropped here: the lesson is read and checked
//! (crate::lesson), its stops listed, and "Present" hands it to web/lessons.js, which walks the
//! stops in the player in presenter mode. Nothing is sent anywhere.

use crate::lesson::{self, Lesson};
use crate::route::decode;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DragEvent, File, HtmlInputElement};
use yew::prelude::*;

#[derive(Clone, PartialEq)]
enum Shown {
    Nothing,
    Reading(String),
    /// Where the lesson came from, and what is wrong with it.
    Problems(String, Vec<String>),
    Ready(Lesson),
}

/// `src=`, `present=1` and `at=N` of the lesson link's query: the file, and the stop to open
/// at once in presenter mode (`present=1` alone: the first; `at=N`: the N-th, counted from 1,
/// as the course's "Continue" link does), if any.
pub fn source_of(query: &str) -> (Option<String>, Option<usize>) {
    let mut src = None;
    let mut present = false;
    let mut at = 0;
    for item in query.split('&') {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        match decode(key).as_str() {
            "src" if !value.is_empty() => src = Some(decode(value)),
            "present" => present = value != "0",
            "at" => at = value.parse::<usize>().map_or(0, |n| n.saturating_sub(1)),
            _ => {}
        }
    }
    (src, present.then_some(at))
}

fn shown_from(name: String, text: &str) -> Shown {
    match lesson::parse(text) {
        Ok(lesson) => Shown::Ready(lesson),
        Err(problems) => Shown::Problems(name, problems),
    }
}

/// The address of `src` relative to the page, if it is on the page's own origin.
fn same_origin(src: &str) -> Result<String, String> {
    let location = web_sys::window().map(|w| w.location()).ok_or("no window")?;
    let (href, origin) = (
        location.href().unwrap_or_default(),
        location.origin().unwrap_or_default(),
    );
    match web_sys::Url::new_with_base(src, &href) {
        Ok(url) if url.origin() == origin => Ok(url.href()),
        Ok(url) => Err(format!(
            "“{src}” is on {}, not on this site ({origin}): a lesson opens from this site only. Download the file and open it below instead.",
            url.origin()
        )),
        Err(_) => Err(format!("“{src}” is not an address.")),
    }
}

async fn fetch_text(url: &str) -> Result<String, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|_| "it could not be fetched (offline?)".to_string())?
        .unchecked_into();
    if !response.ok() {
        return Err(format!("the site answered {}", response.status()));
    }
    let text = response.text().map_err(|_| "it could not be read".to_string())?;
    JsFuture::from(text)
        .await
        .ok()
        .and_then(|t| t.as_string())
        .ok_or_else(|| "it could not be read as text".to_string())
}

/// Hands the lesson to web/lessons.js (sessionStorage: this tab only) and opens stop `at`
/// (the last if there are fewer).
fn present(lesson: &Lesson, at: usize) {
    let Some(window) = web_sys::window() else { return };
    let at = at.min(lesson.stops.len().saturating_sub(1));
    if let Ok(Some(store)) = window.session_storage() {
        let _ = store.set_item("coordlab-lesson", &lesson.for_player());
        let _ = store.set_item("coordlab-lesson-at", &at.to_string());
        let _ = store.set_item("coordlab-lesson-enter", "1");
    }
    let _ = window.location().set_hash(&lesson.stops[at].hash());
}

fn read_file(file: File, shown: UseStateHandle<Shown>) {
    let name = file.name();
    if file.size() > lesson::MAX_BYTES as f64 {
        let why = format!(
            "The file is larger than the {} KiB a lesson file may be.",
            lesson::MAX_BYTES / 1024
        );
        return shown.set(Shown::Problems(name, vec![why]));
    }
    yew::platform::spawn_local(async move {
        match JsFuture::from(file.text()).await.ok().and_then(|v| v.as_string()) {
            Some(text) => shown.set(shown_from(name, &text)),
            None => shown.set(Shown::Problems(
                name,
                vec!["It could not be read as text.".into()],
            )),
        }
    });
}

#[function_component(LessonPage)]
pub fn lesson_page() -> Html {
    let shown = use_state(|| Shown::Nothing);
    {
        let shown = shown.clone();
        use_effect_with((), move |_| {
            let hash = web_sys::window()
                .and_then(|w| w.location().hash().ok())
                .unwrap_or_default();
            let (src, start) = source_of(hash.split_once('?').map_or("", |(_, q)| q));
            if let Some(src) = src {
                match same_origin(&src) {
                    Err(why) => shown.set(Shown::Problems(src, vec![why])),
                    Ok(url) => {
                        shown.set(Shown::Reading(src.clone()));
                        yew::platform::spawn_local(async move {
                            let next = match fetch_text(&url).await {
                                Ok(text) => shown_from(src, &text),
                                Err(why) => Shown::Problems(src.clone(), vec![format!("“{src}”: {why}.")]),
                            };
                            match (&next, start) {
                                (Shown::Ready(lesson), Some(at)) => present(lesson, at),
                                _ => shown.set(next),
                            }
                        });
                    }
                }
            }
        });
    }
    let on_pick = {
        let shown = shown.clone();
        Callback::from(move |e: Event| {
            let input = e.target_unchecked_into::<HtmlInputElement>();
            if let Some(file) = input.files().and_then(|f| f.get(0)) {
                read_file(file, shown.clone());
            }
            input.set_value("");
        })
    };
    let on_drop = {
        let shown = shown.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if let Some(file) = e.data_transfer().and_then(|t| t.files()).and_then(|f| f.get(0)) {
                read_file(file, shown.clone());
            }
        })
    };
    let body = match &*shown {
        Shown::Nothing => html! {},
        Shown::Reading(src) => html! { <p role="status">{ format!("Reading {src}…") }</p> },
        Shown::Problems(name, problems) => html! {
            <div class="notice" role="alert">
                <p>{ format!("The lesson {name} could not be opened:") }</p>
                <ul>{ for problems.iter().map(|p| html! { <li>{ p }</li> }) }</ul>
            </div>
        },
        Shown::Ready(lesson) => {
            let l = lesson.clone();
            html! {
                <>
                    <h2>{ &lesson.title }</h2>
                    <ol class="lesson-stops">
                        { for lesson.stops.iter().map(|s| {
                            let title = coordlab_sim::scenarios::find(&s.scenario).map(|d| d.info().title).unwrap_or_default();
                            html! { <li><strong>{ title }</strong>{ s.caption.as_ref().map(|c| format!(" — {c}")) }</li> }
                        }) }
                    </ol>
                    <button class="primary" autofocus=true onclick={Callback::from(move |_| present(&l, 0))}>
                        { "Present this lesson" }
                    </button>
                </>
            }
        }
    };
    html! {
        <section class="lesson-page" aria-labelledby="lesson-heading"
            ondragover={Callback::from(|e: DragEvent| e.prevent_default())} ondrop={on_drop}>
            <h1 id="lesson-heading">{ "Lesson" }</h1>
            { body }
            <p>
                <label>{ "Open a lesson file (or drop one on this page): " }
                    <input type="file" accept=".json,application/json" onchange={on_pick} />
                </label>
            </p>
            <p class="hint">{ "A lesson is a trainer's list of stops: scenarios with their settings, captions and questions. n and p (or a clicker's PageDown and PageUp) walk it in presenter mode." }</p>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lesson_link_names_its_file() {
        assert_eq!(
            source_of("src=lessons%2Flocks-101.json&present=1"),
            (Some("lessons/locks-101.json".into()), Some(0))
        );
        assert_eq!(
            source_of("src=lessons/course.json&present=1&at=3"),
            (Some("lessons/course.json".into()), Some(2))
        );
        assert_eq!(source_of("src=x.json&at=3"), (Some("x.json".into()), None));
        assert_eq!(source_of(""), (None, None));
    }
}
