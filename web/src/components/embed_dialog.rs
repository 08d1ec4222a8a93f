//! The Embed dialog: what a documentation author pastes to show this run in a page — an iframe
//! snippet, a Markdown link and the plain embed URL, built from the step on screen, each copied
//! with one click. Choices are buttons, not drop-downs or radios, because the player's arrow
//! keys step the run wherever the focus is.

use crate::embed_route::{EmbedRoute, SIZES};
use crate::route::{self, PlayRoute, Route};
use crate::state::{Action, Player};
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

/// The embed of the run on screen: the same run, starting at the step on screen.
pub fn embed_route(p: &Player) -> EmbedRoute {
    EmbedRoute::of(PlayRoute {
        present: false,
        step: (p.cursor > 0).then_some(p.cursor as u32),
        ..p.route()
    })
}

fn attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// The three things an author can paste: (iframe snippet of `size`, Markdown link, embed URL).
/// `base` is the page's address without its `#…`.
pub fn snippets(p: &Player, size: (u32, u32), base: &str) -> (String, String, String) {
    let url = format!("{base}{}", route::format(&Route::Embed(embed_route(p))));
    let full = format!(
        "{base}{}",
        route::format(&Route::Play(PlayRoute {
            present: false,
            ..p.route()
        }))
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
    let on_key = Callback::from(|e: KeyboardEvent| {
        if e.key() == "Escape" {
            focus_soon("embed-button");
        }
    });
    html! {
        <section class="embed-dialog" role="dialog" aria-labelledby="embed-title" onkeydown={on_key}>
            <h2 id="embed-title" tabindex="-1">{ "Embed this run in a page" }</h2>
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
    use crate::route::parse;

    fn player(hash: &str) -> Player {
        let Route::Play(r) = parse(hash).route else {
            panic!("not a player link")
        };
        Player::from_route(&r, vec![]).unwrap()
    }

    #[test]
    fn the_snippets_open_the_run_on_screen() {
        let p = player("#/play/zombie-worker?fencing=write-predicate&seed=4&step=12");
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
}
