//! One participant's card, drawn from its typed summary: the name, the state as an icon and one
//! large word on a pill coloured by its tone, the badges' figures large, then as many details
//! as the card has room for. A card in focus is drawn in full at the picture's large type; the
//! others compact (name, word and first figure) and quiet. Sizes and drawing live together so a
//! card is always drawn inside the box its size asked for.

use super::layout::{Bounds, Type};
use super::text;
use crate::markup::{escape, n, px, Markup};
use coordlab_sim::kernel::time::{format_duration, format_instant, format_signed_duration, MS_US};
use coordlab_sim::trace::{Badge, Gauge, LogCell, NodeInfo, NodeStatus, NodeView, Tone};

/// How a card is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Plain,
    /// A consensus server: its term beside its name, a timer in the corner, its log as cells.
    Server,
}

/// How much of a card is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Everything that fits: name, state word, badges with their labels, details, log, timer.
    Full,
    /// The name with the first figure, and the state word (a server keeps its log).
    Compact,
    /// One line: an icon coloured by the state, and the name (a server keeps its log).
    Chip,
}

/// The longest state word a card plans room for; a longer one is drawn narrower.
const WORD_ROOM: &str = "candidate";
/// The widest figure and badge label a card plans room for.
const FIGURE_ROOM: &str = "₹100";
const LABEL_ROOM: &str = "highest";
/// Log cells a server card plans room for (older ones fold into "…").
const CELLS_ROOM: usize = 4;

/// The sizes one card is drawn at.
struct Metrics {
    name: f64,
    word: f64,
    figure: f64,
    label: f64,
    detail: f64,
    cell: f64,
    pad: f64,
    stack: bool,
}

impl Metrics {
    fn new(ty: &Type, level: Level) -> Metrics {
        let main = if level == Level::Full { ty.big } else { ty.quiet };
        Metrics {
            name: main,
            word: main,
            figure: main,
            label: ty.small,
            detail: ty.small,
            cell: ty.cell,
            pad: if level == Level::Chip {
                (ty.small * 0.35).round().max(3.0)
            } else {
                (ty.small * 0.6).round().max(5.0)
            },
            stack: ty.stack,
        }
    }

    fn row(&self) -> f64 {
        self.name * 1.25
    }

    fn pill_h(&self) -> f64 {
        (self.word * 1.35).round()
    }

    fn pill_w(&self, word: &str) -> f64 {
        text::width(&format!("★ {word}"), self.word, true) + self.word * 0.7
    }

    fn detail_row(&self) -> f64 {
        self.detail * 1.35
    }

    /// A badge as a stack: its label over its figure.
    fn badge_w(&self, label: &str, value: &str) -> f64 {
        text::width(value, self.figure, true).max(text::width(label, self.label, false))
    }

    fn badge_h(&self) -> f64 {
        self.label * 1.15 + self.figure * 1.1
    }

    /// A badge on one line: its label, then its figure.
    fn inline_badge_w(&self, label: &str, value: &str) -> f64 {
        text::width(label, self.label, false) + self.label * 0.35 + text::width(value, self.figure, true)
    }

    fn cell_w(&self) -> f64 {
        (self.cell * 1.9).round()
    }

    fn cell_h(&self) -> f64 {
        (self.cell * 1.55).round()
    }

    fn log_h(&self) -> f64 {
        self.cell_h() + self.label * 1.2
    }

    fn gauge_r(&self) -> f64 {
        (self.name * 0.42).round().max(5.0)
    }
}

/// The level a card is drawn at: the type's level for cards in focus, or for the rest.
pub fn level(ty: &Type, full: bool) -> Level {
    if full {
        ty.focus
    } else {
        ty.rest
    }
}

/// The width and height a card needs: for `name`, in focus (`full`) or not, at `ty`.
#[inline(never)]
pub fn need(name: &str, shape: Shape, ty: &Type, full: bool) -> (f64, f64) {
    let level = level(ty, full);
    let m = Metrics::new(ty, level);
    let name_w = text::width(name, m.name, true);
    let pill = m.pill_w(WORD_ROOM);
    let gap = m.pad;
    let log = if shape == Shape::Server {
        4.0 + m.log_h()
    } else {
        0.0
    };
    let cells = if shape == Shape::Server {
        let room = if level == Level::Chip {
            CELLS_ROOM - 1
        } else {
            CELLS_ROOM
        };
        room as f64 * (m.cell_w() + 3.0)
    } else {
        0.0
    };
    match (shape, level) {
        (_, Level::Chip) => {
            // The first figure is drawn where it fits; a chip plans no room for it.
            // Room for the widest icon a chip draws (… for waiting), so no name is cut.
            let line = text::width(&format!("… {name}"), m.name, true);
            let w = line.max(cells) + 2.0 * m.pad;
            (w.ceil(), (2.0 * m.pad + m.name * 1.3 + log).ceil())
        }
        (Shape::Server, _) => {
            let head = name_w + gap + m.inline_badge_w("term", "12") + gap + 2.0 * m.gauge_r();
            let w = head.max(pill).max(cells) + 2.0 * m.pad;
            (w.ceil(), (2.0 * m.pad + m.row() + m.pill_h() + log).ceil())
        }
        (Shape::Plain, Level::Full) => {
            let badge = m.badge_w(LABEL_ROOM, FIGURE_ROOM);
            let column = name_w.max(pill);
            let base = 2.0 * m.pad + m.row() + m.pill_h() + 4.0;
            if m.stack {
                let w = column.max(badge) + 2.0 * m.pad;
                (w.ceil(), (base + m.badge_h()).ceil())
            } else {
                let w = column + gap + badge + 2.0 * m.pad;
                (w.ceil(), base.ceil())
            }
        }
        (Shape::Plain, Level::Compact) => {
            let head = name_w + gap + text::width(FIGURE_ROOM, m.figure, true);
            let w = head.max(pill) + 2.0 * m.pad;
            (w.ceil(), (2.0 * m.pad + m.row() + m.pill_h()).ceil())
        }
    }
}

/// How much taller than it needs a card in focus may grow when the picture has the height:
/// a row of badges under its word and two lines of details.
pub fn growth(ty: &Type) -> f64 {
    let m = Metrics::new(ty, Level::Full);
    (m.badge_h() + 2.0 * m.detail_row()).ceil()
}

/// The icon beside a state word: the shape says what the colour says.
fn icon(tone: Tone) -> char {
    match tone {
        Tone::Quiet => '○',
        Tone::Asking => '→',
        Tone::Waiting => '…',
        Tone::Holds => '★',
        Tone::Done => '✓',
        Tone::Failed => '✕',
    }
}

#[inline(never)]
fn text_el(s: &mut Markup, class: &str, x: f64, y: f64, size: f64, anchor: Option<&str>, body: &str) {
    let mut el = s
        .el("text")
        .attr("class", class)
        .num("x", px(x))
        .num("y", px(y))
        .num("font-size", px(size));
    if let Some(a) = anchor {
        el = el.attr("text-anchor", a);
    }
    el.text(body);
}

/// The pill that carries the state: an icon and the word, coloured by its tone; narrowed to
/// `room` if the word is long.
#[inline(never)]
fn pill(s: &mut Markup, (x, y): (f64, f64), m: &Metrics, (tone, icon, word): (&str, char, &str), room: f64) {
    let label = format!("{icon} {word}");
    let natural = text::width(&label, m.word, true);
    let inner = (room - m.word * 0.7).max(m.word);
    let size = if natural <= inner {
        m.word
    } else {
        // A long word is drawn smaller rather than cut, down to the smallest size.
        (m.word * inner / natural).floor().max(m.label)
    };
    let shown = text::fit(&label, size, true, inner);
    let w = text::width(&shown, size, true) + m.word * 0.7;
    let h = m.pill_h();
    s.el("rect")
        .attr("class", &format!("pill {tone}"))
        .num("x", px(x))
        .num("y", px(y))
        .num("width", px(w))
        .num("height", px(h))
        .num("rx", px(h / 2.0))
        .leaf();
    text_el(
        s,
        "node-word",
        x + m.word * 0.35,
        y + h / 2.0 + size * 0.36,
        size,
        None,
        &shown,
    );
}

/// What the card says of its state: the tone's class, the icon and the word (the node's status
/// overrides its own word while it is down or paused).
fn state(node: &NodeView) -> (&'static str, &'static str, char, &str) {
    let sum = &node.summary;
    match node.status {
        NodeStatus::Up => ("up", sum.tone.code(), icon(sum.tone), sum.word.as_str()),
        NodeStatus::Crashed => ("crashed", "down", '✕', "crashed"),
        NodeStatus::Paused { .. } => ("paused", "paused", '‖', "paused"),
    }
}

/// One participant's card in the box `b`.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn draw(
    s: &mut Markup,
    info: &NodeInfo,
    node: &NodeView,
    b: Bounds,
    shape: Shape,
    ty: &Type,
    full: bool,
    acting: bool,
) {
    let level = level(ty, full);
    let m = Metrics::new(ty, level);
    let (status, tone, icon, word) = state(node);
    let class = format!(
        "node {status} {} {tone}{}{}{}",
        escape(&info.kind),
        if full { " focus" } else { " quiet" },
        if level == Level::Chip { " node-chip" } else { "" },
        if acting { " acting" } else { "" }
    );
    let (w, h) = (b.2 - b.0, b.3 - b.1);
    s.el("g")
        .attr("class", &class)
        .attr("data-node", &escape(&info.name))
        .open();
    s.title(&format!("{}: {}", info.name, node.summary.describe()));
    s.el("rect")
        .attr("class", if level == Level::Chip { "card pill" } else { "card" })
        .num("x", px(b.0))
        .num("y", px(b.1))
        .num("width", px(w))
        .num("height", px(h))
        .num(
            "rx",
            px(if level == Level::Chip {
                m.name * 0.65
            } else {
                m.pad * 1.4
            }),
        )
        .leaf();
    let left = b.0 + m.pad;
    let inner = w - 2.0 * m.pad;
    let mut y = b.1 + m.pad;
    // A clock that runs off is a large figure first: where it happens, it is the story.
    let mut badges = node.summary.badges.clone();
    if node.clock_offset_us != 0 {
        badges.insert(
            0,
            Badge {
                label: "clock".into(),
                value: format_signed_duration(node.clock_offset_us),
            },
        );
    }
    let badges = &badges;
    if level == Level::Chip {
        // One line: the icon and the name, the first figure at the right where it fits.
        let base = y + m.name * 0.98;
        let line = format!("{icon} {}", info.name);
        let value_room = badges
            .first()
            .map(|bd| text::width(&bd.value, m.figure, true) + m.pad)
            .filter(|vw| text::width(&line, m.name, true) + vw <= inner);
        text_el(
            s,
            "node-name",
            left,
            base,
            m.name,
            None,
            &text::fit(&line, m.name, true, inner),
        );
        if let (Some(bd), Some(_)) = (badges.first(), value_room) {
            text_el(
                s,
                "badge-value",
                b.2 - m.pad,
                base,
                m.figure,
                Some("end"),
                &bd.value,
            );
        }
        y += m.name * 1.3 + 4.0;
        if shape == Shape::Server {
            log_strip(s, &node.log, left, y, inner, &m);
        }
        s.close("g");
        return;
    }
    // Row 1: the name, and the badges that fit beside it.
    let name_w = text::width(&info.name, m.name, true).min(inner);
    let base = y + m.name * 0.93;
    text_el(
        s,
        "node-name",
        left,
        base,
        m.name,
        None,
        &text::fit(&info.name, m.name, true, inner),
    );
    let mut extra: Vec<String> = Vec::new();
    let mut below = Vec::new();
    let mut pill_room = inner;
    match (shape, level) {
        (Shape::Server, _) => {
            // The term right after the name, on its line (the timer is in the corner).
            if let Some(bd) = badges.first() {
                let x = left + name_w + m.pad;
                let room = b.2 - m.pad - 2.0 * m.gauge_r() - m.pad - x;
                if m.inline_badge_w(&bd.label, &bd.value) <= room {
                    text_el(s, "badge-label", x, base, m.label, None, &bd.label);
                    let vx = x + text::width(&bd.label, m.label, false) + m.label * 0.35;
                    text_el(s, "badge-value", vx, base, m.figure, None, &bd.value);
                } else {
                    extra.push(format!("{} {}", bd.label, bd.value));
                }
            }
            extra.extend(
                badges
                    .iter()
                    .skip(1)
                    .map(|bd| format!("{} {}", bd.label, bd.value)),
            );
        }
        (Shape::Plain, Level::Compact) => {
            // A compact card shows its first figure only, at the right of its name, with its
            // label where there is room.
            if let Some(bd) = badges.first() {
                let value_w = text::width(&bd.value, m.figure, true);
                let room = inner - name_w - m.pad;
                if value_w <= room {
                    text_el(
                        s,
                        "badge-value",
                        b.2 - m.pad,
                        base,
                        m.figure,
                        Some("end"),
                        &bd.value,
                    );
                    if m.inline_badge_w(&bd.label, &bd.value) <= room {
                        let x = b.2 - m.pad - value_w - m.label * 0.35;
                        text_el(s, "badge-label", x, base, m.label, Some("end"), &bd.label);
                    }
                }
            }
        }
        (Shape::Plain, _) => {
            // Badges stacked at the right of rows 1–2 while they leave the name and the word
            // their room; the others go under the word.
            let mut right = b.2 - m.pad;
            let column = name_w.max(m.pill_w(word).min(inner));
            for bd in badges {
                let bw = m.badge_w(&bd.label, &bd.value);
                if !m.stack && below.is_empty() && right - bw >= left + column + m.pad {
                    badge_stack(s, right, b.1 + m.pad, &m, &bd.label, &bd.value);
                    right -= bw + m.pad * 1.5;
                } else {
                    below.push(bd);
                }
            }
            pill_room = (right - left).max(inner * 0.5);
        }
    }
    y += m.row();
    pill(s, (left, y), &m, (tone, icon, word), pill_room);
    y += m.pill_h() + 4.0;
    // Badges that did not fit beside the name: a row of stacks under the pill, where the card
    // has the height; else said as details.
    if !below.is_empty() {
        let mut x = left;
        for bd in below {
            let bw = m.badge_w(&bd.label, &bd.value);
            if y + m.badge_h() <= b.3 - m.pad + 1.0 && x + bw <= b.2 - m.pad + 1.0 {
                badge_stack(s, x + bw, y, &m, &bd.label, &bd.value);
                x += bw + m.pad * 1.5;
            } else {
                extra.push(format!("{} {}", bd.label, bd.value));
            }
        }
        if x > left {
            y += m.badge_h();
        }
    }
    if shape == Shape::Server {
        log_strip(s, &node.log, left, y, inner, &m);
        y += m.log_h();
    }
    if level == Level::Full {
        details(s, node, extra, left, y, b.3 - m.pad * 0.5, inner, &m);
    }
    s.close("g");
}

/// A full card's details, most important first, as many as it has rows for: a paused or
/// crashed node's own state first, its clock if it runs off, inputs it holds back, badges that
/// found no room, then the participant's details by priority.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn details(
    s: &mut Markup,
    node: &NodeView,
    extra: Vec<String>,
    left: f64,
    mut y: f64,
    bottom: f64,
    inner: f64,
    m: &Metrics,
) {
    let sum = &node.summary;
    let mut lines: Vec<String> = Vec::new();
    if let NodeStatus::Paused { until_us } = node.status {
        lines.push(format!("until t = {}", format_instant(until_us)));
    }
    // A paused node still believes what its word says; a crashed one's summary is what it keeps
    // on disk (its word is always "down", which the status already says), so its details say it.
    if matches!(node.status, NodeStatus::Paused { .. }) && !sum.word.is_empty() {
        lines.push(format!("still thinks: {}", sum.word));
    }
    if node.waiting_inputs > 0 {
        lines.push(format!("{} input(s) waiting", node.waiting_inputs));
    }
    lines.extend(extra);
    let mut by_priority: Vec<&coordlab_sim::trace::Detail> = sum.details.iter().collect();
    coordlab_sim::kernel::collections::sort_by_key(&mut by_priority, |d| d.priority);
    lines.extend(by_priority.into_iter().map(|d| d.text.clone()));
    for line in lines {
        if y + m.detail_row() > bottom + 1.0 {
            break;
        }
        text_el(
            s,
            "node-detail",
            left,
            y + m.detail,
            m.detail,
            None,
            &text::fit(&line, m.detail, false, inner),
        );
        y += m.detail_row();
    }
}

/// A badge as its label over its figure, right-aligned at `right`.
#[inline(never)]
fn badge_stack(s: &mut Markup, right: f64, top: f64, m: &Metrics, label: &str, value: &str) {
    s.el("g").attr("class", "badge").open();
    text_el(
        s,
        "badge-label",
        right,
        top + m.label * 0.95,
        m.label,
        Some("end"),
        label,
    );
    text_el(
        s,
        "badge-value",
        right,
        top + m.label * 1.15 + m.figure * 0.92,
        m.figure,
        Some("end"),
        value,
    );
    s.close("g");
}

/// The log as a row of cells, newest last: the term inside each, its index under it;
/// committed entries solid with a tick, the rest dashed. Older entries fold into "…".
#[inline(never)]
fn log_strip(s: &mut Markup, cells: &[LogCell], left: f64, top: f64, room: f64, m: &Metrics) {
    if !cfg!(feature = "cluster") {
        return;
    }
    let (cw, ch) = (m.cell_w(), m.cell_h());
    let step = cw + 3.0;
    let fit = ((room + 3.0) / step).floor().max(2.0) as usize;
    if cells.is_empty() {
        text_el(s, "log-empty", left, top + ch * 0.7, m.label, None, "log: empty");
        return;
    }
    let skipped = if cells.len() > fit {
        cells.len() - fit + 1
    } else {
        0
    };
    let offset = usize::from(skipped > 0);
    s.el("g").attr("class", "log-strip").open();
    if skipped > 0 {
        s.el("text")
            .attr("class", "log-more")
            .num("x", px(left + cw / 2.0))
            .num("y", px(top + ch * 0.7))
            .num("font-size", px(m.cell))
            .attr("text-anchor", "middle")
            .open();
        s.title(&format!("{skipped} earlier entries"));
        s.out.push('…');
        s.close("text");
    }
    for (k, c) in cells[skipped..].iter().enumerate() {
        let x = left + (k + offset) as f64 * step;
        let mid = x + cw / 2.0;
        s.el("g")
            .attr(
                "class",
                if c.committed {
                    "cell committed"
                } else {
                    "cell open"
                },
            )
            .open();
        s.title(&format!(
            "entry #{} · term {} · {} · {}",
            c.index,
            c.term,
            c.label,
            if c.committed { "committed" } else { "not committed" }
        ));
        s.el("rect")
            .num("x", px(x))
            .num("y", px(top))
            .num("width", px(cw))
            .num("height", px(ch))
            .num("rx", 3)
            .leaf();
        let term = if c.committed {
            format!("{}✓", c.term)
        } else {
            c.term.to_string()
        };
        let size = if text::width(&term, m.cell, true) > cw - 2.0 {
            (m.cell * (cw - 2.0) / text::width(&term, m.cell, true))
                .floor()
                .max(m.label)
        } else {
            m.cell
        };
        text_el(
            s,
            "cell-term",
            mid,
            top + ch / 2.0 + size * 0.36,
            size,
            Some("middle"),
            &term,
        );
        text_el(
            s,
            "cell-index",
            mid,
            top + ch + m.label * 1.0,
            m.label,
            Some("middle"),
            &c.index.to_string(),
        );
        s.close("g");
    }
    s.close("g");
}

/// A node's timer (`data-node` names it) as a ring in its card's top right corner that empties
/// as time runs out: the arc's length carries the meaning, not its colour; the time left is in
/// the tooltip.
/// The time left in words too, right of the state word, where there is room.
pub fn gauge(s: &mut Markup, g: &Gauge, node: &NodeView, name: &str, b: Bounds, ty: &Type, full: bool) {
    let level = level(ty, full);
    if level == Level::Chip {
        return;
    }
    let m = Metrics::new(ty, level);
    let left_ms = g.remaining_us / MS_US;
    // Whole percent of a `pathLength` of 100: the arc needs no float formatting.
    let pct = (g.remaining_us.min(g.total_us) * 100 / g.total_us.max(1)).min(100);
    let r = m.gauge_r();
    let (cx, cy) = (b.2 - m.pad - r, b.1 + m.pad + m.name * 0.55);
    let class = if pct <= 25 { "gauge low" } else { "gauge" };
    let (cx_s, cy_s) = (n(px(cx)), n(px(cy)));
    s.el("g")
        .attr("class", class)
        .attr("data-node", &escape(name))
        .num("data-remaining-us", g.remaining_us)
        .open();
    s.title(&format!(
        "{} in {left_ms} ms (of {} ms)",
        g.label,
        g.total_us / MS_US
    ));
    s.el("circle")
        .attr("class", "gauge-track")
        .attr("cx", &cx_s)
        .attr("cy", &cy_s)
        .num("r", px(r))
        .leaf();
    s.el("circle")
        .attr("class", "gauge-arc")
        .attr("cx", &cx_s)
        .attr("cy", &cy_s)
        .num("r", px(r))
        .num("pathLength", 100)
        .attr("stroke-dasharray", &format!("{pct} 100"))
        .attr("transform", &format!("rotate(-90 {cx_s} {cy_s})"))
        .leaf();
    {
        let words = format!("{left_ms} ms");
        let (_, _, _, word) = state(node);
        let room = b.2 - b.0 - 3.0 * m.pad - m.pill_w(word);
        if text::width(&words, m.detail, true) <= room {
            let base = b.1 + m.pad + m.row() + m.pill_h() / 2.0 + m.detail * 0.36;
            text_el(s, "gauge-text", b.2 - m.pad, base, m.detail, Some("end"), &words);
        }
    }
    s.close("g");
}

/// Everything a card could say, in words: for the tooltip and screen readers.
pub fn describe(node: &NodeView) -> String {
    let mut parts = Vec::new();
    match node.status {
        NodeStatus::Up => {}
        NodeStatus::Crashed => parts.push("crashed".to_string()),
        NodeStatus::Paused { until_us } => parts.push(format!("paused until {}", format_duration(until_us))),
    }
    parts.push(node.summary.describe());
    if let Some(g) = &node.gauge {
        parts.push(format!("{} in {} ms", g.label, g.remaining_us / MS_US));
    }
    if node.clock_offset_us != 0 {
        parts.push(format!("clock {}", format_signed_duration(node.clock_offset_us)));
    }
    if !node.log.is_empty() {
        let cells: Vec<String> = node
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
