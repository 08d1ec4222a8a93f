//! The topology view. The picture itself is `coordlab-render`'s SVG text — the same drawing
//! the CLI prints and "Export SVG" saves — in pieces, each its own raw child of the `<svg>`, so
//! a step replaces only the pieces whose text changed (the acting cards, the timers, the
//! arrow) and the browser restyles and lays out only those. Messages in flight are drawn here
//! instead, on a layer above it, keyed by message id so CSS moves them smoothly from step to
//! step.

use crate::same_trace::SameTrace;
use coordlab_render::topology;
use coordlab_sim::trace::Snapshot;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Where the player and the side-by-side view switch to the phone drawing (two cards a row).
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
            let listener = list.as_ref().as_ref().map(|l| {
                let seen = l.clone();
                let f = Closure::<dyn Fn()>::new(move || matches.set(seen.matches()));
                let _ = l.add_event_listener_with_callback("change", f.as_ref().unchecked_ref());
                (l.clone(), f)
            });
            move || {
                if let Some((l, f)) = listener {
                    let _ = l.remove_event_listener_with_callback("change", f.as_ref().unchecked_ref());
                }
            }
        });
    }
    *matches
}

#[derive(Properties, PartialEq)]
pub struct TopologyProps {
    pub trace: SameTrace,
    pub cursor: usize,
    /// The state after step `cursor`.
    pub snapshot: Rc<Snapshot>,
    /// On a phone, draw the narrow picture (the player and the side-by-side view; an embed
    /// keeps the wide one, which suits its short frame).
    #[prop_or_default]
    pub phone: bool,
}

#[function_component(Topology)]
pub fn topology(props: &TopologyProps) -> Html {
    let trace = &props.trace;
    let snap = &props.snapshot;
    let narrow = use_media(PHONE) && props.phone;
    // Made once per run and drawing: the layout, the card boxes and the links (finding the
    // links reads the whole run).
    let frame = use_memo((trace.clone(), narrow), |(trace, narrow)| {
        topology::Frame::new(trace, *narrow)
    });
    // The picture's width over its height, which an embed fits the picture by (embed.css). As
    // a division CSS does: formatting a float would pull ~10 KB of float printing into the wasm.
    let (_, _, w, h) = frame.layout.view_box(&trace.nodes);
    let aspect = format!("--aspect: {w} / {}", h.max(1));
    let parts = frame.parts(trace, props.cursor, snap, false);
    let messages = frame.messages(trace, snap);
    let banner = snap
        .highlight
        .as_ref()
        .map(|h| html! { <figcaption class="unsafe-banner" role="status">{ format!("⚠ {h}") }</figcaption> });
    html! {
        <figure class="topology">
            { for banner }
            <div class="picture" ~style={aspect}>
                { for parts.map(|p| html! {
                    <svg xmlns="http://www.w3.org/2000/svg" viewBox={p.view_box} class={p.class}
                         role="img" aria-label={p.aria_label}>
                        // Markup parsed on its own is HTML: each piece comes wrapped in an
                        // `<svg>` (same coordinates, nothing clipped) to be parsed as SVG.
                        { for p.pieces.into_iter().map(|piece| Html::from_html_unchecked(
                            format!("<svg overflow=\"visible\">{piece}</svg>").into())) }
                    </svg>
                }) }
                <svg class="messages" viewBox={frame.view_box.clone()} aria-hidden="true">
                    { for messages.iter().map(|m| html! {
                        <g key={m.id.to_string()} data-msg={m.id.to_string()}
                           class={classes!("msg", m.reply.then_some("reply"), m.held.then_some("held"))}
                           ~style={format!("transform: translate({}px, {}px)", m.x, m.y)}>
                            <title>{ &m.title }</title>
                            <circle r="7" />
                            { for m.label.map(|l| html! {
                                <text x={l.dx.to_string()} y={l.dy.to_string()}
                                      text-anchor={l.anchor()}>{ &m.text }</text>
                            }) }
                        </g>
                    }) }
                </svg>
            </div>
            <ul class="visually-hidden" aria-label="Participants at this step">
                { for snap.nodes.iter().map(|n| html! { <li>{ topology::describe_node(trace.node_name(n.id), n) }</li> }) }
            </ul>
        </figure>
    }
}
