//! The topology view. The picture itself is `coordlab-render`'s SVG text, drawn for the box the
//! picture has on screen (measured here with a ResizeObserver: one drawing unit is one CSS
//! pixel, so the renderer picks type sizes a room can read and the level of detail that fits),
//! in pieces, each its own raw child of the `<svg>`, so a step replaces only the pieces whose
//! text changed (the acting cards, the timers, the arrow). Messages in flight are drawn here
//! instead, on a layer above it, keyed by message id so CSS moves them smoothly from step to
//! step.

use crate::same_trace::SameTrace;
use coordlab_render::topology::{self, Space};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Where the player and the side-by-side view switch to the phone drawing: as wide as the
/// screen, as tall as its cards need (the page scrolls).
const PHONE: &str = "(max-width: 560px)";

/// Whether the media query `query` matches, following it as the window changes.
#[hook]
fn use_media(query: &'static str) -> bool {
    let list = use_memo((), move |_| {
        web_sys::window().and_then(|w| w.match_media(query).ok().flatten())
    });
    let matches = use_state(|| list.as_ref().as_ref().is_some_and(|l| l.matches()));
    {
        let matches = matches.clone();
        use_effect_with(list, move |list| {
            let list = list.as_ref().clone();
            let seen = list.clone();
            let listener = Closure::<dyn Fn()>::new(move || {
                if let Some(l) = &seen {
                    matches.set(l.matches());
                }
            });
            crate::listen::listen(list, "change", listener)
        });
    }
    *matches
}

/// The size of the element behind `node` in whole CSS px, following it as it changes; `None`
/// until it has been laid out.
#[hook]
pub fn use_box_size(node: NodeRef) -> Option<(u32, u32)> {
    let size = use_state(|| None::<(u32, u32)>);
    {
        let size = size.clone();
        use_effect_with(node, move |node| {
            let element = node.cast::<web_sys::Element>();
            let observed = element.map(|el| {
                let seen = el.clone();
                let read = move || {
                    let (w, h) = (
                        seen.client_width().max(0) as u32,
                        seen.client_height().max(0) as u32,
                    );
                    // Even pixels: a sub-pixel wobble of the page does not redraw the picture.
                    let now = Some((w & !1, h & !1));
                    if *size != now && w > 0 {
                        size.set(now);
                    }
                };
                read();
                let f = Closure::<dyn FnMut()>::new(read);
                let observer = web_sys::ResizeObserver::new(f.as_ref().unchecked_ref()).ok();
                if let Some(o) = &observer {
                    o.observe(&el);
                }
                (observer, f)
            });
            move || {
                if let Some((Some(o), _f)) = observed {
                    o.disconnect();
                }
            }
        });
    }
    *size
}

#[derive(Properties, PartialEq)]
pub struct TopologyProps {
    pub trace: SameTrace,
    pub cursor: usize,
    /// The state after step `cursor`.
    pub snapshot: crate::same_trace::SameState,
    /// On a phone, draw a picture as tall as it needs (the player and the side-by-side view;
    /// an embed keeps to its frame).
    #[prop_or_default]
    pub phone: bool,
    /// The smallest text drawn, px: 12, or 11 in a small embed.
    #[prop_or(12)]
    pub min_text: u32,
}

#[function_component(Topology)]
pub fn topology(props: &TopologyProps) -> Html {
    let trace = &props.trace;
    let snap = &props.snapshot;
    let tall = use_media(PHONE) && props.phone;
    let picture = use_node_ref();
    let size = use_box_size(picture.clone());
    // On a phone only the width decides (the picture sets its own height).
    let key = size.map(|(w, h)| (w, if tall { 0 } else { h }));
    let min_text = props.min_text;
    // Made once per run and box: the arrangement of the cards and the links (finding the
    // links reads the whole run).
    let frame = use_memo((trace.clone(), key, min_text), |(trace, key, min_text)| {
        key.map(|(w, h)| {
            topology::Frame::new(
                trace,
                Space {
                    width: w as f64,
                    height: (h > 0).then_some(h as f64),
                    min_text: *min_text as f64,
                },
            )
        })
    });
    let drawing = frame.as_ref().as_ref().map(|frame| {
        let lay = frame.layout_at(trace, props.cursor);
        let parts = frame.parts(trace, props.cursor, snap, &lay, false);
        let messages = frame.messages(trace, snap, &lay);
        (lay, parts, messages)
    });
    // A phone's picture is as tall as its cards; elsewhere the page gives the box.
    let height = drawing
        .as_ref()
        .filter(|_| tall)
        .map(|(lay, _, _)| format!("height: {}px", lay.height as i64));
    let banner = snap
        .highlight
        .as_ref()
        .map(|h| html! { <figcaption class="unsafe-banner" role="status">{ format!("⚠ {h}") }</figcaption> });
    html! {
        <figure class={super::class_list("topology", &[("tall", tall)])}>
            { for banner }
            <div class="picture" ref={picture} ~style={height.unwrap_or_default()}>
                if let Some((lay, parts, messages)) = drawing {
                    { for parts.map(|p| html! {
                        <svg xmlns="http://www.w3.org/2000/svg" viewBox={p.view_box}
                             role="img" aria-label={p.aria_label}>
                            // Markup parsed on its own is HTML: each piece comes wrapped in an
                            // `<svg>` (same coordinates, nothing clipped) to be parsed as SVG.
                            { for p.pieces.into_iter().map(|piece| Html::from_html_unchecked(
                                format!("<svg overflow=\"visible\">{piece}</svg>").into())) }
                        </svg>
                    }) }
                    <svg class="messages" viewBox={lay.view_box()} aria-hidden="true">
                        { for messages.iter().map(|m| html! {
                            <g key={m.id.to_string()} data-msg={m.id.to_string()}
                               class={super::class_list("msg", &[("reply", m.reply), ("held", m.held)])}
                               ~style={format!("transform: translate({}px, {}px)", m.x, m.y)}>
                                <title>{ &m.title }</title>
                                <circle r="7" />
                                { for m.label.map(|l| html! {
                                    <text x={l.dx.to_string()} y={l.dy.to_string()} font-size={m.size.to_string()}
                                          text-anchor={l.anchor()}>{ &m.text }</text>
                                }) }
                            </g>
                        }) }
                    </svg>
                }
            </div>
            <ul class="visually-hidden" aria-label="Participants at this step">
                { for snap.nodes.iter().map(|n| html! { <li>{ topology::describe_node(trace.node_name(n.id), n) }</li> }) }
            </ul>
        </figure>
    }
}
