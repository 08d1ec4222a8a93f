//! The Embed dialog: what a documentation author pastes to show this run in a page — an iframe
//! snippet, a Markdown link and the plain embed URL, built from the beat on screen, each copied
//! with one click. By default the embed is locked to that beat (`from=` its key, `to=` the next
//! beat's); it can also run from that beat to the end, or be the whole run opening at the step
//! on screen. Choices are buttons, not drop-downs or radios, because the player's arrow keys
//! step the run wherever the focus is.

use crate::embed_route::{Bound, EmbedRoute, Span, SIZES};
use crate::route::{self, PlayRoute};
use crate::state::{Action, Player};
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

/// The part of the run the snippets show: the beats it starts and ends at, each as (its index
/// among the beats reached, its step).
pub struct Shown {
    /// `None`: the whole run.
    pub from: Option<(usize, u32)>,
    /// `None`: to the end of the run.
    pub to: Option<(usize, u32)>,
}

/// What the dialog's choice of span means at the step on screen: the beat on screen and the
/// next one. Before the first beat there is none, and the embed is the whole run.
pub fn shown(p: &Player) -> Shown {
    let beat = |i: usize| p.trace.reached_beats().nth(i).map(|(seq, _)| (i, seq));
    let here = p.nav.beat_at_or_before(p.cursor).and_then(beat);
    match (p.embed_span, here) {
        (Span::Whole, _) | (_, None) => Shown { from: None, to: None },
        (Span::FromBeat, from) => Shown { from, to: None },
        (Span::Beat, Some(from)) => {
            let to = beat(from.0 + 1);
            Shown { from: Some(from), to }
        }
    }
}

/// The embed of the run on screen: the same run, locked to the span chosen (by beat keys) and
/// starting at its first beat, or the whole run starting at the step on screen.
pub fn embed_route(p: &Player) -> EmbedRoute {
    let key = |i: usize| {
        p.trace
            .reached_beats()
            .nth(i)
            .map(|(_, b)| Bound::Beat(b.key.clone()))
    };
    let span = shown(p);
    let mut e = EmbedRoute::of(PlayRoute {
        present: false,
        // A locked embed opens at its first beat.
        step: if span.from.is_some() {
            None
        } else {
            (p.cursor > 0).then_some(p.cursor as u32)
        },
        ..p.route()
    });
    e.from = span.from.and_then(|(i, _)| key(i));
    e.to = span.to.and_then(|(i, _)| key(i));
    e
}

fn attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// The three things an author can paste: (iframe snippet of `size`, Markdown link, embed URL).
/// `base` is the page's address without its `#…`.
pub fn snippets(p: &Player, size: (u32, u32), base: &str) -> (String, String, String) {
    let url = format!("{base}{}", crate::embed_route::format(&embed_route(p)));
    // The full player has no range: its link opens where the embed starts.
    let start = shown(p).from.map_or(p.cursor as u32, |(_, step)| step);
    let full = format!(
        "{base}{}",
        route::play_hash(&PlayRoute {
            present: false,
            step: (start > 0).then_some(start),
            ..p.route()
        })
    );
    let (w, h) = size;
    let title = format!("{} — an interactive coordlab simulation", p.info.title);
    let iframe = format!(
        "<iframe src=\"{}\" width=\"{w}\" height=\"{h}\" title=\"{}\" loading=\"lazy\" style=\"border:1px solid #c9d1e0;border-radius:8px;max-width:100%\"></iframe>",
        attr(&url),
        attr(&title)
    );
    let markdown = format!("[{} — step through it in coordlab]({full})", p.info.title);
    (iframe, markdown, url)
}

/// Copies `text` (Clipboard API); if the browser refuses, selects it in the field `field_id` for
/// Ctrl+C. `report` says which happened.
fn copy(text: &str, field_id: &str, report: Callback<String>, what: &'static str) {
    let fallback = {
        let report = report.clone();
        let field_id = field_id.to_string();
        move || {
            if let Some(area) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id(&field_id))
                .and_then(|e| e.dyn_into::<HtmlTextAreaElement>().ok())
            {
                area.select();
            }
            report.emit(format!(
                "The browser did not allow copying: the {what} is selected, press Ctrl+C (⌘C on a Mac)."
            ));
        }
    };
    // `navigator.clipboard` is missing on pages not served over HTTPS or localhost.
    let clipboard = web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w.navigator(), &JsValue::from_str("clipboard")).ok())
        .filter(|c| !c.is_undefined() && !c.is_null())
        .map(|c| c.unchecked_into::<web_sys::Clipboard>());
    let Some(clipboard) = clipboard else {
        return fallback();
    };
    let done = Closure::once(move |_: JsValue| report.emit(format!("Copied the {what}.")));
    let refused = Closure::once(move |_: JsValue| fallback());
    let _ = clipboard.write_text(text).then2(&done, &refused);
    // The promise settles later: the JavaScript side owns the two callbacks from here.
    let _ = (done.into_js_value(), refused.into_js_value());
}

fn page_base() -> String {
    let href = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    href.split('#').next().unwrap_or_default().to_string()
}

/// Moves the focus to the element `id` once the view on screen has it (the dialog's heading
/// when it opens, the Embed button when it closes).
pub fn focus_soon(id: &'static str) {
    gloo_timers::callback::Timeout::new(0, move || {
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(id))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    })
    .forget();
}

pub struct EmbedDialogProps {
    pub player: Rc<Player>,
    pub dispatch: UseReducerDispatcher<Player>,
}

/// The dialog. A view function, not a component: its state (the choice, the copy message)
/// lives in the player's reducer, which keeps the player's download smaller.
pub fn embed_dialog(props: &EmbedDialogProps) -> Html {
    let p = &props.player;
    let d = &props.dispatch;
    let (iframe, markdown, url) = snippets(p, p.embed_size, &page_base());
    let span = |choice: Span| {
        let d = d.clone();
        html! {
            <button aria-pressed={if p.embed_span == choice { "true" } else { "false" }}
                onclick={Callback::from(move |_| d.dispatch(Action::EmbedRange(choice)))}>{ choice.label() }</button>
        }
    };
    let what = {
        let s = shown(p);
        let lo = s.from.map_or(0, |(_, step)| step);
        format!(
            "Shows steps {lo} to {} of {}, opening at step {}.",
            s.to.map_or(p.last() as u32, |(_, step)| step),
            p.last(),
            if s.from.is_some() { lo } else { p.cursor as u32 }
        )
    };
    let pick = |size: (u32, u32)| {
        let d = d.clone();
        html! {
            <button aria-pressed={if p.embed_size == size { "true" } else { "false" }}
                onclick={Callback::from(move |_| d.dispatch(Action::EmbedSize(size)))}>{ format!("{}×{}", size.0, size.1) }</button>
        }
    };
    let report = {
        let d = d.clone();
        Callback::from(move |m: String| d.dispatch(Action::CopyStatus(m)))
    };
    let row = |id: &'static str, label: &'static str, what: &'static str, text: String, rows: u32| {
        let report = report.clone();
        let copied = text.clone();
        html! {
            <div class="embed-out">
                <label for={id}>{ label }</label>
                <textarea id={id} readonly=true rows={rows.to_string()} value={text} />
                <button class="copy" onclick={Callback::from(move |_| copy(&copied, id, report.clone(), what))}>
                    { format!("Copy {what}") }
                </button>
            </div>
        }
    };
    // Closing gives the focus back to the Embed button (Escape closes through the player's keys).
    let close = {
        let d = d.clone();
        Callback::from(move |_| {
            d.dispatch(Action::Embed(false));
            focus_soon("embed-button");
        })
    };
    // Escape closes the key list first when it is open over the dialog.
    let help_open = p.help;
    let on_key = Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Escape" && !help_open {
            focus_soon("embed-button");
        }
    });
    html! {
        <section class="embed-dialog" role="dialog" aria-labelledby="embed-title" onkeydown={on_key}>
            <h2 id="embed-title" tabindex="-1">{ "Embed this run in a page" }</h2>
            <div role="group" aria-label="Part of the run">
                <span class="choice-name">{ "Shows" }</span>
                { for Span::ALL.into_iter().map(span) }
            </div>
            <p class="embed-span">{ what }</p>
            <div role="group" aria-label="Size">
                <span class="choice-name">{ "Size" }</span>
                { for SIZES.into_iter().map(pick) }
            </div>
            { row("embed-html", "HTML (any page, mdBook, Docusaurus/MDX)", "HTML", iframe, 3) }
            { row("embed-markdown", "Markdown link to the full player", "Markdown", markdown, 2) }
            { row("embed-url", "Embed address", "link", url, 2) }
            <p class="copy-status" role="status">{ &p.copy_status }</p>
            <button class="close" onclick={close}>{ "Close (Esc)" }</button>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::{parse, Route};
    use yew::Reducible;

    fn player(hash: &str) -> Player {
        let Route::Play(r) = parse(hash).route else {
            panic!("not a player link")
        };
        Player::from_route(&r, vec![]).unwrap()
    }

    #[test]
    fn the_snippets_open_the_run_on_screen() {
        let mut p = player("#/play/zombie-worker?fencing=write-predicate&seed=4&step=12");
        p.embed_span = Span::Whole;
        let (iframe, markdown, url) = snippets(&p, SIZES[1], "https://ex.org/docs/");
        assert_eq!(
            url,
            "https://ex.org/docs/#/embed/zombie-worker?fencing=write-predicate&seed=4&step=12"
        );
        assert!(
            iframe.starts_with(
                "<iframe src=\"https://ex.org/docs/#/embed/zombie-worker?fencing=write-predicate&amp;seed=4"
            ),
            "{iframe}"
        );
        assert!(iframe.contains("width=\"720\" height=\"405\""));
        assert!(iframe.contains("loading=\"lazy\""));
        assert!(iframe.contains("title=\"Zombie"), "{iframe}");
        assert!(
            markdown.ends_with(
                "(https://ex.org/docs/#/play/zombie-worker?fencing=write-predicate&seed=4&step=12)"
            ),
            "{markdown}"
        );
        // The URL opens that embed again.
        let Route::Embed(e) = parse(url.split_once('#').unwrap().1).route else {
            panic!()
        };
        assert_eq!(e, embed_route(&p));
    }

    #[test]
    fn by_default_the_snippets_lock_the_embed_to_the_beat_on_screen_by_its_keys() {
        let p = player("#/play/zombie-worker?fencing=write-predicate&seed=1");
        let beats: Vec<_> = p
            .trace
            .reached_beats()
            .map(|(s, b)| (s as usize, b.key.clone()))
            .collect();
        assert!(beats.len() >= 3, "{beats:?}");
        // At the second beat, a step past it: the embed shows beat 2 up to beat 3.
        let mut p = Rc::new(p).reduce(Action::Seek(beats[1].0 + 1));
        let (_, markdown, url) = snippets(&p, SIZES[0], "https://ex.org/");
        assert!(
            url.ends_with(&format!("seed=1&from={}&to={}", beats[1].1, beats[2].1)),
            "{url}"
        );
        assert!(
            !url.contains("step="),
            "a locked embed opens at its first beat: {url}"
        );
        assert!(markdown.contains(&format!("step={})", beats[1].0)), "{markdown}");
        // The range is what the embed then shows.
        let Route::Embed(e) = parse(url.split_once('#').unwrap().1).route else {
            panic!()
        };
        let mut notices = Vec::new();
        let trace: &coordlab_sim::Trace = &p.trace;
        assert_eq!(
            crate::embed_route::range_of(&e, trace, &mut notices),
            (beats[1].0, beats[2].0)
        );
        assert!(notices.is_empty(), "{notices:?}");
        // From this beat to the end: no `to`.
        p = p.reduce(Action::EmbedRange(Span::FromBeat));
        let (_, _, url) = snippets(&p, SIZES[0], "https://ex.org/");
        assert!(url.ends_with(&format!("&from={}", beats[1].1)), "{url}");
        // At the last beat, "this beat" runs to the end.
        let last = beats.last().unwrap();
        p = p
            .reduce(Action::EmbedRange(Span::Beat))
            .reduce(Action::Seek(last.0));
        let (_, _, url) = snippets(&p, SIZES[0], "https://ex.org/");
        assert!(url.ends_with(&format!("&from={}", last.1)), "{url}");
        // The whole run opens at the step on screen.
        p = p.reduce(Action::EmbedRange(Span::Whole));
        let (iframe, _, url) = snippets(&p, SIZES[0], "https://ex.org/");
        assert!(url.ends_with(&format!("&step={}", last.0)), "{url}");
        assert!(!url.contains("from="));
        assert!(iframe.contains("width=\"400\" height=\"300\""), "{iframe}");
    }

    #[test]
    fn before_the_first_beat_the_embed_is_the_whole_run() {
        let p = player("#/play/zombie-worker?fencing=write-predicate&seed=1");
        assert!(p.nav.beat_at_or_before(0).is_none());
        let (_, _, url) = snippets(&p, SIZES[1], "https://ex.org/");
        assert_eq!(
            url,
            "https://ex.org/#/embed/zombie-worker?fencing=write-predicate&seed=1"
        );
    }

    #[test]
    fn every_size_offered_is_at_least_the_smallest_frame_an_embed_is_designed_for() {
        for (w, h) in SIZES {
            assert!(w >= 400 && h >= 300, "{w}×{h}");
        }
    }
}
