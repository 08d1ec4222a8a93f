//! The topology view. The picture itself is `coordlab-render`'s SVG text — the same drawing
//! the CLI prints and "Export SVG" saves. Messages in flight are drawn here instead, on a layer
//! above it, keyed by message id so CSS moves them smoothly from step to step.

use crate::same_trace::SameTrace;
use coordlab_render::topology::{self, TopologyOptions};
use coordlab_sim::trace::Snapshot;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct TopologyProps {
    pub trace: SameTrace,
    pub cursor: usize,
    /// The state after step `cursor`.
    pub snapshot: Rc<Snapshot>,
}

#[function_component(Topology)]
pub fn topology(props: &TopologyProps) -> Html {
    let trace = &props.trace;
    let snap = &props.snapshot;
    let layout = topology::layout(&trace.nodes);
    // The picture's width over its height, which an embed fits the picture by (embed.css). As
    // a division CSS does: formatting a float would pull ~10 KB of float printing into the wasm.
    let (_, _, w, h) = layout.view_box(&trace.nodes);
    let aspect = format!("--aspect: {w} / {}", h.max(1));
    let picture = topology::svg(trace, props.cursor, snap, TopologyOptions { messages: false });
    let messages = topology::messages(trace, snap, &layout);
    let banner = snap
        .highlight
        .as_ref()
        .map(|h| html! { <figcaption class="unsafe-banner" role="status">{ format!("⚠ {h}") }</figcaption> });
    html! {
        <figure class="topology">
            { for banner }
            <div class="picture" ~style={aspect}>
                { Html::from_html_unchecked(picture.into()) }
                <svg class="messages" viewBox={layout.view_box_attr(&trace.nodes)} aria-hidden="true">
                    { for messages.iter().map(|m| html! {
                        <g key={m.id.to_string()} data-msg={m.id.to_string()}
                           class={classes!("msg", m.reply.then_some("reply"), m.held.then_some("held"))}
                           ~style={format!("transform: translate({}px, {}px)", m.x, m.y)}>
                            <title>{ &m.title }</title>
                            <circle r="7" />
                            <text y="-12">{ &m.text }</text>
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
