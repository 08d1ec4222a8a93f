//! The topology view: participants as cards with their state, links between them, and
//! messages in flight drawn where they are between send and delivery at the current time.
//! Messages are keyed by id, so CSS transitions move them smoothly from step to step.

use coordlab_sim::kernel::time::format_ms;
use coordlab_sim::trace::{NodeStatus, Trace};
use coordlab_sim::NodeId;
use std::rc::Rc;
use yew::prelude::*;

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 470.0;
const CARD_W: f64 = 200.0;
const CARD_H: f64 = 84.0;

/// Card centres: the first node on top, the rest spread below; larger sets on a circle.
pub fn layout(n: usize) -> Vec<(f64, f64)> {
    match n {
        0 => vec![],
        1 => vec![(WIDTH / 2.0, HEIGHT / 2.0)],
        2..=4 => {
            let mut out = vec![(WIDTH / 2.0, 72.0)];
            let below = n - 1;
            for i in 0..below {
                let x = WIDTH * (i as f64 + 1.0) / (below as f64 + 1.0);
                out.push((x, HEIGHT - 72.0));
            }
            out
        }
        _ => (0..n)
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / n as f64 - std::f64::consts::FRAC_PI_2;
                (WIDTH / 2.0 + 290.0 * a.cos(), HEIGHT / 2.0 + 160.0 * a.sin())
            })
            .collect(),
    }
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
fn along(a: (f64, f64), b: (f64, f64), f: f64, from: NodeId, to: NodeId) -> (f64, f64) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let side = if from < to { 1.0 } else { -1.0 };
    let (nx, ny) = (-dy / len * 12.0 * side, dx / len * 12.0 * side);
    let f = 0.3 + 0.4 * f.clamp(0.0, 1.0);
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
    let Some(snap) = entry.snapshot.as_ref() else { return html! {} };
    let pos = layout(trace.nodes.len());
    let now = snap.time_us;
    let mut links = Vec::new();
    for i in 0..pos.len() {
        for j in (i + 1)..pos.len() {
            let (a, b) = (pos[i], pos[j]);
            links.push(html! { <line class="link" x1={a.0.to_string()} y1={a.1.to_string()} x2={b.0.to_string()} y2={b.1.to_string()} /> });
        }
    }
    let broken = snap.links.iter().map(|l| {
        let (a, b) = (pos[l.from.index()], pos[l.to.index()]);
        let mid = along(a, b, 0.5, l.from, l.to);
        let label = if l.cut { "✂ cut" } else { "held" };
        html! {
            <g class={classes!("link-state", l.cut.then_some("cut"), l.held.then_some("held"))}>
                <line x1={a.0.to_string()} y1={a.1.to_string()} x2={b.0.to_string()} y2={b.1.to_string()} />
                <text x={mid.0.to_string()} y={mid.1.to_string()}>{ format!("{label} {}→{}", trace.node_name(l.from), trace.node_name(l.to)) }</text>
            </g>
        }
    });
    // The message this step delivered, as an arrow: the "what just happened".
    let delivered = entry.message.as_ref().map(|m| {
        let (a, b) = (pos[m.from.index()], pos[m.to.index()]);
        let s = along(a, b, 0.0, m.from, m.to);
        let e = along(a, b, 1.0, m.from, m.to);
        html! { <line class="just-delivered" x1={s.0.to_string()} y1={s.1.to_string()} x2={e.0.to_string()} y2={e.1.to_string()} marker-end="url(#arrow)" /> }
    });
    let lost = entry.lost.iter().map(|m| {
        let (a, b) = (pos[m.from.index()], pos[m.to.index()]);
        let p = along(a, b, 0.3, m.from, m.to);
        html! { <text class="lost" x={p.0.to_string()} y={p.1.to_string()}>{ format!("✕ lost: {}", truncate(&m.label, 30)) }</text> }
    });
    let messages = snap.messages.iter().map(|m| {
        let (a, b) = (pos[m.from.index()], pos[m.to.index()]);
        let f = match m.deliver_us {
            Some(d) if d > m.sent_us => (now.saturating_sub(m.sent_us)) as f64 / (d - m.sent_us) as f64,
            Some(_) => 1.0,
            None => 0.0,
        };
        let p = along(a, b, f, m.from, m.to);
        let reply = m.from.0 < m.to.0 && m.from.0 == 0;
        let title = format!(
            "{} → {}: {} (sent {}, arrives {})",
            trace.node_name(m.from),
            trace.node_name(m.to),
            m.label,
            format_ms(m.sent_us),
            m.deliver_us.map_or("when released".to_string(), format_ms)
        );
        html! {
            <g key={m.id.0.to_string()} class={classes!("msg", reply.then_some("reply"), m.deliver_us.is_none().then_some("held"))}
               style={format!("transform: translate({:.1}px, {:.1}px)", p.0, p.1)}>
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
            NodeStatus::Paused { until_us } => ("paused", Some(format!("⏸ PAUSED until {}", format_ms(until_us)))),
        };
        let involved = entry.nodes.first() == Some(&n.id);
        let (left, top) = (x - CARD_W / 2.0, y - CARD_H / 2.0);
        html! {
            <g class={classes!("node", status_class, info.kind.clone(), involved.then_some("acting"))} data-node={info.name.clone()}>
                if info.kind == "database" {
                    <ellipse class="db-top" cx={x.to_string()} cy={top.to_string()} rx={(CARD_W / 2.0).to_string()} ry="10" />
                }
                <rect x={left.to_string()} y={top.to_string()} width={CARD_W.to_string()} height={CARD_H.to_string()} rx="10" />
                <text class="node-name" x={(left + 12.0).to_string()} y={(top + 24.0).to_string()}>{ &info.name }</text>
                <text class="node-kind" x={(left + CARD_W - 12.0).to_string()} y={(top + 24.0).to_string()} text-anchor="end">{ &info.kind }</text>
                { for n.lines.iter().take(2).enumerate().map(|(i, line)| html! {
                    <text class="node-line" x={(left + 12.0).to_string()} y={(top + 48.0 + 20.0 * i as f64).to_string()}>{ truncate(line, 28) }</text>
                }) }
                if let Some(badge) = badge {
                    <text class="badge" x={x.to_string()} y={(top + CARD_H + 20.0).to_string()} text-anchor="middle">{ badge }</text>
                }
                if n.waiting_inputs > 0 {
                    <text class="waiting" x={x.to_string()} y={(top - 8.0).to_string()} text-anchor="middle">{ format!("{} input(s) waiting", n.waiting_inputs) }</text>
                }
            </g>
        }
    });
    html! {
        <figure class="topology">
            <svg viewBox={format!("0 0 {WIDTH} {HEIGHT}")} role="img"
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
                { for delivered }
                { for cards }
                { for messages }
                { for lost }
            </svg>
        </figure>
    }
}
