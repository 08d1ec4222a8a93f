//! The space-time diagram: a lane per participant, time along it, messages as slanted arrows
//! from send to delivery, faults as labelled spans on their lanes, the lock as each holder
//! believes it and as the authority records it, the unsafe window as a band across lanes,
//! violations and beats marked where they happened, and the cursor as a line.
//!
//! The diagram is drawn up to the cursor (the future is not given away) and follows it: in
//! [`Window::Follow`] it is a fixed-width picture of the steps just before the cursor, so a
//! step redraws only what is in view; [`Window::All`] draws the whole run up to the cursor, for
//! a slide or a document. Every colour and mark is written as an attribute, so the same text is
//! the view in the page, the CLI's `--format svg` and the player's "Export SVG".

pub mod model;
mod palette;

use crate::markup::{escape, n, Markup};
use coordlab_sim::trace::{EventKind, Trace};
pub use model::Diagram;
use model::{Span, SpanKind, ORDER_COL_PX};
use palette::*;
use std::ops::Range;

/// What runs along the lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Axis {
    /// Real time, with long quiet gaps drawn shorter and marked.
    #[default]
    Time,
    /// One column per event: dense runs stay readable.
    Order,
}

impl Axis {
    pub fn code(self) -> &'static str {
        match self {
            Axis::Time => "time",
            Axis::Order => "order",
        }
    }

    pub fn from_code(code: &str) -> Option<Axis> {
        match code {
            "time" => Some(Axis::Time),
            "order" => Some(Axis::Order),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Window {
    /// A fixed-width picture ending a little after the cursor.
    #[default]
    Follow,
    /// Everything up to the cursor.
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Options {
    pub axis: Axis,
    pub window: Window,
}

/// Width of the followed picture.
pub const WIDTH: i64 = 960;
/// The lane names' column.
const PLOT_X0: i64 = 150;
const RIGHT_PAD: i64 = 24;
/// Two rows of beat labels above the lanes.
const TOP: i64 = 64;
const LANE_H: i64 = 58;
/// Lanes are shorter in a run with more participants than this, so it still fits a screen.
const ROOMY_LANES: usize = 6;
const COMPACT_LANE_H: i64 = 48;

/// The height of each lane for a run with `lanes` participants.
pub fn lane_height(lanes: usize) -> i64 {
    if lanes > ROOMY_LANES {
        COMPACT_LANE_H
    } else {
        LANE_H
    }
}
const AXIS_H: i64 = 40;
const LEGEND_H: i64 = 30;
/// The cursor sits this far across the plot: the rest shows messages still on their way.
const CURSOR_AT_PERCENT: i64 = 80;

/// Where steps go on the page.
struct Frame<'a> {
    diagram: &'a Diagram,
    axis: Axis,
    /// The axis position at the plot's left edge.
    x_start: i64,
    width: i64,
    height: i64,
    lane_h: i64,
    cursor: usize,
}

impl Frame<'_> {
    fn pos(&self, step: usize) -> i64 {
        match self.axis {
            Axis::Time => self.diagram.time_x.get(step).copied().unwrap_or(0),
            Axis::Order => step as i64 * ORDER_COL_PX,
        }
    }
    /// A step's x on the page.
    fn x(&self, step: usize) -> i64 {
        PLOT_X0 + self.pos(step) - self.x_start
    }
    fn lane_y(&self, lane: usize) -> i64 {
        TOP + self.lane_h * lane as i64 + self.lane_h / 2
    }
    fn lanes_bottom(&self) -> i64 {
        TOP + self.lane_h * self.diagram.lanes.len() as i64
    }
    fn plot_right(&self) -> i64 {
        self.width - RIGHT_PAD
    }
    /// Where a span that ends at `end` stops being drawn: its end, or the cursor while it
    /// still lasts there.
    fn until(&self, end: Option<usize>) -> i64 {
        match end {
            Some(e) if e <= self.cursor => self.x(e),
            _ => self.x(self.cursor),
        }
    }
}

fn frame<'a>(diagram: &'a Diagram, cursor: usize, options: Options) -> Frame<'a> {
    let cursor = cursor.min(diagram.len().saturating_sub(1));
    let mut f = Frame {
        diagram,
        axis: options.axis,
        x_start: 0,
        width: WIDTH,
        height: TOP + lane_height(diagram.lanes.len()) * diagram.lanes.len() as i64 + AXIS_H + LEGEND_H,
        lane_h: lane_height(diagram.lanes.len()),
        cursor,
    };
    match options.window {
        Window::Follow => {
            let plot_w = WIDTH - PLOT_X0 - RIGHT_PAD;
            f.x_start = (f.pos(cursor) - plot_w * CURSOR_AT_PERCENT / 100).max(0);
        }
        Window::All => {
            // Room after the cursor for its label and the last arrow's text.
            f.width = (PLOT_X0 + f.pos(cursor) + 200).max(WIDTH);
        }
    }
    f
}

/// The steps a picture shows: from the first whose mark is in view to the cursor.
pub fn visible(diagram: &Diagram, cursor: usize, options: Options) -> Range<usize> {
    if diagram.is_empty() {
        return 0..0;
    }
    let f = frame(diagram, cursor, options);
    // Positions only grow along the trace: a binary search for the first step in view.
    let (mut lo, mut hi) = (0, f.cursor + 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if f.x(mid) < PLOT_X0 - 12 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo..f.cursor + 1
}

/// The diagram at `cursor` as SVG text.
pub fn svg(trace: &Trace, diagram: &Diagram, cursor: usize, options: Options) -> String {
    let f = frame(diagram, cursor, options);
    let shown = visible(diagram, cursor, options);
    let mut s = Markup::default();
    let label = format!(
        "Space-time diagram: {} participants, steps {} to {} of {}",
        diagram.lanes.len(),
        shown.start,
        shown.end.saturating_sub(1),
        diagram.len()
    );
    s.open(
        "svg",
        &[
            ("xmlns", "http://www.w3.org/2000/svg"),
            ("class", "spacetime"),
            ("width", &n(f.width)),
            ("height", &n(f.height)),
            ("viewBox", &format!("0 0 {} {}", f.width, f.height)),
            ("role", "img"),
            ("aria-label", &escape(&label)),
            ("font-family", FONTS),
            ("font-size", "15"),
        ],
    );
    s.title(&label);
    s.text("desc", &[], &describe(trace, shown.clone()));
    defs(&mut s, &f);
    s.leaf(
        "rect",
        &[("width", &n(f.width)), ("height", &n(f.height)), ("fill", PAPER)],
    );
    if diagram.is_empty() {
        s.text(
            "text",
            &[("x", "20"), ("y", "40"), ("fill", INK)],
            "This trace has no events.",
        );
        s.close("svg");
        return s.out;
    }
    lanes(&mut s, &f);
    s.open("g", &[("clip-path", "url(#st-plot)")]);
    bands(&mut s, &f);
    spans(&mut s, &f);
    beat_lines(trace, &mut s, &f, &shown);
    violations(trace, &mut s, &f, &shown);
    messages(trace, &mut s, &f, &shown);
    marks(trace, &mut s, &f, &shown);
    beat_labels(trace, &mut s, &f, &shown);
    cursor_line(&mut s, &f);
    s.close("g");
    axis(trace, &mut s, &f, &shown);
    legend(&mut s, &f);
    s.close("svg");
    s.out
}

/// The events a picture shows, in order, one per line: its text alternative.
pub fn describe(trace: &Trace, steps: Range<usize>) -> String {
    let mut out = String::new();
    for e in trace.entries.get(steps).unwrap_or_default() {
        out.push_str(&e.line());
        out.push('\n');
    }
    out
}

fn defs(s: &mut Markup, f: &Frame) {
    s.open("defs", &[]);
    s.open(
        "marker",
        &[
            ("id", "st-arrow"),
            ("viewBox", "0 0 10 10"),
            ("refX", "9"),
            ("refY", "5"),
            ("markerWidth", "7"),
            ("markerHeight", "7"),
            ("orient", "auto-start-reverse"),
        ],
    );
    s.leaf("path", &[("d", "M0 0L10 5L0 10z"), ("fill", MESSAGE)]);
    s.close("marker");
    for (id, colour) in [("st-hatch-unsafe", UNSAFE), ("st-hatch-crash", CRASH)] {
        s.open(
            "pattern",
            &[
                ("id", id),
                ("width", "8"),
                ("height", "8"),
                ("patternUnits", "userSpaceOnUse"),
                ("patternTransform", "rotate(45)"),
            ],
        );
        s.leaf(
            "rect",
            &[
                ("width", "3"),
                ("height", "8"),
                ("fill", colour),
                ("fill-opacity", "0.28"),
            ],
        );
        s.close("pattern");
    }
    s.open("clipPath", &[("id", "st-plot")]);
    s.leaf(
        "rect",
        &[
            ("x", &n(PLOT_X0 - 12)),
            ("y", "0"),
            ("width", &n(f.width - PLOT_X0 + 12)),
            ("height", &n(f.lanes_bottom() + 6)),
        ],
    );
    s.close("clipPath");
    s.close("defs");
}

fn lanes(s: &mut Markup, f: &Frame) {
    for (lane, name) in f.diagram.lanes.iter().enumerate() {
        let y = f.lane_y(lane);
        if lane % 2 == 1 {
            s.leaf(
                "rect",
                &[
                    ("x", "0"),
                    ("y", &n(y - f.lane_h / 2)),
                    ("width", &n(f.width)),
                    ("height", &n(f.lane_h)),
                    ("fill", LANE_SHADE),
                ],
            );
        }
        s.leaf(
            "line",
            &[
                ("x1", &n(PLOT_X0 - 8)),
                ("y1", &n(y)),
                ("x2", &n(f.plot_right())),
                ("y2", &n(y)),
                ("stroke", LANE),
                ("stroke-width", "1.5"),
            ],
        );
        s.text(
            "text",
            &[
                ("x", &n(PLOT_X0 - 14)),
                ("y", &n(y + 5)),
                ("text-anchor", "end"),
                ("font-weight", "700"),
                ("font-size", "16"),
                ("fill", INK),
            ],
            &fit(name, 17),
        );
    }
}

/// `text` cut to `chars` characters, with an ellipsis when cut.
fn fit(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_string();
    }
    let mut out: String = text.chars().take(chars.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Characters of 13–14 px text that fit in `px`.
fn chars_in(px: i64) -> usize {
    (px / 8).max(0) as usize
}

fn bands(s: &mut Markup, f: &Frame) {
    for band in &f.diagram.unsafe_bands {
        if band.start > f.cursor || f.until(band.end) < PLOT_X0 - 12 {
            continue;
        }
        let (x0, x1) = (f.x(band.start), f.until(band.end));
        s.open("g", &[]);
        s.title(&band.text);
        s.leaf(
            "rect",
            &[
                ("x", &n(x0)),
                ("y", &n(TOP - 4)),
                ("width", &n((x1 - x0).max(3))),
                ("height", &n(f.lanes_bottom() - TOP + 4)),
                ("fill", "url(#st-hatch-unsafe)"),
                ("stroke", UNSAFE),
                ("stroke-width", "1.5"),
            ],
        );
        s.text(
            "text",
            &[
                ("x", &n(x0.max(PLOT_X0) + 5)),
                ("y", &n(TOP + 12)),
                ("fill", UNSAFE_TEXT),
                ("stroke", PAPER),
                ("stroke-width", "3"),
                ("paint-order", "stroke"),
                ("font-weight", "700"),
                ("font-size", "14"),
            ],
            "⚠ unsafe window",
        );
        s.close("g");
    }
}

fn span_style(kind: SpanKind) -> (&'static str, &'static str) {
    match kind {
        SpanKind::Paused => (PAUSE, PAUSE_EDGE),
        SpanKind::Crashed => ("url(#st-hatch-crash)", CRASH),
        SpanKind::CutOff => (CUT, CUT_EDGE),
        SpanKind::Holding => (PAPER, CUT_EDGE),
        SpanKind::Slowed => (SLOW, SLOW_EDGE),
        SpanKind::Drifting => (PAPER, SLOW_EDGE),
        SpanKind::Believes => (PAPER, HOLD),
        SpanKind::Granted => (HOLD, HOLD),
    }
}

fn spans(s: &mut Markup, f: &Frame) {
    // Per lane, where the next label may start: two spans that overlap on one lane (a crash
    // inside a partition) keep their labels apart.
    let mut free_x = vec![PLOT_X0; f.diagram.lanes.len()];
    for span in &f.diagram.spans {
        if span.start > f.cursor || f.until(span.end) < PLOT_X0 - 12 {
            continue;
        }
        draw_span(s, f, span, &mut free_x);
    }
}

fn draw_span(s: &mut Markup, f: &Frame, span: &Span, free_x: &mut [i64]) {
    let (x0, x1) = (f.x(span.start), f.until(span.end));
    let y = f.lane_y(span.lane);
    let (fill, edge) = span_style(span.kind);
    // The lock as believed sits above the lane, as recorded below it; faults on it.
    let (top, height) = match span.kind {
        SpanKind::Believes => (y - f.lane_h / 2 + 4, 7),
        SpanKind::Granted => (y + f.lane_h / 2 - 11, 7),
        _ => (y - 10, 20),
    };
    s.open("g", &[]);
    s.title(&format!("{}: {}", f.diagram.lanes[span.lane], span.label));
    let mut attrs = vec![
        ("x", n(x0)),
        ("y", n(top)),
        ("width", n((x1 - x0).max(3))),
        ("height", n(height)),
        ("fill", fill.to_string()),
        ("stroke", edge.to_string()),
        ("stroke-width", "1.5".to_string()),
    ];
    if matches!(
        span.kind,
        SpanKind::Holding | SpanKind::Drifting | SpanKind::CutOff
    ) {
        attrs.push(("stroke-dasharray", "5 3".to_string()));
    }
    let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    s.leaf("rect", &attrs);
    if !matches!(span.kind, SpanKind::Believes | SpanKind::Granted) {
        // The label stays readable when the span began off to the left.
        let lx = x0.max(free_x[span.lane]) + 5;
        let room = x1.max(lx + 90) - lx;
        let label = fit(&span.label, chars_in(room));
        free_x[span.lane] = lx + label.chars().count() as i64 * 8 + 6;
        s.text(
            "text",
            &[
                ("x", &n(lx)),
                ("y", &n(y + 5)),
                ("fill", INK),
                ("font-weight", "700"),
                ("font-size", "14"),
                ("stroke", PAPER),
                ("stroke-width", "3"),
                ("paint-order", "stroke"),
            ],
            &label,
        );
    }
    s.close("g");
}

fn beat_lines(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    for (_, seq) in reached_beats(trace, shown) {
        let x = f.x(seq);
        s.leaf(
            "line",
            &[
                ("x1", &n(x)),
                ("y1", &n(TOP - 6)),
                ("x2", &n(x)),
                ("y2", &n(f.lanes_bottom())),
                ("stroke", INK),
                ("stroke-width", "1.2"),
                ("stroke-dasharray", "2 4"),
            ],
        );
    }
}

/// The beats reached within `shown`: (number from 1, step).
fn reached_beats(trace: &Trace, shown: &Range<usize>) -> Vec<(usize, usize)> {
    trace
        .beats
        .iter()
        .enumerate()
        .filter_map(|(k, b)| b.seq.map(|s| (k + 1, s as usize)))
        .filter(|(_, s)| shown.contains(s))
        .collect()
}

fn beat_labels(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    let beats = reached_beats(trace, shown);
    for (i, (number, seq)) in beats.iter().enumerate() {
        let x = f.x(*seq);
        let y = if i % 2 == 0 { 18 } else { 42 };
        // Room up to the next beat on the same row.
        let room = beats
            .get(i + 2)
            .map(|(_, next)| f.x(*next) - x)
            .unwrap_or(f.width - x)
            - 24;
        let title = &trace.beats[number - 1].title;
        s.open("g", &[("data-seq", &n(seq))]);
        s.title(&format!("Beat {number}: {title}"));
        s.leaf(
            "circle",
            &[("cx", &n(x)), ("cy", &n(y)), ("r", "10"), ("fill", INK)],
        );
        s.text(
            "text",
            &[
                ("x", &n(x)),
                ("y", &n(y + 5)),
                ("text-anchor", "middle"),
                ("fill", PAPER),
                ("font-weight", "700"),
                ("font-size", "14"),
            ],
            &number.to_string(),
        );
        s.text(
            "text",
            &[
                ("x", &n(x + 14)),
                ("y", &n(y + 5)),
                ("fill", INK),
                ("font-weight", "600"),
                ("stroke", PAPER),
                ("stroke-width", "3"),
                ("paint-order", "stroke"),
            ],
            &fit(title, chars_in(room).max(6)),
        );
        s.close("g");
    }
}

fn violations(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    // Violations close together take turns between two rows, so their labels stay apart.
    let mut row = 0;
    for i in shown.clone() {
        let e = &trace.entries[i];
        if e.violations.is_empty() {
            continue;
        }
        let x = f.x(i);
        let text = format!("✕ violated: {}", e.violations.join(", "));
        s.open("g", &[("data-seq", &n(i))]);
        s.title(&format!("Step {i}: {text}"));
        s.leaf(
            "line",
            &[
                ("x1", &n(x)),
                ("y1", &n(TOP - 4)),
                ("x2", &n(x)),
                ("y2", &n(f.lanes_bottom())),
                ("stroke", UNSAFE),
                ("stroke-width", "2.5"),
            ],
        );
        s.text(
            "text",
            &[
                ("x", &n(x - 5)),
                ("y", &n(f.lanes_bottom() - 8 - 18 * (row % 2))),
                ("text-anchor", "end"),
                ("fill", UNSAFE_TEXT),
                ("font-weight", "700"),
                ("font-size", "14"),
                ("stroke", PAPER),
                ("stroke-width", "3"),
                ("paint-order", "stroke"),
            ],
            &fit(&text, chars_in(x - PLOT_X0).max(14)),
        );
        s.close("g");
        row += 1;
    }
}

fn lane_of(trace: &Trace, node: coordlab_sim::NodeId) -> Option<usize> {
    (node.index() < trace.nodes.len()).then_some(node.index())
}

fn messages(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    let d = f.diagram;
    // Delivered (or undeliverable) messages whose arrow ends in view.
    for i in shown.clone() {
        let e = &trace.entries[i];
        let (Some(m), Some(sent)) = (&e.message, d.send_of[i]) else {
            continue;
        };
        let (Some(a), Some(b)) = (lane_of(trace, m.from), lane_of(trace, m.to)) else {
            continue;
        };
        let (x0, y0, x1, y1) = (f.x(sent), f.lane_y(a), f.x(i), f.lane_y(b));
        let lost = e.kind == EventKind::Undeliverable;
        let now = i == f.cursor;
        let colour = if lost { UNSAFE } else { MESSAGE };
        let width = if now { "3" } else { "1.6" };
        let mut attrs = vec![
            ("x1", n(x0)),
            ("y1", n(y0)),
            ("x2", n(x1)),
            ("y2", n(y1)),
            ("stroke", colour.to_string()),
            ("stroke-width", width.to_string()),
        ];
        if !lost {
            attrs.push(("marker-end", "url(#st-arrow)".to_string()));
        }
        if d.held[i] {
            attrs.push(("stroke-dasharray", "7 4".to_string()));
        }
        let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        s.open("g", &[("data-seq", &n(i))]);
        s.title(&format!(
            "{} → {}: {}",
            trace.node_name(m.from),
            trace.node_name(m.to),
            m.label
        ));
        s.leaf("line", &attrs);
        if lost {
            cross(s, x1, y1, UNSAFE);
        }
        if now {
            message_label(s, f, (x0 + x1) / 2, (y0 + y1) / 2, &m.label);
        }
        s.close("g");
    }
    // Messages on their way at the cursor: a dotted line up to the cursor.
    let cursor_x = f.x(f.cursor);
    for (j, sent) in d.send_of.iter().enumerate().skip(f.cursor + 1) {
        let Some(sent) = *sent else { continue };
        if sent > f.cursor {
            continue;
        }
        let Some(m) = &trace.entries[j].message else {
            continue;
        };
        let (Some(a), Some(b)) = (lane_of(trace, m.from), lane_of(trace, m.to)) else {
            continue;
        };
        let (x0, y0, xj, yj) = (f.x(sent), f.lane_y(a), f.x(j), f.lane_y(b));
        let y = if xj > x0 {
            y0 + (yj - y0) * (cursor_x - x0) / (xj - x0)
        } else {
            y0
        };
        s.open("g", &[]);
        s.title(&format!(
            "On its way: {} → {}: {}",
            trace.node_name(m.from),
            trace.node_name(m.to),
            m.label
        ));
        s.leaf(
            "line",
            &[
                ("x1", &n(x0)),
                ("y1", &n(y0)),
                ("x2", &n(cursor_x)),
                ("y2", &n(y)),
                ("stroke", MESSAGE),
                ("stroke-width", "1.6"),
                ("stroke-dasharray", "2 3"),
            ],
        );
        s.close("g");
    }
    // Messages the network lost at once: a short arrow that ends in a cross.
    for i in shown.clone() {
        for m in &trace.entries[i].lost {
            let (Some(a), Some(b)) = (lane_of(trace, m.from), lane_of(trace, m.to)) else {
                continue;
            };
            let (x0, y0) = (f.x(i), f.lane_y(a));
            let (x1, y1) = (x0 + 26, y0 + (f.lane_y(b) - y0) / 2);
            s.open("g", &[("data-seq", &n(i))]);
            s.title(&format!(
                "Lost: {} → {}: {}",
                trace.node_name(m.from),
                trace.node_name(m.to),
                m.label
            ));
            s.leaf(
                "line",
                &[
                    ("x1", &n(x0)),
                    ("y1", &n(y0)),
                    ("x2", &n(x1)),
                    ("y2", &n(y1)),
                    ("stroke", UNSAFE),
                    ("stroke-width", "1.6"),
                ],
            );
            cross(s, x1, y1, UNSAFE);
            s.close("g");
        }
    }
}

/// The label of the message just delivered, on a white halo so it reads over the lanes.
fn message_label(s: &mut Markup, f: &Frame, x: i64, y: i64, label: &str) {
    let text = fit(label, 44);
    let w = text.chars().count() as i64 * 7;
    let x = x.clamp(PLOT_X0 + w / 2, (f.plot_right() - w / 2).max(PLOT_X0 + w / 2));
    s.text(
        "text",
        &[
            ("x", &n(x)),
            ("y", &n(y - 6)),
            ("text-anchor", "middle"),
            ("fill", MESSAGE_TEXT),
            ("font-weight", "700"),
            ("font-size", "14"),
            ("stroke", PAPER),
            ("stroke-width", "4"),
            ("paint-order", "stroke"),
        ],
        &text,
    );
}

fn cross(s: &mut Markup, x: i64, y: i64, colour: &str) {
    s.leaf(
        "path",
        &[
            ("d", &format!("M{} {}l10 10m0 -10l-10 10", x - 5, y - 5)),
            ("stroke", colour),
            ("stroke-width", "2.5"),
            ("fill", "none"),
        ],
    );
}

fn marks(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    for i in shown.clone() {
        let e = &trace.entries[i];
        let Some(lane) = e.nodes.first().and_then(|n| lane_of(trace, *n)) else {
            continue;
        };
        let (x, y) = (f.x(i), f.lane_y(lane));
        s.open("g", &[("data-seq", &n(i)), ("class", "st-mark")]);
        s.title(&e.line());
        // A larger target than the mark, for clicking.
        s.leaf(
            "circle",
            &[
                ("cx", &n(x)),
                ("cy", &n(y)),
                ("r", "11"),
                ("fill", INK),
                ("fill-opacity", "0"),
            ],
        );
        if i == f.cursor {
            s.leaf(
                "circle",
                &[
                    ("cx", &n(x)),
                    ("cy", &n(y)),
                    ("r", "10"),
                    ("fill", "none"),
                    ("stroke", INK),
                    ("stroke-width", "2.5"),
                ],
            );
        }
        mark_shape(s, e.kind, x, y);
        s.close("g");
    }
}

/// Each kind of event has its own shape, so colour is never the only difference.
fn mark_shape(s: &mut Markup, kind: EventKind, x: i64, y: i64) {
    match kind {
        EventKind::Deliver => {
            s.leaf(
                "circle",
                &[("cx", &n(x)), ("cy", &n(y)), ("r", "4.5"), ("fill", MESSAGE)],
            );
        }
        EventKind::Start | EventKind::Timer => {
            let fill = if kind == EventKind::Start { INK } else { PAPER };
            s.leaf(
                "rect",
                &[
                    ("x", &n(x - 4)),
                    ("y", &n(y - 4)),
                    ("width", "8"),
                    ("height", "8"),
                    ("fill", fill),
                    ("stroke", INK),
                    ("stroke-width", "1.5"),
                ],
            );
        }
        EventKind::Fault | EventKind::Resume => {
            let fill = if kind == EventKind::Fault {
                PAUSE_EDGE
            } else {
                PAPER
            };
            s.leaf(
                "path",
                &[
                    ("d", &format!("M{} {}l7 12h-14z", x, y - 8)),
                    ("fill", fill),
                    ("stroke", INK),
                    ("stroke-width", "1.5"),
                ],
            );
        }
        EventKind::PeerDown => cross(s, x, y, INK),
        EventKind::Undeliverable => cross(s, x, y, UNSAFE),
    }
}

fn cursor_line(s: &mut Markup, f: &Frame) {
    let x = f.x(f.cursor);
    s.leaf(
        "line",
        &[
            ("x1", &n(x)),
            ("y1", &n(TOP - 8)),
            ("x2", &n(x)),
            ("y2", &n(f.lanes_bottom() + 4)),
            ("stroke", INK),
            ("stroke-width", "2"),
        ],
    );
}

fn axis(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    let y = f.lanes_bottom() + 4;
    s.leaf(
        "line",
        &[
            ("x1", &n(PLOT_X0 - 8)),
            ("y1", &n(y)),
            ("x2", &n(f.plot_right())),
            ("y2", &n(y)),
            ("stroke", MUTED),
            ("stroke-width", "1.5"),
        ],
    );
    let caption = match f.axis {
        Axis::Time => "time →",
        Axis::Order => "events in order →",
    };
    s.text(
        "text",
        &[
            ("x", &n(PLOT_X0 - 14)),
            ("y", &n(y + 20)),
            ("text-anchor", "end"),
            ("fill", MUTED),
            ("font-size", "14"),
        ],
        caption,
    );
    let cursor_x = f.x(f.cursor);
    if f.axis == Axis::Time {
        for b in &f.diagram.breaks {
            if !shown.contains(&b.entry) || b.entry == 0 {
                continue;
            }
            let (xa, xb) = (f.x(b.entry - 1), f.x(b.entry));
            let mid = (xa + xb) / 2;
            if mid < PLOT_X0 {
                continue;
            }
            // Two slanted strokes across the axis: time is cut here.
            s.open("g", &[]);
            s.title(&format!(
                "{} of quiet, drawn shorter",
                model::time_label(b.gap_us)
            ));
            s.leaf(
                "path",
                &[
                    ("d", &format!("M{} {}l4 -10m2 10l4 -10", mid - 5, y + 5)),
                    ("stroke", MUTED),
                    ("stroke-width", "1.5"),
                    ("fill", "none"),
                ],
            );
            s.close("g");
        }
    }
    // Labels spaced out along the axis, none over the cursor's.
    let mut last_x = PLOT_X0 - 200;
    for i in shown.clone() {
        let x = f.x(i);
        if x < PLOT_X0 + 30 || x - last_x < 120 || (x - cursor_x).abs() < 110 {
            continue;
        }
        last_x = x;
        let text = match f.axis {
            Axis::Time => model::time_label(trace.entries[i].time_us),
            Axis::Order => format!("step {i}"),
        };
        s.leaf(
            "line",
            &[
                ("x1", &n(x)),
                ("y1", &n(y)),
                ("x2", &n(x)),
                ("y2", &n(y + 5)),
                ("stroke", MUTED),
            ],
        );
        s.text(
            "text",
            &[
                ("x", &n(x)),
                ("y", &n(y + 20)),
                ("text-anchor", "middle"),
                ("fill", MUTED),
                ("font-size", "14"),
            ],
            &text,
        );
    }
    let e = &trace.entries[f.cursor];
    let text = format!("step {} · {}", f.cursor, model::time_label(e.time_us));
    let w = text.chars().count() as i64 * 8 + 14;
    let x = cursor_x.clamp(PLOT_X0 + w / 2, (f.plot_right() - w / 2).max(PLOT_X0 + w / 2));
    s.leaf(
        "rect",
        &[
            ("x", &n(x - w / 2)),
            ("y", &n(y + 5)),
            ("width", &n(w)),
            ("height", "22"),
            ("rx", "11"),
            ("fill", INK),
        ],
    );
    s.text(
        "text",
        &[
            ("x", &n(x)),
            ("y", &n(y + 21)),
            ("text-anchor", "middle"),
            ("fill", PAPER),
            ("font-weight", "700"),
            ("font-size", "14"),
        ],
        &text,
    );
}

/// What each shape means, for the kinds this run has.
fn legend(s: &mut Markup, f: &Frame) {
    let d = f.diagram;
    let has = |k: SpanKind| d.spans.iter().any(|s| s.kind == k);
    let mut items: Vec<(&str, &str)> = vec![("msg", "message")];
    if has(SpanKind::Believes) {
        items.push(("believes", "believes it holds"));
    }
    if has(SpanKind::Granted) {
        items.push(("granted", "store's record"));
    }
    if !d.unsafe_bands.is_empty() {
        items.push(("unsafe", "unsafe window"));
    }
    if has(SpanKind::Paused) {
        items.push(("paused", "paused"));
    }
    if has(SpanKind::Crashed) {
        items.push(("crashed", "crashed"));
    }
    if has(SpanKind::CutOff) {
        items.push(("cut", "cut off"));
    }
    if f.axis == Axis::Time && !d.breaks.is_empty() {
        items.push(("break", "time cut short"));
    }
    let y = f.height - LEGEND_H / 2;
    let mut x = PLOT_X0 - 8;
    for (key, text) in items {
        legend_swatch(s, key, x, y);
        s.text(
            "text",
            &[
                ("x", &n(x + 26)),
                ("y", &n(y + 5)),
                ("fill", INK),
                ("font-size", "14"),
            ],
            text,
        );
        x += 40 + text.chars().count() as i64 * 8;
    }
}

fn legend_swatch(s: &mut Markup, key: &str, x: i64, y: i64) {
    let rect = |s: &mut Markup, fill: &str, edge: &str, top: i64, h: i64| {
        s.leaf(
            "rect",
            &[
                ("x", &n(x)),
                ("y", &n(top)),
                ("width", "20"),
                ("height", &n(h)),
                ("fill", fill),
                ("stroke", edge),
                ("stroke-width", "1.5"),
            ],
        );
    };
    match key {
        "msg" => s.leaf(
            "line",
            &[
                ("x1", &n(x)),
                ("y1", &n(y + 4)),
                ("x2", &n(x + 20)),
                ("y2", &n(y - 4)),
                ("stroke", MESSAGE),
                ("stroke-width", "1.6"),
                ("marker-end", "url(#st-arrow)"),
            ],
        ),
        "believes" => rect(s, PAPER, HOLD, y - 3, 7),
        "granted" => rect(s, HOLD, HOLD, y - 3, 7),
        "unsafe" => rect(s, "url(#st-hatch-unsafe)", UNSAFE, y - 8, 16),
        "paused" => rect(s, PAUSE, PAUSE_EDGE, y - 8, 16),
        "crashed" => rect(s, "url(#st-hatch-crash)", CRASH, y - 8, 16),
        "cut" => rect(s, CUT, CUT_EDGE, y - 8, 16),
        _ => s.leaf(
            "path",
            &[
                ("d", &format!("M{} {}l4 -10m2 10l4 -10", x + 5, y + 5)),
                ("stroke", MUTED),
                ("stroke-width", "1.5"),
                ("fill", "none"),
            ],
        ),
    }
}

#[cfg(test)]
mod tests;
