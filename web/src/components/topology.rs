//! The topology view: participants as cards with their state, links between them, and
//! messages in flight drawn where they are between send and delivery at the current time.
//! Messages are keyed by id, so CSS transitions move them smoothly from step to step.

use coordlab_sim::kernel::time::{format_signed_ms, format_time, MS_US};
use coordlab_sim::trace::{Gauge, LogCell, NodeInfo, NodeStatus, NodeView, Trace};
use std::rc::Rc;
use yew::prelude::*;

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 470.0;
const CARD_W: f64 = 200.0;
const CARD_H: f64 = 84.0;
/// A consensus ring is taller: its cards carry a log strip and a timer.
const RING_HEIGHT: f64 = 570.0;
const SERVER_CARD_H: f64 = 120.0;
const CLIENT_CARD: (f64, f64) = (220.0, 84.0);
/// Log cells on a server card.
const CELL_W: f64 = 26.0;
const CELL_GAP: f64 = 3.0;

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
    // A consensus cluster is a ring of peers, not layers; anything else (clients, workers, a
    // resource) takes the corners around it: top left, top right, bottom left, bottom right.
    let ring: Vec<usize> = (0..nodes.len())
        .filter(|i| nodes[*i].kind == "raft-server")
        .collect();
    if ring.len() >= 2 {
        let height = ring_height(nodes);
        let (half_w, half_h) = (CLIENT_CARD.0 / 2.0, CLIENT_CARD.1 / 2.0);
        let corners = [
            (10.0 + half_w, 8.0 + half_h),
            (WIDTH - 10.0 - half_w, 8.0 + half_h),
            (10.0 + half_w, height - 8.0 - half_h),
            (WIDTH - 10.0 - half_w, height - 8.0 - half_h),
        ];
        let mut pos = vec![corners[0]; nodes.len()];
        let others = (0..nodes.len()).filter(|i| !ring.contains(i));
        for (k, i) in others.enumerate() {
            // A fifth outsider would need a real layout; stack it below the fourth.
            let (x, y) = corners[k.min(3)];
            pos[i] = (x, y + (k.saturating_sub(3) as f64) * (CLIENT_CARD.1 + 8.0));
        }
        for (k, i) in ring.iter().enumerate() {
            let (cos, sin) = around_from_top(k, ring.len());
            pos[*i] = (WIDTH / 2.0 + 285.0 * cos, 290.0 + 190.0 * sin);
        }
        // Seven cards only fit the ring a little narrower.
        let card_w = match ring.len() {
            7.. => 170.0,
            6 => 185.0,
            _ => 200.0,
        };
        return (pos, card_w);
    }
    layout_in_tiers(nodes)
}

/// Cosine and sine of the `k`th of `n` equal steps around a circle, starting at the top and
/// going clockwise on screen. A short series instead of `f64::cos`/`sin`, whose wasm
/// implementations cost kilobytes; exact to far below a pixel.
fn around_from_top(k: usize, n: usize) -> (f64, f64) {
    let x = std::f64::consts::TAU * k as f64 / n.max(1) as f64 - std::f64::consts::PI;
    // Taylor series of sin and cos around 0 for x in [-π, π): terms to x^21.
    let (mut sin, mut cos, mut term_s, mut term_c) = (0.0, 0.0, x, 1.0);
    for i in 0..11 {
        sin += term_s;
        cos += term_c;
        let j = (2 * i + 2) as f64;
        term_s *= -x * x / (j * (j + 1.0));
        term_c *= -x * x / ((j - 1.0) * j);
    }
    // The angle wanted is x + π/2: cos(x + π/2) = −sin x and sin(x + π/2) = cos x.
    (-sin, cos)
}

/// The ring's picture grows when outsiders sit in its bottom corners, clear of the lower
/// servers.
fn ring_height(nodes: &[NodeInfo]) -> f64 {
    let outsiders = nodes.iter().filter(|n| n.kind != "raft-server").count();
    RING_HEIGHT
        + if outsiders > 2 { 90.0 } else { 0.0 }
        + outsiders.saturating_sub(4) as f64 * (CLIENT_CARD.1 + 8.0)
}

fn is_ring(nodes: &[NodeInfo]) -> bool {
    nodes.iter().filter(|n| n.kind == "raft-server").count() >= 2
}

/// Width and height of one participant's card.
fn card_size(kind: &str, ring: bool, card_w: f64) -> (f64, f64) {
    match kind {
        "raft-server" if ring => (card_w, SERVER_CARD_H),
        "raft-client" if ring => CLIENT_CARD,
        _ => (card_w, CARD_H),
    }
}

/// The election timer as a ring that empties as time runs out, with the time left in words
/// beside it: the arc's length carries the meaning, not its colour.
/// A `compact` gauge (on a narrow card outside the ring) leaves the words to its tooltip.
fn gauge_view(g: &Gauge, right: f64, top: f64, compact: bool) -> Html {
    let left_ms = g.remaining_us / MS_US;
    // Whole percent of a `pathLength` of 100: the arc needs no float formatting.
    let pct = (g.remaining_us.min(g.total_us) * 100 / g.total_us.max(1)).min(100);
    let (cx, cy) = if compact {
        (right - 18.0, top + 19.0)
    } else {
        (right - 22.0, top + 22.0)
    };
    let r = if compact { "10" } else { "13" };
    let low = pct <= 25;
    html! {
        <g class={classes!("gauge", low.then_some("low"))} data-remaining-us={g.remaining_us.to_string()}>
            <title>{ format!("{} in {left_ms} ms (of {} ms)", g.label, g.total_us / MS_US) }</title>
            <circle class="gauge-track" cx={px(cx)} cy={px(cy)} r={r} />
            <circle class="gauge-arc" cx={px(cx)} cy={px(cy)} r={r} pathLength="100"
                stroke-dasharray={format!("{pct} 100")} transform={format!("rotate(-90 {} {})", px(cx), px(cy))} />
            if !compact {
                <text class="gauge-text" x={px(cx - 20.0)} y={px(cy + 5.0)} text-anchor="end">{ format!("{left_ms} ms left") }</text>
            }
        </g>
    }
}

/// The log as a row of cells, newest last: the term inside each, its index under it;
/// committed entries are solid with a ✓, the rest dashed.
fn log_view(cells: &[LogCell], left: f64, top: f64, width: f64) -> Html {
    let room = ((width - 24.0 + CELL_GAP) / (CELL_W + CELL_GAP)) as usize;
    if cells.is_empty() {
        return html! { <text class="log-empty" x={px(left + 12.0)} y={px(top + 95.0)}>{ "log: empty" }</text> };
    }
    let skipped = cells.len().saturating_sub(room.max(2));
    let skipped = if skipped > 0 { skipped + 1 } else { 0 }; // one slot goes to the "…" marker
    let shown = &cells[skipped..];
    let offset = usize::from(skipped > 0);
    let y = top + 78.0;
    html! {
        <g class="log-strip">
            if skipped > 0 {
                <text class="log-more" x={px(left + 12.0 + CELL_W / 2.0)} y={px(y + 16.0)} text-anchor="middle">
                    <title>{ format!("{skipped} earlier entries") }</title>
                    { "…" }
                </text>
            }
            { for shown.iter().enumerate().map(|(k, c)| {
                let x = left + 12.0 + (k + offset) as f64 * (CELL_W + CELL_GAP);
                html! {
                    <g class={classes!("cell", if c.committed { "committed" } else { "open" })}>
                        <title>{ format!("entry #{} · term {} · {} · {}", c.index, c.term, c.label,
                            if c.committed { "committed" } else { "not committed" }) }</title>
                        <rect x={px(x)} y={px(y)} width={px(CELL_W)} height="22" rx="3" />
                        <text class="cell-term" x={px(x + CELL_W / 2.0)} y={px(y + 16.0)} text-anchor="middle">
                            { if c.committed { format!("{}✓", c.term) } else { c.term.to_string() } }
                        </text>
                        <text class="cell-index" x={px(x + CELL_W / 2.0)} y={px(y + 35.0)} text-anchor="middle">{ c.index }</text>
                    </g>
                }
            }) }
        </g>
    }
}

/// One line per participant for screen readers: the picture as words.
fn describe_node(name: &str, n: &NodeView) -> String {
    let mut parts = vec![format!("{name}: {}", n.lines.join("; "))];
    if let Some(g) = &n.gauge {
        parts.push(format!("{} in {} ms", g.label, g.remaining_us / MS_US));
    }
    if !n.log.is_empty() {
        let cells: Vec<String> = n
            .log
            .iter()
            .map(|c| {
                format!(
                    "#{} term {}{}",
                    c.index,
                    c.term,
                    if c.committed {
                        " committed"
                    } else {
                        " not committed"
                    }
                )
            })
            .collect();
        parts.push(format!("log {}", cells.join(", ")));
    }
    parts.join("; ")
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

/// The gist of a message label for a crowded picture (the tooltip and the network panel keep
/// the whole label): the part before any parenthesis or comma, at most two ` · ` parts,
/// e.g. `heartbeat term 1 (prev #0/t0, commit #0)` → `heartbeat term 1`.
fn headline(label: &str) -> String {
    let head = label.split([',', '(']).next().unwrap_or(label).trim_end();
    let head: Vec<&str> = head.split(" · ").take(2).collect();
    truncate(&head.join(" · "), 30)
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
    let ring = is_ring(&trace.nodes);
    let height = if ring { ring_height(&trace.nodes) } else { HEIGHT };
    let now = snap.time_us;
    let mut links = Vec::new();
    for i in 0..pos.len() {
        for j in (i + 1)..pos.len() {
            let (a, b) = (pos[i], pos[j]);
            links.push(html! { <line class="link" x1={px(a.0)} y1={px(a.1)} x2={px(b.0)} y2={px(b.1)} /> });
        }
    }
    // Broken links. A link broken the same way in both directions (what a partition does) is
    // one centred line; a one-way break sits on its direction's side of the link with an
    // arrowhead halfway, so the picture shows which way is broken. Labels only while few
    // links are broken: a partition breaks many at once and the red lines say it better.
    let same_back = |l: &coordlab_sim::trace::LinkView| {
        snap.links
            .iter()
            .any(|r| r.from == l.to && r.to == l.from && r.cut == l.cut && r.held == l.held)
    };
    let label_links = snap.links.len() <= 4;
    let broken = snap.links.iter().filter(|l| !(same_back(l) && l.from > l.to)).map(|l| {
        let (a, b) = (pos[l.from.index()], pos[l.to.index()]);
        let (f, t) = (trace.node_name(l.from), trace.node_name(l.to));
        let both = same_back(l);
        let label = if l.cut { "✂ cut" } else { "held" };
        let (arrow, data) = if both {
            ("↔", format!("{f}<->{t}"))
        } else {
            ("→", format!("{f}->{t}"))
        };
        let (s, m, e) = if both {
            (a, ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0), b)
        } else {
            (along_span(a, b, 0.0), along_span(a, b, 0.5), along_span(a, b, 1.0))
        };
        let marker = match (both, l.cut) {
            (true, _) => None,
            (false, true) => Some("url(#link-arrow)"),
            (false, false) => Some("url(#link-arrow-held)"),
        };
        html! {
            <g class={classes!("link-state", l.cut.then_some("cut"), l.held.then_some("held"))} data-link={data}>
                <title>{ format!("{label} {f} {arrow} {t}") }</title>
                <path d={format!("M {} {} L {} {} L {} {}", px(s.0), px(s.1), px(m.0), px(m.1), px(e.0), px(e.1))}
                    marker-mid={marker} />
                if label_links {
                    <text x={px(m.0)} y={px(m.1 - 6.0)}>{ format!("{label} {f}{arrow}{t}") }</text>
                }
            </g>
        }
    });
    let cut_count = snap.links.iter().filter(|l| l.cut).count();
    let cut_legend = (!label_links && cut_count > 0).then(|| {
        html! { <text class="cut-legend" x="790" y={px(height - 8.0)} text-anchor="end">{ format!("✂ {cut_count} one-way links cut (red dashes)") }</text> }
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
            <g key={m.id.0.to_string()} data-msg={m.id.0.to_string()} class={classes!("msg", reply.then_some("reply"), m.deliver_us.is_none().then_some("held"))}
               style={format!("transform: translate({}px, {}px)", px(p.0), px(p.1))}>
                <title>{ title }</title>
                <circle r="7" />
                <text y="-12">{ if ring { headline(&m.label) } else { truncate(&m.label, 34) } }</text>
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
        let (w, h) = card_size(&info.kind, ring, card_w);
        let (left, top) = (x - w / 2.0, y - h / 2.0);
        // Raft cards use a slightly smaller line font so "vote S1 · log 3 · commit 2" fits.
        let chars = (w / if ring { 7.6 } else { 8.2 }) as usize;
        html! {
            <g class={classes!("node", status_class, info.kind.clone(), involved.then_some("acting"))} data-node={info.name.clone()}>
                if info.kind == "database" {
                    <ellipse class="db-top" cx={px(x)} cy={px(top)} rx={px(w / 2.0)} ry="10" />
                }
                <rect x={px(left)} y={px(top)} width={px(w)} height={px(h)} rx="10" />
                <text class="node-name" x={px(left + 12.0)} y={px(top + 24.0)}>{ &info.name }</text>
                // A Raft card's corner holds its timer; its first line already names the role.
                if w > 180.0 && info.kind != info.name && !ring && n.gauge.is_none() {
                    <text class="node-kind" x={px(left + w - 12.0)} y={px(top + 24.0)} text-anchor="end">{ &info.kind }</text>
                }
                if let Some(g) = &n.gauge {
                    { gauge_view(g, left + w, top, !ring) }
                }
                { for n.lines.iter().take(2).enumerate().map(|(i, line)| html! {
                    <text class="node-line" x={px(left + 12.0)} y={px(top + 48.0 + 20.0 * i as f64)}>{ truncate(line, chars) }</text>
                }) }
                if info.kind == "raft-server" && ring {
                    { log_view(&n.log, left, top, w) }
                }
                if let Some(badge) = badge {
                    <text class="badge" x={px(x)} y={px(top + h + 20.0)} text-anchor="middle">{ badge }</text>
                }
                if n.clock_offset_us != 0 {
                    <text class="clock" x={px(left + w - 12.0)} y={px(top + h - 10.0)} text-anchor="end">
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
            <svg viewBox={format!("0 0 {} {}", px(WIDTH), px(height))} role="img"
                 aria-label={format!("Participants and messages at step {}", props.cursor)}>
                <defs>
                    <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z" />
                    </marker>
                    <marker id="link-arrow" class="link-arrow" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="5" markerHeight="5" orient="auto">
                        <path d="M 0 0 L 10 5 L 0 10 z" />
                    </marker>
                    <marker id="link-arrow-held" class="link-arrow held" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="5" markerHeight="5" orient="auto">
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
            <ul class="visually-hidden" aria-label="Participants at this step">
                { for snap.nodes.iter().map(|n| html! { <li>{ describe_node(trace.node_name(n.id), n) }</li> }) }
            </ul>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::{around_from_top, headline};

    #[test]
    fn ring_positions_match_the_trigonometry() {
        for n in 1..=16 {
            for k in 0..n {
                let a = std::f64::consts::TAU * k as f64 / n as f64 - std::f64::consts::FRAC_PI_2;
                let (c, s) = around_from_top(k, n);
                assert!(
                    (c - a.cos()).abs() < 1e-9 && (s - a.sin()).abs() < 1e-9,
                    "k={k} n={n}: {c},{s}"
                );
            }
        }
    }

    #[test]
    fn headlines_keep_the_gist_of_a_label() {
        assert_eq!(
            headline("heartbeat term 1 (prev #0/t0, commit #0)"),
            "heartbeat term 1"
        );
        assert_eq!(
            headline("append ok · term 1 · matches up to #1"),
            "append ok · term 1"
        );
        assert_eq!(headline("request 1: set x=1"), "request 1: set x=1");
        assert_eq!(
            headline("reply 12: not the leader, try S1"),
            "reply 12: not the leader"
        );
        assert_eq!(
            headline("AppendEntries term 1 +1 after #0/t0 (commit #0)"),
            "AppendEntries term 1 +1 after…"
        );
    }
}
