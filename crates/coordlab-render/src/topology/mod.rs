//! The topology at one step: participants as cards with their state, the links between them,
//! broken links, the message this step delivered and messages in flight, each drawn where it
//! is between send and delivery.
//!
//! The picture is drawn for the box it gets on screen, one unit a CSS pixel ([`Space`]), so
//! its type is as large as that box allows and a font size here is what a room reads. What the
//! current beat is about ([`focus_at`]) is drawn in full and labelled; the rest compact and
//! quiet ([`card`]). Where cards sit is chosen once per run ([`layout::arrange`]).

pub mod card;
mod labels;
pub mod layout;
pub mod text;

pub use labels::LabelPlace;
pub use layout::{Arrangement, Bounds, Layout, Space, Type};

use crate::markup::{escape, px, Markup};
use coordlab_sim::kernel::collections::VecSet;
use coordlab_sim::kernel::time::format_time;
use coordlab_sim::trace::{LinkView, NodeStatus, NodeView, Snapshot, Trace};

/// The pairs of participants that exchange messages at some point of the run: the only links
/// worth drawing (a full mesh hides who really talks to whom).
pub fn talking_pairs(trace: &Trace) -> VecSet<(u32, u32)> {
    let pair = |a: u32, b: u32| (a.min(b), a.max(b));
    let mut pairs = VecSet::new();
    for e in &trace.entries {
        for m in e.message.iter().chain(&e.lost) {
            pairs.insert(pair(m.from.0, m.to.0));
        }
        if let Some(s) = &e.snapshot {
            for m in &s.messages {
                pairs.insert(pair(m.from.0, m.to.0));
            }
        }
    }
    pairs
}

/// Cosine and sine of the `k`th of `n` equal steps around a circle, starting at the top and
/// going clockwise on screen. A short series instead of `f64::cos`/`sin`, whose wasm
/// implementations cost kilobytes; exact to far below a pixel.
pub fn around_from_top(k: usize, n: usize) -> (f64, f64) {
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

pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// The gist of a message label for a crowded picture (the tooltip keeps the whole label):
/// the part before any parenthesis or comma, at most two ` · ` parts, e.g.
/// `heartbeat term 1 (prev #0/t0, commit #0)` → `heartbeat term 1`.
pub fn headline(label: &str) -> String {
    let head = label.split([',', '(']).next().unwrap_or(label).trim_end();
    let head: Vec<&str> = head.split(" · ").take(2).collect();
    truncate(&head.join(" · "), 30)
}

/// Which participants the step on screen is about, by node id: those the current beat names
/// (or, when it names none, those its step involved: the actor, and the sender and receiver of
/// the message it delivered). Before the first beat nothing is in focus: the picture is an
/// overview. Between two beats the focus stays the earlier beat's, so cards do not move while
/// the story is between its moments.
pub fn focus_at(trace: &Trace, cursor: usize) -> Vec<bool> {
    let mut focus = vec![false; trace.nodes.len()];
    let beat = trace
        .reached_beats()
        .take_while(|(seq, _)| *seq as usize <= cursor)
        .last();
    let Some((seq, b)) = beat else {
        return focus;
    };
    if !b.focus.is_empty() {
        for (i, n) in trace.nodes.iter().enumerate() {
            focus[i] = b.focus.contains(&n.name);
        }
    } else if let Some(e) = trace.entries.get(seq as usize) {
        for id in &e.nodes {
            if let Some(f) = focus.get_mut(id.index()) {
                *f = true;
            }
        }
        if let Some(m) = &e.message {
            for id in [m.from, m.to] {
                if let Some(f) = focus.get_mut(id.index()) {
                    *f = true;
                }
            }
        }
    }
    focus
}

/// A point `f` of the way along the line from `a` to `b`, shifted sideways so the two
/// directions of one link do not overlap.
fn along_span(a: (f64, f64), b: (f64, f64), f: f64) -> (f64, f64) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    // The left-hand normal of the travel direction flips with the direction, so the two
    // directions of one link sit on opposite sides of the line.
    let (nx, ny) = (-dy / len * 12.0, dx / len * 12.0);
    (a.0 + dx * f + nx, a.1 + dy * f + ny)
}

/// A message in flight as the picture places it.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageMark {
    pub id: u64,
    pub x: i64,
    pub y: i64,
    /// What the picture writes beside it.
    pub text: String,
    /// Where the text sits relative to the dot, clear of every card; `None` when the message
    /// is not about the focus or no place beside the dot is clear (its tooltip has it).
    pub label: Option<LabelPlace>,
    /// The label's font size, px.
    pub size: i64,
    /// The whole story, for the tooltip.
    pub title: String,
    pub reply: bool,
    pub held: bool,
}

/// What to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopologyOptions {
    /// Messages in flight (the browser leaves them out and draws them itself, to animate).
    pub messages: bool,
    /// The box to draw for.
    pub space: Space,
}

/// What the picture of one run keeps from step to step: the arrangement of its cards for its
/// box, and the links (both fixed for a run). Made once per run and box — finding the links
/// reads every entry — and then read by every step's drawing.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub space: Space,
    pub arrangement: Arrangement,
    pairs: Vec<(u32, u32)>,
}

/// The picture at step `cursor` in pieces that change at different rates, so the browser can
/// replace only the pieces a step changed (a Raft step changes the actor's card and every
/// timer, not the whole drawing). Joined in order inside the `<svg>` they are [`svg`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SvgParts {
    pub view_box: String,
    pub aria_label: String,
    /// Markup for the `<svg>` element's children, in drawing order: the markers and the links,
    /// broken links, the delivered message's arrow, each card's body, each card's timer,
    /// messages in flight (when asked for) and lost messages.
    pub pieces: Vec<String>,
}

impl SvgParts {
    /// The whole picture as one `<svg>` element.
    pub fn join(&self) -> String {
        let mut s = Markup::default();
        s.el("svg")
            .attr("xmlns", "http://www.w3.org/2000/svg")
            .attr("viewBox", &self.view_box)
            .attr("role", "img")
            .attr("aria-label", &self.aria_label)
            .open();
        for piece in &self.pieces {
            s.out.push_str(piece);
        }
        s.close("svg");
        s.out
    }
}

impl Frame {
    /// The frame of `trace`'s picture in `space`.
    pub fn new(trace: &Trace, space: Space) -> Frame {
        let space = space.sane();
        // Every beat's focus, and the overview before the first: the arrangement must suit
        // them all.
        let mut focuses = vec![vec![false; trace.nodes.len()]];
        for (seq, _) in trace.reached_beats() {
            let f = focus_at(trace, seq as usize);
            if !focuses.contains(&f) {
                focuses.push(f);
            }
        }
        Frame {
            arrangement: layout::arrange(&trace.nodes, &space, &focuses),
            space,
            pairs: talking_pairs(trace).iter().copied().collect(),
        }
    }

    /// The layout at step `cursor`: the arrangement with the cards in focus there in full.
    pub fn layout_at(&self, trace: &Trace, cursor: usize) -> Layout {
        layout::lay_out(
            &trace.nodes,
            self.arrangement,
            &self.space,
            &focus_at(trace, cursor),
        )
    }

    /// Every message in flight in `snap`, placed between its ends by the fraction of its trip
    /// already done; those to or from a card in focus labelled beside it, clear of the cards
    /// and of the labels before it.
    pub fn messages(&self, trace: &Trace, snap: &Snapshot, lay: &Layout) -> Vec<MessageMark> {
        let now = snap.time_us;
        let size = lay.ty.small;
        let air = labels::with_air(&lay.boxes);
        let view = (0.0, 0.0, lay.width, lay.height);
        // Earlier labels count as obstacles too, the broken links' first: two labels on top
        // of each other read as neither.
        let mut obstacles = lay.boxes.clone();
        obstacles.extend(link_label_boxes(&link_marks(trace, &snap.links, lay), size));
        let cluster = layout::is_cluster(&trace.nodes);
        // Every dot first: a label must not sit under another message's dot either.
        let dots: Vec<(f64, f64)> = snap
            .messages
            .iter()
            .map(|m| {
                let f = match m.deliver_us {
                    Some(d) if d > m.sent_us => now.saturating_sub(m.sent_us) as f64 / (d - m.sent_us) as f64,
                    Some(_) => 1.0,
                    None => 0.0,
                };
                labels::between_cards(lay, &air, m.from.index(), m.to.index(), f)
            })
            .collect();
        let first_dot = obstacles.len();
        obstacles.extend(dots.iter().map(|d| (d.0 - 8.0, d.1 - 8.0, d.0 + 8.0, d.1 + 8.0)));
        snap.messages
            .iter()
            .zip(&dots)
            .enumerate()
            .map(|(k, (m, &p))| {
                let text = if cluster {
                    headline(&m.label)
                } else {
                    truncate(&m.label, 34)
                };
                let about_focus = lay.full.get(m.from.index()).copied().unwrap_or(false)
                    || lay.full.get(m.to.index()).copied().unwrap_or(false);
                let label = if about_focus {
                    // Clear of everything but its own dot.
                    let own = first_dot + k;
                    let others: Vec<Bounds> = obstacles
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != own)
                        .map(|(_, b)| *b)
                        .collect();
                    labels::place(&others, view, p, &text, size)
                } else {
                    None
                };
                if let Some(place) = label {
                    obstacles.push(place.bounds(p, &text, size));
                }
                MessageMark {
                    id: m.id.0,
                    x: px(p.0),
                    y: px(p.1),
                    label,
                    size: px(size),
                    text,
                    title: format!(
                        "{} → {}: {} (sent {}, arrives {})",
                        trace.node_name(m.from),
                        trace.node_name(m.to),
                        m.label,
                        format_time(m.sent_us),
                        m.deliver_us.map_or("when released".to_string(), format_time)
                    ),
                    reply: m.from.0 < m.to.0 && m.from.0 == 0,
                    held: m.deliver_us.is_none(),
                }
            })
            .collect()
    }

    /// The picture at step `cursor`, whose state is `snap`, laid out as `lay`, in the pieces
    /// [`SvgParts`] describes, with the messages in flight when `with_messages`; `None` past
    /// the end of the run.
    pub fn parts(
        &self,
        trace: &Trace,
        cursor: usize,
        snap: &Snapshot,
        lay: &Layout,
        with_messages: bool,
    ) -> Option<SvgParts> {
        let entry = trace.entries.get(cursor)?;
        let centre = |i: usize| lay.centre(i);
        let mut pieces = Vec::with_capacity(6 + 2 * snap.nodes.len());
        let mut s = Markup::default();
        defs(&mut s);
        for &(i, j) in &self.pairs {
            let (a, b) = (centre(i as usize), centre(j as usize));
            line(&mut s, "link", a, b, None);
        }
        pieces.push(std::mem::take(&mut s.out));
        broken_links(&mut s, trace, &snap.links, lay);
        pieces.push(std::mem::take(&mut s.out));
        // The message this step delivered, as an arrow: the "what just happened".
        if let Some(m) = &entry.message {
            let (a, b) = (centre(m.from.index()), centre(m.to.index()));
            let (from, to) = (along_span(a, b, 0.24), along_span(a, b, 0.76));
            line(&mut s, "just-delivered", from, to, Some("url(#arrow)"));
        }
        pieces.push(std::mem::take(&mut s.out));
        let acting = entry.nodes.first();
        for node in &snap.nodes {
            let i = node.id.index();
            let info = &trace.nodes[i];
            card::draw(
                &mut s,
                info,
                node,
                lay.boxes[i],
                layout::shape(&info.kind),
                &lay.ty,
                lay.full[i],
                acting == Some(&node.id),
            );
            pieces.push(std::mem::take(&mut s.out));
        }
        // The timers tick at every step; drawn apart from the cards so a card is redrawn only
        // when what it says changes.
        for node in &snap.nodes {
            if let (Some(g), false) = (&node.gauge, node.status == NodeStatus::Crashed) {
                let i = node.id.index();
                card::gauge(
                    &mut s,
                    g,
                    node,
                    trace.node_name(node.id),
                    lay.boxes[i],
                    &lay.ty,
                    lay.full[i],
                );
            }
            pieces.push(std::mem::take(&mut s.out));
        }
        if with_messages {
            for m in self.messages(trace, snap, lay) {
                message_svg(&mut s, &m);
            }
        }
        pieces.push(std::mem::take(&mut s.out));
        // What the network lost at this step: one label, clear of the cards and of the labels
        // of messages in flight (several lost at once — a partition — are counted, not
        // listed; the narration names them).
        if let Some(first) = entry.lost.first() {
            let air = labels::with_air(&lay.boxes);
            let view = (0.0, 0.0, lay.width, lay.height);
            let mut obstacles = lay.boxes.clone();
            obstacles.extend(link_label_boxes(
                &link_marks(trace, &snap.links, lay),
                lay.ty.small,
            ));
            for m in self.messages(trace, snap, lay) {
                if let Some(l) = m.label {
                    obstacles.push(l.bounds((m.x as f64, m.y as f64), &m.text, m.size as f64));
                }
            }
            let p = labels::between_cards(lay, &air, first.from.index(), first.to.index(), 0.3);
            let text = match entry.lost.len() {
                1 => format!("✕ lost: {}", headline(&first.label)),
                n => format!("✕ {n} messages lost"),
            };
            if let Some(place) = labels::place(&obstacles, view, p, &text, lay.ty.small) {
                s.el("text")
                    .attr("class", "lost")
                    .num("x", px(p.0) + place.dx)
                    .num("y", px(p.1) + place.dy)
                    .num("font-size", px(lay.ty.small))
                    .attr("text-anchor", place.anchor())
                    .text(&text);
            }
        }
        pieces.push(s.out);
        Some(SvgParts {
            view_box: lay.view_box(),
            aria_label: format!("Participants and messages at step {cursor}"),
            pieces,
        })
    }
}

fn line(s: &mut Markup, class: &str, a: (f64, f64), b: (f64, f64), marker: Option<&str>) {
    let mut el = s
        .el("line")
        .attr("class", class)
        .num("x1", px(a.0))
        .num("y1", px(a.1))
        .num("x2", px(b.0))
        .num("y2", px(b.1));
    if let Some(m) = marker {
        el = el.attr("marker-end", m);
    }
    el.leaf();
}

/// Draws one message mark (the browser draws the same marks itself, to animate them).
fn message_svg(s: &mut Markup, m: &MessageMark) {
    let class = match (m.reply, m.held) {
        (_, true) => "msg held",
        (true, false) => "msg reply",
        (false, false) => "msg",
    };
    s.el("g")
        .attr("class", class)
        .num("data-msg", m.id)
        .attr("transform", &format!("translate({} {})", m.x, m.y))
        .open();
    s.title(&m.title);
    s.el("circle").num("r", 7).leaf();
    if let Some(place) = m.label {
        s.el("text")
            .num("x", place.dx)
            .num("y", place.dy)
            .num("font-size", m.size)
            .attr("text-anchor", place.anchor())
            .text(&m.text);
    }
    s.close("g");
}

/// The picture at step `cursor`, whose state is `snap` (the entry's own snapshot, or one
/// computed on demand for a trace recorded without them), as one `<svg>` element.
pub fn svg(trace: &Trace, cursor: usize, snap: &Snapshot, options: TopologyOptions) -> String {
    svg_parts(trace, cursor, snap, options).map_or_else(String::new, |p| p.join())
}

/// [`svg`] in the pieces [`SvgParts`] describes; `None` past the end of the run. For many
/// steps of one run, make its [`Frame`] once and call [`Frame::parts`].
pub fn svg_parts(
    trace: &Trace,
    cursor: usize,
    snap: &Snapshot,
    options: TopologyOptions,
) -> Option<SvgParts> {
    let frame = Frame::new(trace, options.space);
    let lay = frame.layout_at(trace, cursor);
    frame.parts(trace, cursor, snap, &lay, options.messages)
}

fn defs(s: &mut Markup) {
    s.out.push_str(concat!(
        r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/></marker>"#,
        r#"<marker id="link-arrow" class="link-arrow" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="5" markerHeight="5" orient="auto"><path d="M 0 0 L 10 5 L 0 10 z"/></marker>"#,
        r#"<marker id="link-arrow-held" class="link-arrow held" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="5" markerHeight="5" orient="auto"><path d="M 0 0 L 10 5 L 0 10 z"/></marker>"#,
        r#"<pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" class="hatch-bg"/><line x1="0" y1="0" x2="0" y2="8" class="hatch-line"/></pattern></defs>"#,
    ));
}

/// A broken link as the picture draws it.
struct LinkMark<'a> {
    link: &'a LinkView,
    /// Broken the same way in both directions (a partition): one centred line.
    both: bool,
    /// Start, middle and end of its line.
    line: [(f64, f64); 3],
    /// Its label and where it goes beside the middle, clear of the cards and of the labels
    /// before it; `None` when no place is clear, or when too many links are broken to label.
    label: Option<(String, LabelPlace)>,
}

/// Broken links: a link broken the same way in both directions (what a partition does) is one
/// centred line; a one-way break sits on its direction's side of the link. Labels only while
/// few links are broken: a partition breaks many at once and the red lines say it better.
fn link_marks<'a>(trace: &Trace, links: &'a [LinkView], lay: &Layout) -> Vec<LinkMark<'a>> {
    let same_back = |l: &LinkView| {
        links
            .iter()
            .any(|r| r.from == l.to && r.to == l.from && r.cut == l.cut && r.held == l.held)
    };
    let label_links = links.len() <= 4;
    let view = (0.0, 0.0, lay.width, lay.height);
    let mut obstacles = lay.boxes.clone();
    links
        .iter()
        .filter(|l| !(same_back(l) && l.from > l.to))
        .map(|l| {
            let (a, b) = (lay.centre(l.from.index()), lay.centre(l.to.index()));
            let both = same_back(l);
            let line = if both {
                [a, ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0), b]
            } else {
                [
                    along_span(a, b, 0.0),
                    along_span(a, b, 0.5),
                    along_span(a, b, 1.0),
                ]
            };
            let label = label_links
                .then(|| {
                    let text = format!(
                        "{} {}{}{}",
                        if l.cut { "✂ cut" } else { "held" },
                        trace.node_name(l.from),
                        if both { "↔" } else { "→" },
                        trace.node_name(l.to)
                    );
                    let place = labels::place(&obstacles, view, line[1], &text, lay.ty.small)?;
                    obstacles.push(place.bounds(line[1], &text, lay.ty.small));
                    Some((text, place))
                })
                .flatten();
            LinkMark {
                link: l,
                both,
                line,
                label,
            }
        })
        .collect()
}

/// The boxes of the broken links' labels, which the labels drawn after them keep clear of.
fn link_label_boxes(marks: &[LinkMark<'_>], size: f64) -> Vec<Bounds> {
    marks
        .iter()
        .filter_map(|m| {
            m.label
                .as_ref()
                .map(|(text, place)| place.bounds(m.line[1], text, size))
        })
        .collect()
}

/// Draws the broken links with their labels, or a legend when there are too many to label.
fn broken_links(s: &mut Markup, trace: &Trace, links: &[LinkView], lay: &Layout) {
    let size = lay.ty.small;
    for m in link_marks(trace, links, lay) {
        let l = m.link;
        let (f, t) = (trace.node_name(l.from), trace.node_name(l.to));
        let class = match (l.cut, l.held) {
            (true, true) => "link-state cut held",
            (true, false) => "link-state cut",
            (false, true) => "link-state held",
            (false, false) => "link-state",
        };
        let data = escape(&format!("{f}{}{t}", if m.both { "<->" } else { "->" }));
        s.el("g").attr("class", class).attr("data-link", &data).open();
        s.title(&format!(
            "{} {f} {} {t}",
            if l.cut { "✂ cut" } else { "held" },
            if m.both { "↔" } else { "→" }
        ));
        let [start, mid, end] = m.line;
        let d = format!(
            "M {} {} L {} {} L {} {}",
            px(start.0),
            px(start.1),
            px(mid.0),
            px(mid.1),
            px(end.0),
            px(end.1)
        );
        let path = s.el("path").attr("d", &d);
        match (m.both, l.cut) {
            (true, _) => path.leaf(),
            (false, true) => path.attr("marker-mid", "url(#link-arrow)").leaf(),
            (false, false) => path.attr("marker-mid", "url(#link-arrow-held)").leaf(),
        }
        if let Some((text, place)) = &m.label {
            s.el("text")
                .num("x", px(mid.0) + place.dx)
                .num("y", px(mid.1) + place.dy)
                .num("font-size", px(size))
                .attr("text-anchor", place.anchor())
                .text(text);
        }
        s.close("g");
    }
    let cut_count = links.iter().filter(|l| l.cut).count();
    if links.len() > 4 && cut_count > 0 {
        s.el("text")
            .attr("class", "cut-legend")
            .num("x", px(lay.width - 8.0))
            .num("y", px(lay.height - 6.0))
            .num("font-size", px(size))
            .attr("text-anchor", "end")
            .text(&format!("✂ {cut_count} one-way links cut (red dashes)"));
    }
}

/// One line per participant for screen readers: the picture as words.
pub fn describe_node(name: &str, node: &NodeView) -> String {
    format!("{name}: {}", card::describe(node))
}

#[cfg(test)]
mod tests;
