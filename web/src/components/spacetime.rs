//! The space-time view: `coordlab-render`'s diagram of the run up to the cursor, following it.
//! Clicking a mark seeks there; the axis switches between real time and event order; "Export
//! SVG" saves what `coordlab run … --format svg --step N` prints. The events in view are listed
//! for screen readers.
//!
//! The player draws the diagram for its box ([`Window::Fit`]): the box's size in CSS pixels
//! (watched by a `ResizeObserver`, as the topology's) and a type size go to the renderer,
//! which draws one unit to a pixel around the current beat, with lane names and the beat's
//! title at the page's 16 px (a presenter's: 18 px and up). An embed and the trace viewer draw
//! the followed picture, scaled to the width.

use super::topology::use_box_size;
use crate::picture::Axis;
#[cfg(feature = "player")]
use crate::picture::{Picture, View};
use crate::same_trace::SameTrace;
use coordlab_render::spacetime::{self, Diagram, Fit, Options, Window};
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct SpaceTimeProps {
    pub trace: SameTrace,
    pub cursor: usize,
    pub axis: Axis,
    pub on_seek: Callback<usize>,
    pub on_axis: Callback<Axis>,
    /// What an export is saved as, without `.svg`.
    pub export_name: AttrValue,
    /// Draw the diagram for its box (the player).
    #[prop_or_default]
    pub fitted: bool,
    /// Presenter mode: the diagram's names and the beat's title at least 18 px.
    #[prop_or_default]
    pub presenting: bool,
}

/// A fitted diagram's lane names and beat title, px (its other text is 13 px).
const TEXT_PX: i64 = 16;
/// In presenter mode: at least what a room reads at 853×480 (GUIDE §9), and the presenter's
/// type (the stylesheet's 1.95vw: 24 px at 1280×720) on a larger screen.
const PRESENTER_TEXT_PX: i64 = 18;

/// The presenter's type size, from the window's width (integer pixels: no float formatting).
fn presenter_text_px() -> i64 {
    let width = web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|w| w.as_f64())
        .unwrap_or(0.0) as i64;
    (width * 195 / 10_000).max(PRESENTER_TEXT_PX)
}

#[function_component(SpaceTime)]
pub fn space_time(props: &SpaceTimeProps) -> Html {
    // Positions, spans and senders are worked out once per run, not per step.
    let diagram = use_memo(props.trace.clone(), |t| Diagram::new(t));
    let picture = use_node_ref();
    // The player's diagram is drawn for its box, one unit a CSS pixel.
    let size = use_box_size(picture.clone());
    let fitted = props.fitted;
    let window = match size {
        Some((w, h)) if fitted => Window::Fit(Fit {
            width: i64::from(w),
            height: i64::from(h),
            text_px: if props.presenting {
                presenter_text_px()
            } else {
                TEXT_PX
            },
        }),
        _ => Window::Follow,
    };
    let options = Options {
        axis: props.axis,
        window,
    };
    let svg = spacetime::svg(&props.trace, &diagram, props.cursor, options);
    // Where the diagram is wider than its box (a phone, a small frame), keep the cursor —
    // 80% across the drawing — in view.
    {
        let picture = picture.clone();
        use_effect_with(props.cursor, move |_| {
            if let Some(el) = picture.cast::<web_sys::Element>() {
                let (wide, seen) = (el.scroll_width(), el.client_width());
                if wide > seen {
                    el.set_scroll_left(wide * 8 / 10 - seen / 2);
                }
            }
        });
    }
    let shown = spacetime::visible(&props.trace, &diagram, props.cursor, options);
    let on_click = {
        let on_seek = props.on_seek.clone();
        Callback::from(move |e: MouseEvent| {
            let seq = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .and_then(|el| el.closest("[data-seq]").ok().flatten())
                .and_then(|el| el.get_attribute("data-seq"))
                .and_then(|s| s.parse::<usize>().ok());
            if let Some(seq) = seq {
                on_seek.emit(seq);
            }
        })
    };
    let on_export = {
        // What `coordlab run … --format svg --step N` prints: the followed picture (a standard
        // size for a slide or a document), also where the screen shows one drawn for its box;
        // drawn when asked for, not at every step.
        let (trace, diagram, cursor, axis) = (props.trace.clone(), diagram.clone(), props.cursor, props.axis);
        let name = format!("{}.svg", props.export_name);
        Callback::from(move |_| {
            let followed = Options {
                axis,
                window: Window::Follow,
            };
            let text = spacetime::svg(&trace, &diagram, cursor, followed);
            download(&name, &format!("{text}\n"));
        })
    };
    let axis_button = |axis: Axis, label: &'static str| {
        let on_axis = props.on_axis.clone();
        let pressed = props.axis == axis;
        html! {
            <button class={super::class_list("axis", &[("selected", pressed)])}
                aria-pressed={if pressed { "true" } else { "false" }}
                onclick={Callback::from(move |_| on_axis.emit(axis))}>{ label }</button>
        }
    };
    html! {
        <figure class={super::class_list("spacetime-view", &[("fitted", fitted)])}>
            <div class="spacetime-bar" role="group" aria-label="Space-time diagram">
                { axis_button(Axis::Time, "Real time") }
                { axis_button(Axis::Order, "Event order") }
                <button class="export-svg" onclick={on_export}
                    title="Save this diagram as an SVG file, for a slide or a document">{ "⤓ Export SVG" }</button>
            </div>
            // Focusable: where it scrolls sideways (a phone), the keyboard can scroll it too.
            <div class="spacetime-picture" onclick={on_click} ref={picture} tabindex="0"
                role="group" aria-label="The diagram: click a mark to go to that step">
                { Html::from_html_unchecked(svg.into()) }
            </div>
            <ol class="visually-hidden" aria-label="Events in the diagram, in order">
                { for props.trace.entries[shown].iter().map(|e| html! { <li>{ e.line() }</li> }) }
            </ol>
        </figure>
    }
}

/// Saves `text` as a file the browser downloads.
fn download(name: &str, text: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("image/svg+xml");
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    if let Ok(a) = doc.create_element("a") {
        let _ = a.set_attribute("href", &url);
        let _ = a.set_attribute("download", name);
        if let Some(a) = a.dyn_ref::<web_sys::HtmlElement>() {
            a.click();
        }
    }
    // Revoked once the download has started: at once, some browsers would cancel it.
    gloo_timers::callback::Timeout::new(5_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
}

#[cfg(feature = "player")]
pub struct PictureSwitchProps {
    pub view: View,
    pub on_pick: Callback<Picture>,
}

/// Topology, space-time diagram or both: which pictures the stage shows.
#[cfg(feature = "player")]
pub fn picture_switch(props: &PictureSwitchProps) -> Html {
    html! {
        <span class="picture-switch" role="group" aria-label="Picture">
            { for Picture::ALL.into_iter().map(|p| {
                let on_pick = props.on_pick.clone();
                let pressed = props.view.picture == p;
                html! {
                    <button class={pressed.then_some("selected")}
                        aria-pressed={if pressed { "true" } else { "false" }}
                        title="Switch the picture (d)"
                        onclick={Callback::from(move |_| on_pick.emit(p))}>{ p.label() }</button>
                }
            }) }
        </span>
    }
}
