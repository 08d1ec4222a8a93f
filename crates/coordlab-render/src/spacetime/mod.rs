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

use crate::markup::{escape, Markup};
use coordlab_sim::trace::{EventKind, MessageRecord, Trace};
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
    s.el("svg")
        .attr("xmlns", "http://www.w3.org/2000/svg")
        .attr("class", "spacetime")
        .num("width", f.width)
        .num("height", f.height)
        .attr("viewBox", &format!("0 0 {} {}", f.width, f.height))
        .attr("role", "img")
        .attr("aria-label", &escape(&label))
        .attr("font-family", FONTS)
        .attr("font-size", "15")
        .open();
    s.title(&label);
    s.el("desc").text(&describe(trace, shown.clone()));
    defs(&mut s, &f);
    s.el("rect")
        .num("width", f.width)
        .num("height", f.height)
        .attr("fill", PAPER)
        .leaf();
    if diagram.is_empty() {
        s.el("text")
            .attr("x", "20")
            .attr("y", "40")
            .attr("fill", INK)
            .text("This trace has no events.");
        s.close("svg");
        return s.out;
    }
    lanes(&mut s, &f);
    s.el("g").attr("clip-path", "url(#st-plot)").open();
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
    s.el("defs").open();
    s.el("marker")
        .attr("id", "st-arrow")
        .attr("viewBox", "0 0 10 10")
        .attr("refX", "9")
        .attr("refY", "5")
        .attr("markerWidth", "7")
        .attr("markerHeight", "7")
        .attr("orient", "auto-start-reverse")
        .open();
    s.el("path")
        .attr("d", "M0 0L10 5L0 10z")
        .attr("fill", MESSAGE)
        .leaf();
    s.close("marker");
    for (id, colour) in [("st-hatch-unsafe", UNSAFE), ("st-hatch-crash", CRASH)] {
        s.el("pattern")
            .attr("id", id)
            .attr("width", "8")
            .attr("height", "8")
            .attr("patternUnits", "userSpaceOnUse")
            .attr("patternTransform", "rotate(45)")
            .open();
        s.el("rect")
            .attr("width", "3")
            .attr("height", "8")
            .attr("fill", colour)
            .attr("fill-opacity", "0.28")
            .leaf();
        s.close("pattern");
    }
    s.el("clipPath").attr("id", "st-plot").open();
    s.el("rect")
        .num("x", PLOT_X0 - 12)
        .attr("y", "0")
        .num("width", f.width - PLOT_X0 + 12)
        .num("height", f.lanes_bottom() + 6)
        .leaf();
    s.close("clipPath");
    s.close("defs");
}

fn lanes(s: &mut Markup, f: &Frame) {
    for (lane, name) in f.diagram.lanes.iter().enumerate() {
        let y = f.lane_y(lane);
        if lane % 2 == 1 {
            s.el("rect")
                .attr("x", "0")
                .num("y", y - f.lane_h / 2)
                .num("width", f.width)
                .num("height", f.lane_h)
                .attr("fill", LANE_SHADE)
                .leaf();
        }
        s.el("line")
            .num("x1", PLOT_X0 - 8)
            .num("y1", y)
            .num("x2", f.plot_right())
            .num("y2", y)
            .attr("stroke", LANE)
            .attr("stroke-width", "1.5")
            .leaf();
        s.el("text")
            .num("x", PLOT_X0 - 14)
            .num("y", y + 5)
            .attr("text-anchor", "end")
            .attr("font-weight", "700")
            .attr("font-size", "16")
            .attr("fill", INK)
            .text(&fit(name, 17));
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
        s.el("g").open();
        s.title(&band.text);
        s.el("rect")
            .num("x", x0)
            .num("y", TOP - 4)
            .num("width", (x1 - x0).max(3))
            .num("height", f.lanes_bottom() - TOP + 4)
            .attr("fill", "url(#st-hatch-unsafe)")
            .attr("stroke", UNSAFE)
            .attr("stroke-width", "1.5")
            .leaf();
        s.el("text")
            .num("x", x0.max(PLOT_X0) + 5)
            .num("y", TOP + 12)
            .attr("fill", UNSAFE_TEXT)
            .attr("stroke", PAPER)
            .attr("stroke-width", "3")
            .attr("paint-order", "stroke")
            .attr("font-weight", "700")
            .attr("font-size", "14")
            .text("⚠ unsafe window");
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
    s.el("g").open();
    s.title(&format!("{}: {}", f.diagram.lanes[span.lane], span.label));
    let mut rect = s
        .el("rect")
        .num("x", x0)
        .num("y", top)
        .num("width", (x1 - x0).max(3))
        .num("height", height)
        .attr("fill", fill)
        .attr("stroke", edge)
        .attr("stroke-width", "1.5");
    if matches!(
        span.kind,
        SpanKind::Holding | SpanKind::Drifting | SpanKind::CutOff
    ) {
        rect = rect.attr("stroke-dasharray", "5 3");
    }
    rect.leaf();
    if !matches!(span.kind, SpanKind::Believes | SpanKind::Granted) {
        // The label stays readable when the span began off to the left.
        let lx = x0.max(free_x[span.lane]) + 5;
        let room = x1.max(lx + 90) - lx;
        let label = fit(&span.label, chars_in(room));
        free_x[span.lane] = lx + label.chars().count() as i64 * 8 + 6;
        s.el("text")
            .num("x", lx)
            .num("y", y + 5)
            .attr("fill", INK)
            .attr("font-weight", "700")
            .attr("font-size", "14")
            .attr("stroke", PAPER)
            .attr("stroke-width", "3")
            .attr("paint-order", "stroke")
            .text(&label);
    }
    s.close("g");
}

fn beat_lines(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    for (_, seq) in reached_beats(trace, shown) {
        let x = f.x(seq);
        s.el("line")
            .num("x1", x)
            .num("y1", TOP - 6)
            .num("x2", x)
            .num("y2", f.lanes_bottom())
            .attr("stroke", INK)
            .attr("stroke-width", "1.2")
            .attr("stroke-dasharray", "2 4")
            .leaf();
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
        s.el("g").num("data-seq", seq).open();
        s.title(&format!("Beat {number}: {title}"));
        s.el("circle")
            .num("cx", x)
            .num("cy", y)
            .attr("r", "10")
            .attr("fill", INK)
            .leaf();
        s.el("text")
            .num("x", x)
            .num("y", y + 5)
            .attr("text-anchor", "middle")
            .attr("fill", PAPER)
            .attr("font-weight", "700")
            .attr("font-size", "14")
            .text(&number.to_string());
        s.el("text")
            .num("x", x + 14)
            .num("y", y + 5)
            .attr("fill", INK)
            .attr("font-weight", "600")
            .attr("stroke", PAPER)
            .attr("stroke-width", "3")
            .attr("paint-order", "stroke")
            .text(&fit(title, chars_in(room).max(6)));
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
        s.el("g").num("data-seq", i).open();
        s.title(&format!("Step {i}: {text}"));
        s.el("line")
            .num("x1", x)
            .num("y1", TOP - 4)
            .num("x2", x)
            .num("y2", f.lanes_bottom())
            .attr("stroke", UNSAFE)
            .attr("stroke-width", "2.5")
            .leaf();
        s.el("text")
            .num("x", x - 5)
            .num("y", f.lanes_bottom() - 8 - 18 * (row % 2))
            .attr("text-anchor", "end")
            .attr("fill", UNSAFE_TEXT)
            .attr("font-weight", "700")
            .attr("font-size", "14")
            .attr("stroke", PAPER)
            .attr("stroke-width", "3")
            .attr("paint-order", "stroke")
            .text(&fit(&text, chars_in(x - PLOT_X0).max(14)));
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
        s.el("g").num("data-seq", i).open();
        s.title(&arrow_title(trace, "", m));
        let mut line = s
            .el("line")
            .num("x1", x0)
            .num("y1", y0)
            .num("x2", x1)
            .num("y2", y1)
            .attr("stroke", colour)
            .attr("stroke-width", width);
        if !lost {
            line = line.attr("marker-end", "url(#st-arrow)");
        }
        if d.held[i] {
            line = line.attr("stroke-dasharray", "7 4");
        }
        line.leaf();
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
        s.el("g").open();
        s.title(&arrow_title(trace, "On its way: ", m));
        s.el("line")
            .num("x1", x0)
            .num("y1", y0)
            .num("x2", cursor_x)
            .num("y2", y)
            .attr("stroke", MESSAGE)
            .attr("stroke-width", "1.6")
            .attr("stroke-dasharray", "2 3")
            .leaf();
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
            s.el("g").num("data-seq", i).open();
            s.title(&arrow_title(trace, "Lost: ", m));
            s.el("line")
                .num("x1", x0)
                .num("y1", y0)
                .num("x2", x1)
                .num("y2", y1)
                .attr("stroke", UNSAFE)
                .attr("stroke-width", "1.6")
                .leaf();
            cross(s, x1, y1, UNSAFE);
            s.close("g");
        }
    }
}

/// A message arrow's tooltip: `prefix` and who sent what to whom.
fn arrow_title(trace: &Trace, prefix: &str, m: &MessageRecord) -> String {
    format!(
        "{prefix}{} → {}: {}",
        trace.node_name(m.from),
        trace.node_name(m.to),
        m.label
    )
}

/// The label of the message just delivered, on a white halo so it reads over the lanes.
fn message_label(s: &mut Markup, f: &Frame, x: i64, y: i64, label: &str) {
    let text = fit(label, 44);
    let w = text.chars().count() as i64 * 7;
    let x = x.clamp(PLOT_X0 + w / 2, (f.plot_right() - w / 2).max(PLOT_X0 + w / 2));
    s.el("text")
        .num("x", x)
        .num("y", y - 6)
        .attr("text-anchor", "middle")
        .attr("fill", MESSAGE_TEXT)
        .attr("font-weight", "700")
        .attr("font-size", "14")
        .attr("stroke", PAPER)
        .attr("stroke-width", "4")
        .attr("paint-order", "stroke")
        .text(&text);
}

fn cross(s: &mut Markup, x: i64, y: i64, colour: &str) {
    s.el("path")
        .attr("d", &format!("M{} {}l10 10m0 -10l-10 10", x - 5, y - 5))
        .attr("stroke", colour)
        .attr("stroke-width", "2.5")
        .attr("fill", "none")
        .leaf();
}

fn marks(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    for i in shown.clone() {
        let e = &trace.entries[i];
        let Some(lane) = e.nodes.first().and_then(|n| lane_of(trace, *n)) else {
            continue;
        };
        let (x, y) = (f.x(i), f.lane_y(lane));
        s.el("g").num("data-seq", i).attr("class", "st-mark").open();
        s.title(&e.line());
        // A larger target than the mark, for clicking.
        s.el("circle")
            .num("cx", x)
            .num("cy", y)
            .attr("r", "11")
            .attr("fill", INK)
            .attr("fill-opacity", "0")
            .leaf();
        if i == f.cursor {
            s.el("circle")
                .num("cx", x)
                .num("cy", y)
                .attr("r", "10")
                .attr("fill", "none")
                .attr("stroke", INK)
                .attr("stroke-width", "2.5")
                .leaf();
        }
        mark_shape(s, e.kind, x, y);
        s.close("g");
    }
}

/// Each kind of event has its own shape, so colour is never the only difference.
fn mark_shape(s: &mut Markup, kind: EventKind, x: i64, y: i64) {
    match kind {
        EventKind::Deliver => {
            s.el("circle")
                .num("cx", x)
                .num("cy", y)
                .attr("r", "4.5")
                .attr("fill", MESSAGE)
                .leaf();
        }
        EventKind::Start | EventKind::Timer => {
            let fill = if kind == EventKind::Start { INK } else { PAPER };
            s.el("rect")
                .num("x", x - 4)
                .num("y", y - 4)
                .attr("width", "8")
                .attr("height", "8")
                .attr("fill", fill)
                .attr("stroke", INK)
                .attr("stroke-width", "1.5")
                .leaf();
        }
        EventKind::Fault | EventKind::Resume => {
            let fill = if kind == EventKind::Fault {
                PAUSE_EDGE
            } else {
                PAPER
            };
            s.el("path")
                .attr("d", &format!("M{} {}l7 12h-14z", x, y - 8))
                .attr("fill", fill)
                .attr("stroke", INK)
                .attr("stroke-width", "1.5")
                .leaf();
        }
        EventKind::PeerDown => cross(s, x, y, INK),
        EventKind::Undeliverable => cross(s, x, y, UNSAFE),
    }
}

fn cursor_line(s: &mut Markup, f: &Frame) {
    let x = f.x(f.cursor);
    s.el("line")
        .num("x1", x)
        .num("y1", TOP - 8)
        .num("x2", x)
        .num("y2", f.lanes_bottom() + 4)
        .attr("stroke", INK)
        .attr("stroke-width", "2")
        .leaf();
}

fn axis(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    let y = f.lanes_bottom() + 4;
    s.el("line")
        .num("x1", PLOT_X0 - 8)
        .num("y1", y)
        .num("x2", f.plot_right())
        .num("y2", y)
        .attr("stroke", MUTED)
        .attr("stroke-width", "1.5")
        .leaf();
    let caption = match f.axis {
        Axis::Time => "time →",
        Axis::Order => "events in order →",
    };
    s.el("text")
        .num("x", PLOT_X0 - 14)
        .num("y", y + 20)
        .attr("text-anchor", "end")
        .attr("fill", MUTED)
        .attr("font-size", "14")
        .text(caption);
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
            s.el("g").open();
            s.title(&format!(
                "{} of quiet, drawn shorter",
                model::time_label(b.gap_us)
            ));
            s.el("path")
                .attr("d", &format!("M{} {}l4 -10m2 10l4 -10", mid - 5, y + 5))
                .attr("stroke", MUTED)
                .attr("stroke-width", "1.5")
                .attr("fill", "none")
                .leaf();
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
        s.el("line")
            .num("x1", x)
            .num("y1", y)
            .num("x2", x)
            .num("y2", y + 5)
            .attr("stroke", MUTED)
            .leaf();
        s.el("text")
            .num("x", x)
            .num("y", y + 20)
            .attr("text-anchor", "middle")
            .attr("fill", MUTED)
            .attr("font-size", "14")
            .text(&text);
    }
    let e = &trace.entries[f.cursor];
    let text = format!("step {} · {}", f.cursor, model::time_label(e.time_us));
    let w = text.chars().count() as i64 * 8 + 14;
    let x = cursor_x.clamp(PLOT_X0 + w / 2, (f.plot_right() - w / 2).max(PLOT_X0 + w / 2));
    s.el("rect")
        .num("x", x - w / 2)
        .num("y", y + 5)
        .num("width", w)
        .attr("height", "22")
        .attr("rx", "11")
        .attr("fill", INK)
        .leaf();
    s.el("text")
        .num("x", x)
        .num("y", y + 21)
        .attr("text-anchor", "middle")
        .attr("fill", PAPER)
        .attr("font-weight", "700")
        .attr("font-size", "14")
        .text(&text);
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
        s.el("text")
            .num("x", x + 26)
            .num("y", y + 5)
            .attr("fill", INK)
            .attr("font-size", "14")
            .text(text);
        x += 40 + text.chars().count() as i64 * 8;
    }
}

fn legend_swatch(s: &mut Markup, key: &str, x: i64, y: i64) {
    let rect = |s: &mut Markup, fill: &str, edge: &str, top: i64, h: i64| {
        s.el("rect")
            .num("x", x)
            .num("y", top)
            .attr("width", "20")
            .num("height", h)
            .attr("fill", fill)
            .attr("stroke", edge)
            .attr("stroke-width", "1.5")
            .leaf();
    };
    match key {
        "msg" => s
            .el("line")
            .num("x1", x)
            .num("y1", y + 4)
            .num("x2", x + 20)
            .num("y2", y - 4)
            .attr("stroke", MESSAGE)
            .attr("stroke-width", "1.6")
            .attr("marker-end", "url(#st-arrow)")
            .leaf(),
        "believes" => rect(s, PAPER, HOLD, y - 3, 7),
        "granted" => rect(s, HOLD, HOLD, y - 3, 7),
        "unsafe" => rect(s, "url(#st-hatch-unsafe)", UNSAFE, y - 8, 16),
        "paused" => rect(s, PAUSE, PAUSE_EDGE, y - 8, 16),
        "crashed" => rect(s, "url(#st-hatch-crash)", CRASH, y - 8, 16),
        "cut" => rect(s, CUT, CUT_EDGE, y - 8, 16),
        _ => s
            .el("path")
            .attr("d", &format!("M{} {}l4 -10m2 10l4 -10", x + 5, y + 5))
            .attr("stroke", MUTED)
            .attr("stroke-width", "1.5")
            .attr("fill", "none")
            .leaf(),
    }
}

#[cfg(test)]
mod tests;
