//! The topology view: participants as cards with their state, links between them, and
//! messages in flight drawn where they are between send and delivery at the current time.
//! Messages are keyed by id, so CSS transitions move them smoothly from step to step.

use coordlab_sim::kernel::time::{format_signed_ms, format_time};
use coordlab_sim::trace::{NodeInfo, NodeStatus, Trace};
use std::rc::Rc;
use yew::prelude::*;

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 470.0;
const CARD_W: f64 = 200.0;
const CARD_H: f64 = 84.0;

/// Which row a participant sits in: authorities on top, workers in the middle, the things
/// they write to at the bottom.
fn tier(kind: &str) -> usize {
    match kind {
        "database" | "lease-store" | "store" => 0,
        "worker" => 1,
        _ => 2,
    }
}

/// Card centres and the card width: one row per tier present, cards spread evenly in a row
/// and narrowed when a row is crowded.
pub fn layout(nodes: &[NodeInfo]) -> (Vec<(f64, f64)>, f64) {
    // A consensus cluster is a ring of peers, not layers; anything else (a client) sits in
    // the top-left corner.
    let ring: Vec<usize> = (0..nodes.len())
        .filter(|i| nodes[*i].kind == "raft-server")
        .collect();
    if ring.len() >= 2 {
        let mut pos = vec![(95.0, 45.0); nodes.len()];
        for (k, i) in ring.iter().enumerate() {
            let a = std::f64::consts::TAU * k as f64 / ring.len() as f64 - std::f64::consts::FRAC_PI_2;
            pos[*i] = (
                WIDTH / 2.0 + 270.0 * a.cos(),
                HEIGHT / 2.0 + 10.0 + 160.0 * a.sin(),
            );
        }
        return (pos, 170.0);
    }
    layout_in_tiers(nodes)
}

fn layout_in_tiers(nodes: &[NodeInfo]) -> (Vec<(f64, f64)>, f64) {
    let mut tiers: Vec<usize> = nodes.iter().map(|n| tier(&n.kind)).collect();
    tiers.sort_unstable();
    tiers.dedup();
    let rows = tiers.len().max(1);
    let widest = tiers
        .iter()
        .map(|t| nodes.iter().filter(|n| tier(&n.kind) == *t).count())
        .max()
        .unwrap_or(1);
    let card_w = (WIDTH / widest as f64 - 16.0).min(CARD_W);
    let pos = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let t = tier(&n.kind);
            let row = tiers.iter().position(|x| *x == t).unwrap_or(0);
            let y = if rows == 1 {
                HEIGHT / 2.0
            } else {
                70.0 + (HEIGHT - 140.0) * row as f64 / (rows - 1) as f64
            };
            let peers: Vec<usize> = (0..nodes.len()).filter(|j| tier(&nodes[*j].kind) == t).collect();
            let k = peers.iter().position(|j| *j == i).unwrap_or(0);
            let x = WIDTH * (k as f64 + 1.0) / (peers.len() as f64 + 1.0);
            (x, y)
        })
        .collect();
    (pos, card_w)
}

/// SVG coordinates as whole pixels: integer formatting keeps float-printing code out of the
/// wasm bundle (it costs kilobytes) and a pixel is finer than anyone can see in an 800-wide view.
fn px(v: f64) -> String {
    (v.round() as i64).to_string()
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

/// A point along the link from `a` to `b`, shifted sideways so the two directions of one link
/// do not overlap. `f` runs from sender (0) to receiver (1).
fn along(a: (f64, f64), b: (f64, f64), f: f64) -> (f64, f64) {
    along_span(a, b, 0.3 + 0.4 * f.clamp(0.0, 1.0))
}

/// Like [`along`], with `f` as the raw fraction of the centre-to-centre line.
fn along_span(a: (f64, f64), b: (f64, f64), f: f64) -> (f64, f64) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    // The left-hand normal of the travel direction: it flips with the direction, so the two
    // directions of one link always sit on opposite sides of the line.
    let (nx, ny) = (-dy / len * 12.0, dx / len * 12.0);
    (a.0 + dx * f + nx, a.1 + dy * f + ny)
}

#[derive(Properties, PartialEq)]
pub struct TopologyProps {
    pub trace: Rc<Trace>,
    pub cursor: usize,
}

#[function_component(Topology)]
pub fn topology(props: &TopologyProps) -> Html {
    let trace = &props.trace;
    let entry = &trace.entries[props.cursor];
    let Some(snap) = entry.snapshot.as_ref() else {
        return html! {};
    };
    let (pos, card_w) = layout(&trace.nodes);
    let chars = (card_w / 8.2) as usize;
    let now = snap.time_us;
    let mut links = Vec::new();
    for i in 0..pos.len() {
        for j in (i + 1)..pos.len() {
            let (a, b) = (pos[i], pos[j]);
            links.push(html! { <line class="link" x1={px(a.0)} y1={px(a.1)} x2={px(b.0)} y2={px(b.1)} /> });
        }
    }
    // Broken links: one line per direction; labels only while few links are broken, since a
    // partition cuts many at once and the banner-free picture of red lines says it better.
    let label_links = snap.links.len() <= 4;
    let broken = snap.links.iter().map(|l| {
        let (a, b) = (pos[l.from.index()], pos[l.to.index()]);
        let mid = along(a, b, 0.5);
        let label = if l.cut { "✂ cut" } else { "held" };
        html! {
            <g class={classes!("link-state", l.cut.then_some("cut"), l.held.then_some("held"))}>
                <title>{ format!("{label} {} → {}", trace.node_name(l.from), trace.node_name(l.to)) }</title>
                <line x1={px(a.0)} y1={px(a.1)} x2={px(b.0)} y2={px(b.1)} />
                if label_links {
                    <text x={px(mid.0)} y={px(mid.1)}>{ format!("{label} {}→{}", trace.node_name(l.from), trace.node_name(l.to)) }</text>
                }
            </g>
        }
    });
    let cut_count = snap.links.iter().filter(|l| l.cut).count();
    let cut_legend = (!label_links && cut_count > 0).then(|| {
        html! { <text class="cut-legend" x="790" y="462" text-anchor="end">{ format!("✂ {cut_count} one-way links cut (red dashes)") }</text> }
    });
    // The message this step delivered, as an arrow: the "what just happened".
    let delivered = entry.message.as_ref().map(|m| {
        let (a, b) = (pos[m.from.index()], pos[m.to.index()]);
        let s = along_span(a, b, 0.24);
        let e = along_span(a, b, 0.76);
        html! { <line class="just-delivered" x1={px(s.0)} y1={px(s.1)} x2={px(e.0)} y2={px(e.1)} marker-end="url(#arrow)" /> }
    });
    let lost = entry.lost.iter().map(|m| {
        let (a, b) = (pos[m.from.index()], pos[m.to.index()]);
        let p = along(a, b, 0.3);
        html! { <text class="lost" x={px(p.0)} y={px(p.1)}>{ format!("✕ lost: {}", truncate(&m.label, 30)) }</text> }
    });
    let messages = snap.messages.iter().map(|m| {
        let (a, b) = (pos[m.from.index()], pos[m.to.index()]);
        let f = match m.deliver_us {
            Some(d) if d > m.sent_us => (now.saturating_sub(m.sent_us)) as f64 / (d - m.sent_us) as f64,
            Some(_) => 1.0,
            None => 0.0,
        };
        let p = along(a, b, f);
        let reply = m.from.0 < m.to.0 && m.from.0 == 0;
        let title = format!(
            "{} → {}: {} (sent {}, arrives {})",
            trace.node_name(m.from),
            trace.node_name(m.to),
            m.label,
            format_time(m.sent_us),
            m.deliver_us.map_or("when released".to_string(), format_time)
        );
        html! {
            <g key={m.id.0.to_string()} class={classes!("msg", reply.then_some("reply"), m.deliver_us.is_none().then_some("held"))}
               style={format!("transform: translate({}px, {}px)", px(p.0), px(p.1))}>
                <title>{ title }</title>
                <circle r="7" />
                <text y="-12">{ truncate(&m.label, 34) }</text>
            </g>
        }
    });
    let cards = snap.nodes.iter().map(|n| {
        let info = &trace.nodes[n.id.index()];
        let (x, y) = pos[n.id.index()];
        let (status_class, badge) = match n.status {
            NodeStatus::Up => ("up", None),
            NodeStatus::Crashed => ("crashed", Some("✕ CRASHED".to_string())),
            NodeStatus::Paused { until_us } => ("paused", Some(format!("‖ PAUSED until {}", format_time(until_us)))),
        };
        let involved = entry.nodes.first() == Some(&n.id);
        let (left, top) = (x - card_w / 2.0, y - CARD_H / 2.0);
        html! {
            <g class={classes!("node", status_class, info.kind.clone(), involved.then_some("acting"))} data-node={info.name.clone()}>
                if info.kind == "database" {
                    <ellipse class="db-top" cx={px(x)} cy={px(top)} rx={px(card_w / 2.0)} ry="10" />
                }
                <rect x={px(left)} y={px(top)} width={px(card_w)} height={px(CARD_H)} rx="10" />
                <text class="node-name" x={px(left + 12.0)} y={px(top + 24.0)}>{ &info.name }</text>
                if card_w > 180.0 && info.kind != info.name {
                    <text class="node-kind" x={px(left + card_w - 12.0)} y={px(top + 24.0)} text-anchor="end">{ &info.kind }</text>
                }
                { for n.lines.iter().take(2).enumerate().map(|(i, line)| html! {
                    <text class="node-line" x={px(left + 12.0)} y={px(top + 48.0 + 20.0 * i as f64)}>{ truncate(line, chars) }</text>
                }) }
                if let Some(badge) = badge {
                    <text class="badge" x={px(x)} y={px(top + CARD_H + 20.0)} text-anchor="middle">{ badge }</text>
                }
                if n.clock_offset_us != 0 {
                    <text class="clock" x={px(left + card_w - 12.0)} y={px(top + CARD_H - 10.0)} text-anchor="end">
                        { format!("clock {}{}", if n.clock_offset_us > 0 { "+" } else { "" }, format_signed_ms(n.clock_offset_us)) }
                    </text>
                }
                if n.waiting_inputs > 0 {
                    <text class="waiting" x={px(x)} y={px(top - 8.0)} text-anchor="middle">{ format!("{} input(s) waiting", n.waiting_inputs) }</text>
                }
            </g>
        }
    });
    let banner = snap
        .highlight
        .as_ref()
        .map(|h| html! { <figcaption class="unsafe-banner" role="status">{ format!("⚠ {h}") }</figcaption> });
    html! {
        <figure class="topology">
            { for banner }
            <svg viewBox={format!("0 0 {} {}", px(WIDTH), px(HEIGHT))} role="img"
                 aria-label={format!("Participants and messages at step {}", props.cursor)}>
                <defs>
                    <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z" />
                    </marker>
                    <pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
                        <rect width="8" height="8" class="hatch-bg" />
                        <line x1="0" y1="0" x2="0" y2="8" class="hatch-line" />
                    </pattern>
                </defs>
                { for links }
                { for broken }
                { for cut_legend }
                { for delivered }
                { for cards }
                { for messages }
                { for lost }
            </svg>
        </figure>
    }
}
