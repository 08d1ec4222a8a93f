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
//!
//! [`Window::Fit`] is the picture for a projector: drawn for a box of a given size in CSS
//! pixels (one unit of the drawing is one pixel on the page) with text at the size the room
//! reads, it shows the stretch of the run around the current beat and turns like pages as
//! the cursor walks on ([`fit::window_start`]). The current beat's title is written whole
//! above the lanes; every beat in view is a numbered marker, its title in the tooltip.

pub mod fit;
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
    /// A picture drawn for a box, around the current beat, with text at a given size.
    Fit(Fit),
}

/// The box a fitted picture fills, in CSS pixels, and the size of its largest text (lane
/// names and the beat's title); the rest is three quarters of it, and never below 13 px.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    pub width: i64,
    pub height: i64,
    pub text_px: i64,
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

/// Where steps go on the page, and how large things are drawn.
struct Frame<'a> {
    diagram: &'a Diagram,
    axis: Axis,
    /// The axis position at the plot's left edge.
    x_start: i64,
    width: i64,
    height: i64,
    lane_h: i64,
    cursor: usize,
    /// The plot's left edge: the lane names are left of it.
    plot_x0: i64,
    right_pad: i64,
    /// The top of the first lane.
    top: i64,
    /// Lane names' size, and every other text's.
    name_px: i64,
    label_px: i64,
    legend: bool,
    /// A fitted picture: the current beat's title above numbered markers, in place of two
    /// rows of cut titles.
    fitted: Option<Fitted>,
}

/// What only a fitted picture has.
struct Fitted {
    pad: i64,
    /// The baseline of the current beat's title's first line, and from one line to the next.
    title_y: i64,
    title: Title,
    line_h: i64,
    badge_r: i64,
    /// The markers' row: its middle, and each marker's radius.
    markers_y: i64,
    marker_r: i64,
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
        self.plot_x0 + self.pos(step) - self.x_start
    }
    fn lane_y(&self, lane: usize) -> i64 {
        self.top + self.lane_h * lane as i64 + self.lane_h / 2
    }
    fn lanes_bottom(&self) -> i64 {
        self.top + self.lane_h * self.diagram.lanes.len() as i64
    }
    fn plot_right(&self) -> i64 {
        self.width - self.right_pad
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

fn frame<'a>(trace: &Trace, diagram: &'a Diagram, cursor: usize, options: Options) -> Frame<'a> {
    let cursor = cursor.min(diagram.len().saturating_sub(1));
    let mut f = Frame {
        diagram,
        axis: options.axis,
        x_start: 0,
        width: WIDTH,
        height: TOP + lane_height(diagram.lanes.len()) * diagram.lanes.len() as i64 + AXIS_H + LEGEND_H,
        lane_h: lane_height(diagram.lanes.len()),
        cursor,
        plot_x0: PLOT_X0,
        right_pad: RIGHT_PAD,
        top: TOP,
        name_px: 16,
        label_px: 14,
        legend: true,
        fitted: None,
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
        Window::Fit(fit) => fit_frame(trace, &mut f, fit),
    }
    f
}

/// The most room a lane gets in a fitted picture, in lane-name heights (the least is a name's
/// height and a ninth: names read like lines of text set tight).
const FIT_LANE_MAX_PERCENT: i64 = 400;

/// Lays a fitted picture out in its box: the current beat's title (room for the longest in
/// the run, so the lanes stay put from beat to beat), the markers' row, the lanes sharing
/// what height is left, the axis, and the legend if there is room for it.
fn fit_frame(trace: &Trace, f: &mut Frame, fit: Fit) {
    let (width, height) = (fit.width.clamp(160, 8_000), fit.height.clamp(120, 8_000));
    let largest = fit.text_px.clamp(13, 64);
    // The text as large as asked, its title above the markers or (in a box a little short for
    // the run's lanes) beside them on their row; else (such as the diagram under the topology)
    // as large as lets every lane fit; in a box too short even at 13 px, the lanes take the
    // title's row (the story beside the picture has it, and each marker its tooltip).
    let candidates = (13..=largest)
        .rev()
        .flat_map(|big| [(Title::Above, big), (Title::Beside, big)])
        .chain((13..=largest).rev().map(|big| (Title::Off, big)));
    let layout = candidates
        .map(|(title, big)| fit_layout(trace, f.diagram, f.axis, (width, height), big, title))
        .find(|l| l.fits)
        .unwrap_or_else(|| fit_layout(trace, f.diagram, f.axis, (width, height), 13, Title::Off));
    f.legend = layout.legend;
    f.lane_h = layout.lane_h;
    f.plot_x0 = layout.plot_x0;
    f.right_pad = layout.fitted.pad;
    f.width = width;
    // Where the lanes do not fit even at the smallest text, the picture is taller than its
    // box, and the box scrolls: nothing is drawn smaller than 13 px.
    f.height = height.max(layout.needed);
    f.top = layout.top;
    f.name_px = layout.big;
    f.label_px = layout.small;
    f.fitted = Some(layout.fitted);
    let plot_w = f.plot_right() - f.plot_x0;
    let anchor = current_beat(trace, f.cursor).map_or(0, |(_, seq)| f.pos(seq));
    f.x_start = fit::window_start(anchor, f.pos(f.cursor), plot_w);
}

/// A fitted picture laid out with its largest text at `big` px.
struct FitLayout {
    big: i64,
    small: i64,
    top: i64,
    lane_h: i64,
    plot_x0: i64,
    legend: bool,
    fitted: Fitted,
    /// Whether every lane has its least height in the box.
    fits: bool,
    /// The height the picture takes.
    needed: i64,
}

fn fit_layout(
    trace: &Trace,
    diagram: &Diagram,
    axis: Axis,
    (width, height): (i64, i64),
    big: i64,
    title: Title,
) -> FitLayout {
    let small = (big * 3 / 4).max(13).min(big);
    let pad = big / 2;
    let badge_r = big * 2 / 3;
    let title_w = width - 2 * pad - 2 * badge_r - pad;
    let marker_r = small * 3 / 4 + 3;
    let widest = trace
        .reached_beats()
        .map(|(_, b)| fit::text_px(&b.title, big))
        .max();
    let title_lines = match title {
        Title::Above => trace
            .reached_beats()
            .map(|(_, b)| fit::wrap(&b.title, big, title_w).len())
            .max()
            .unwrap_or(0),
        _ => 0,
    };
    let line_h = big * 6 / 5;
    let title_top = pad * 2 / 3;
    let title_h = if title_lines > 0 {
        title_top + line_h * title_lines as i64
    } else {
        0
    };
    // The markers' row just under the title (clear of its last line's descenders), or with
    // the title beside them as tall as its line, and just over the lanes (the current
    // marker's ring ends a pixel above them).
    let markers_y = match title {
        Title::Beside => 3 + (marker_r + 3).max(line_h / 2),
        _ => title_h + 3 + marker_r,
    };
    let top = markers_y + marker_r + 4;
    // Beside the markers, every title on one line with room after it for the current marker.
    let beside_fits = widest.is_none_or(|w| title_w - w >= 2 * marker_r + 16);
    // Under the lanes: the axis 4 px down, its labels' baseline 10/7 of their size below it,
    // and the cursor's chip around them.
    let axis_h = small + 15;
    let legend_h = small + 10;
    let lanes = diagram.lanes.len().max(1) as i64;
    let least = big + big / 9;
    // The legend only where the lanes keep room to spare with it: lanes come first.
    let mut room = height - top - axis_h - legend_h;
    let legend = room / lanes >= big * 3 / 2;
    if !legend {
        room += legend_h;
    }
    // The names' column: the longest name, or the axis's caption under them.
    let names = diagram
        .lanes
        .iter()
        .map(|n| fit::text_px(n, big))
        .chain([fit::text_px(axis_caption(axis), small)])
        .max()
        .unwrap_or(0);
    let lane_h = (room / lanes).clamp(least, big * FIT_LANE_MAX_PERCENT / 100);
    FitLayout {
        big,
        small,
        top,
        lane_h,
        needed: top + lane_h * lanes + axis_h + if legend { legend_h } else { 0 },
        plot_x0: (pad + names + pad + 8).min(width * 2 / 5),
        legend,
        fitted: Fitted {
            pad,
            title_y: match title {
                Title::Beside => markers_y + big * 7 / 20,
                _ => title_top + big * 9 / 10,
            },
            title,
            line_h,
            badge_r,
            markers_y,
            marker_r,
        },
        fits: room / lanes >= least && (title != Title::Beside || beside_fits),
    }
}

/// Where a fitted picture writes the current beat's title.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Title {
    /// On rows of its own above the markers, wrapped if it must be.
    Above,
    /// On the markers' row, one line at its left; the markers keep to its right.
    Beside,
    /// Not at all: a box too short for the lanes leaves it to the story.
    Off,
}

/// The beat being told at `cursor`: the latest in story order reached by then, as its number
/// (from 1) and step.
fn current_beat(trace: &Trace, cursor: usize) -> Option<(usize, usize)> {
    trace
        .beats
        .iter()
        .enumerate()
        .filter_map(|(k, b)| b.seq.map(|s| (k + 1, s as usize)))
        .rev()
        .find(|(_, s)| *s <= cursor)
}

/// The steps a picture shows: from the first whose mark is in view to the cursor.
pub fn visible(trace: &Trace, diagram: &Diagram, cursor: usize, options: Options) -> Range<usize> {
    if diagram.is_empty() {
        return 0..0;
    }
    let f = frame(trace, diagram, cursor, options);
    // Positions only grow along the trace: a binary search for the first step in view.
    let (mut lo, mut hi) = (0, f.cursor + 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if f.x(mid) < f.plot_x0 - 12 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo..f.cursor + 1
}

/// The diagram at `cursor` as SVG text.
pub fn svg(trace: &Trace, diagram: &Diagram, cursor: usize, options: Options) -> String {
    let f = frame(trace, diagram, cursor, options);
    let shown = visible(trace, diagram, cursor, options);
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
    if f.fitted.is_none() {
        beat_labels(trace, &mut s, &f, &shown);
    }
    cursor_line(&mut s, &f);
    s.close("g");
    if let Some(fitted) = &f.fitted {
        beat_markers(trace, &mut s, &f, fitted, &shown);
        beat_title(trace, &mut s, &f, fitted);
    }
    axis(trace, &mut s, &f, &shown);
    if f.legend {
        legend(&mut s, &f);
    }
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
        .num("x", f.plot_x0 - 12)
        .attr("y", "0")
        .num("width", f.width - f.plot_x0 + 12)
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
            .num("x1", f.plot_x0 - 8)
            .num("y1", y)
            .num("x2", f.plot_right())
            .num("y2", y)
            .attr("stroke", LANE)
            .attr("stroke-width", "1.5")
            .leaf();
        let left = f.fitted.as_ref().map_or(8, |fitted| fitted.pad);
        let name = fit::cut(name, f.name_px, f.plot_x0 - 14 - left);
        let mut text = s.el("text");
        if f.fitted.is_some() {
            text = text.attr("class", "st-lane-name");
        }
        text.num("x", f.plot_x0 - 14)
            .num("y", y + f.name_px * 5 / 16)
            .attr("text-anchor", "end")
            .attr("font-weight", "700")
            .num("font-size", f.name_px)
            .attr("fill", INK)
            .text(&name);
    }
}

fn bands(s: &mut Markup, f: &Frame) {
    for band in &f.diagram.unsafe_bands {
        if band.start > f.cursor || f.until(band.end) < f.plot_x0 - 12 {
            continue;
        }
        let (x0, x1) = (f.x(band.start), f.until(band.end));
        s.el("g").open();
        s.title(&band.text);
        s.el("rect")
            .num("x", x0)
            .num("y", f.top - 4)
            .num("width", (x1 - x0).max(3))
            .num("height", f.lanes_bottom() - f.top + 4)
            .attr("fill", "url(#st-hatch-unsafe)")
            .attr("stroke", UNSAFE)
            .attr("stroke-width", "1.5")
            .leaf();
        s.close("g");
    }
}

const UNSAFE_LABEL: &str = "⚠ unsafe window";

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
    let mut free_x = vec![f.plot_x0; f.diagram.lanes.len()];
    for span in &f.diagram.spans {
        if span.start > f.cursor || f.until(span.end) < f.plot_x0 - 12 {
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
    // In a fitted picture's lanes (as little as 1.4 lane names high) the bars are thinner and
    // the fault's box takes what is left between them.
    let (bar, inset, half) = match f.fitted {
        Some(_) => (
            5,
            2,
            (f.lane_h / 2 - 9).clamp(f.label_px / 2 + 2, f.label_px / 2 + 6),
        ),
        None => (7, 4, 10),
    };
    let (top, height) = match span.kind {
        SpanKind::Believes => (y - f.lane_h / 2 + inset, bar),
        SpanKind::Granted => (y + f.lane_h / 2 - inset - bar, bar),
        _ => (y - half, 2 * half),
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
        // The label may run past its span, up to the plot's edge.
        let label = fit::cut(&span.label, f.label_px, f.plot_right() - lx);
        free_x[span.lane] = lx + fit::text_px(&label, f.label_px) + 6;
        s.el("text")
            .num("x", lx)
            .num("y", y + f.label_px * 5 / 14)
            .attr("fill", INK)
            .attr("font-weight", "700")
            .num("font-size", f.label_px)
            .attr("stroke", PAPER)
            .attr("stroke-width", "3")
            .attr("paint-order", "stroke")
            .text(&label);
    }
    s.close("g");
}

fn beat_lines(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    let from = match &f.fitted {
        Some(fitted) => fitted.markers_y + fitted.marker_r,
        None => TOP - 6,
    };
    for (_, seq) in reached_beats(trace, shown) {
        let x = f.x(seq);
        s.el("line")
            .num("x1", x)
            .num("y1", from)
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
            .text(&fit::cut(title, 15, room.max(60)));
        s.close("g");
    }
}

/// A fitted picture's beats in view: a numbered marker each on one row above the lanes, the
/// current beat's ringed, each at its beat's line or (when beats come close together) moved
/// left just clear of the next with a leader to its line; the full titles are in tooltips.
fn beat_markers(trace: &Trace, s: &mut Markup, f: &Frame, fitted: &Fitted, shown: &Range<usize>) {
    let beats = reached_beats(trace, shown);
    let current = current_beat(trace, f.cursor).map(|(n, _)| n);
    let r = fitted.marker_r;
    let xs: Vec<i64> = beats.iter().map(|(_, seq)| f.x(*seq)).collect();
    // Beside the title, the markers keep to its right.
    let left = match (fitted.title, current_beat(trace, f.cursor)) {
        (Title::Beside, Some((number, _))) => {
            let title = &trace.beats[number - 1].title;
            fitted.pad * 2 + 2 * fitted.badge_r + fit::text_px(title, f.name_px) + r + 12
        }
        _ => f.plot_x0 - 12 + r,
    };
    let placed = fit::place_markers(&xs, 2 * r + 8, left, f.plot_right() - r);
    let y = fitted.markers_y;
    for ((number, seq), at) in beats.iter().zip(placed) {
        let Some(mx) = at else { continue };
        let x = f.x(*seq);
        let title = &trace.beats[number - 1].title;
        let now = current == Some(*number);
        s.el("g").num("data-seq", *seq).attr("class", "st-beat").open();
        s.title(&format!("Beat {number}: {title}"));
        if mx != x {
            s.el("line")
                .num("x1", mx)
                .num("y1", y + r)
                .num("x2", x)
                .num("y2", f.top - 2)
                .attr("stroke", INK)
                .attr("stroke-width", "1.2")
                .leaf();
        }
        s.el("circle")
            .attr("class", "st-beat-marker")
            .num("cx", mx)
            .num("cy", y)
            .num("r", r)
            .attr("fill", if now { NOW } else { INK })
            .leaf();
        if now {
            s.el("circle")
                .num("cx", mx)
                .num("cy", y)
                .num("r", r + 3)
                .attr("fill", "none")
                .attr("stroke", NOW)
                .attr("stroke-width", "2")
                .leaf();
        }
        s.el("text")
            .num("x", mx)
            .num("y", y + f.label_px * 5 / 14)
            .attr("text-anchor", "middle")
            .attr("fill", PAPER)
            .attr("font-weight", "700")
            .num("font-size", f.label_px)
            .text(&number.to_string());
        s.close("g");
    }
}

/// The current beat's title, whole, over the width of a fitted picture: a numbered badge and
/// the title wrapped onto as many lines as it takes.
fn beat_title(trace: &Trace, s: &mut Markup, f: &Frame, fitted: &Fitted) {
    let Some((number, seq)) = current_beat(trace, f.cursor).filter(|_| fitted.title != Title::Off) else {
        return;
    };
    let title = &trace.beats[number - 1].title;
    let (pad, r, size) = (fitted.pad, fitted.badge_r, f.name_px);
    let text_x = pad + 2 * r + pad;
    let lines = match fitted.title {
        Title::Beside => vec![title.clone()],
        _ => fit::wrap(title, size, f.width - text_x - pad),
    };
    let first = fitted.title_y;
    s.el("g").num("data-seq", seq).attr("class", "st-beat-now").open();
    s.title(&format!("Beat {number}: {title}"));
    s.el("circle")
        .attr("class", "st-beat-badge")
        .num("cx", pad + r)
        .num("cy", first - size * 7 / 20)
        .num("r", r)
        .attr("fill", NOW)
        .leaf();
    s.el("text")
        .num("x", pad + r)
        .num("y", first - size * 7 / 20 + f.label_px * 5 / 14)
        .attr("text-anchor", "middle")
        .attr("fill", PAPER)
        .attr("font-weight", "700")
        .num("font-size", f.label_px)
        .text(&number.to_string());
    s.el("text")
        .attr("class", "st-beat-title")
        .num("x", text_x)
        .num("y", first)
        .attr("fill", INK)
        .attr("font-weight", "700")
        .num("font-size", size)
        .open();
    for (i, line) in lines.iter().enumerate() {
        let dy = if i == 0 { 0 } else { fitted.line_h };
        s.el("tspan").num("x", text_x).num("dy", dy).text(line);
    }
    s.close("text");
    s.close("g");
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
            .num("y1", f.top - 4)
            .num("x2", x)
            .num("y2", f.lanes_bottom())
            .attr("stroke", UNSAFE)
            .attr("stroke-width", "2.5")
            .leaf();
        s.el("text")
            .num("x", x - 5)
            .num("y", f.lanes_bottom() - 8 - (f.label_px + 4) * (row % 2))
            .attr("text-anchor", "end")
            .attr("fill", UNSAFE_TEXT)
            .attr("font-weight", "700")
            .num("font-size", f.label_px)
            .attr("stroke", PAPER)
            .attr("stroke-width", "3")
            .attr("paint-order", "stroke")
            .text(&fit::cut(&text, f.label_px, (x - f.plot_x0).max(120)));
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
    // At most three fifths of the plot: the rest of the arrows stay in sight.
    let text = fit::cut(label, f.label_px, (f.plot_right() - f.plot_x0) * 3 / 5);
    let w = fit::text_px(&text, f.label_px);
    let x0 = f.plot_x0;
    let x = x.clamp(x0 + w / 2, (f.plot_right() - w / 2).max(x0 + w / 2));
    s.el("text")
        .num("x", x)
        .num("y", y - 6)
        .attr("text-anchor", "middle")
        .attr("fill", MESSAGE_TEXT)
        .attr("font-weight", "700")
        .num("font-size", f.label_px)
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
        .num("y1", f.top - 8)
        .num("x2", x)
        .num("y2", f.lanes_bottom() + 4)
        .attr("stroke", INK)
        .attr("stroke-width", "2")
        .leaf();
}

/// What runs along the axis, written under the lane names.
fn axis_caption(axis: Axis) -> &'static str {
    match axis {
        Axis::Time => "time →",
        Axis::Order => "events →",
    }
}

/// The axis, and under it the cursor's step and time on a chip, the unsafe window's label
/// (next to the window's start, or either side of the chip: under the axis it is clear of the
/// lanes' labels) and time labels wherever they are clear of both and of each other.
fn axis(trace: &Trace, s: &mut Markup, f: &Frame, shown: &Range<usize>) {
    let y = f.lanes_bottom() + 4;
    let x0 = f.plot_x0;
    let size = f.label_px;
    s.el("line")
        .num("x1", x0 - 8)
        .num("y1", y)
        .num("x2", f.plot_right())
        .num("y2", y)
        .attr("stroke", MUTED)
        .attr("stroke-width", "1.5")
        .leaf();
    // Baselines below the axis: the labels', and the cursor's chip around its text.
    let (label_y, chip_h) = (y + size * 10 / 7, size + 8);
    s.el("text")
        .num("x", x0 - 14)
        .num("y", label_y)
        .attr("text-anchor", "end")
        .attr("fill", MUTED)
        .num("font-size", size)
        .text(axis_caption(f.axis));
    if f.axis == Axis::Time {
        for b in &f.diagram.breaks {
            if !shown.contains(&b.entry) || b.entry == 0 {
                continue;
            }
            let (xa, xb) = (f.x(b.entry - 1), f.x(b.entry));
            let mid = (xa + xb) / 2;
            if mid < x0 {
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
    let e = &trace.entries[f.cursor];
    let text = format!("step {} · {}", f.cursor, model::time_label(e.time_us));
    let w = fit::text_px(&text, size) + size;
    let chip_x = f
        .x(f.cursor)
        .clamp(x0 + w / 2, (f.plot_right() - w / 2).max(x0 + w / 2));
    // What is written under the axis: none may cover another.
    let mut taken = vec![(chip_x - w / 2, chip_x + w / 2)];
    let clear = |taken: &[(i64, i64)], l: i64, r: i64| {
        l >= x0 - 8 && r <= f.plot_right() && taken.iter().all(|(a, b)| r + size <= *a || l >= b + size)
    };
    let label_w = fit::text_px(UNSAFE_LABEL, size);
    for band in &f.diagram.unsafe_bands {
        if band.start > f.cursor || f.until(band.end) < x0 - 12 {
            continue;
        }
        let at = f.x(band.start).max(x0);
        let spot = [at, chip_x - w / 2 - size - label_w, chip_x + w / 2 + size]
            .into_iter()
            .find(|l| clear(&taken, *l, l + label_w));
        if let Some(l) = spot {
            s.el("text")
                .num("x", l)
                .num("y", label_y)
                .attr("fill", UNSAFE_TEXT)
                .attr("font-weight", "700")
                .num("font-size", size)
                .text(UNSAFE_LABEL);
            taken.push((l, l + label_w));
        }
    }
    let mut last_x = x0 - 200;
    for i in shown.clone() {
        let x = f.x(i);
        if x - last_x < size * 9 {
            continue;
        }
        let text = match f.axis {
            Axis::Time => model::time_label(trace.entries[i].time_us),
            Axis::Order => format!("step {i}"),
        };
        let half = fit::text_px(&text, size) / 2;
        if x - half < x0 || !clear(&taken, x - half, x + half) {
            continue;
        }
        last_x = x;
        s.el("line")
            .num("x1", x)
            .num("y1", y)
            .num("x2", x)
            .num("y2", y + 5)
            .attr("stroke", MUTED)
            .leaf();
        s.el("text")
            .num("x", x)
            .num("y", label_y)
            .attr("text-anchor", "middle")
            .attr("fill", MUTED)
            .num("font-size", size)
            .text(&text);
    }
    s.el("rect")
        .num("x", chip_x - w / 2)
        .num("y", y + 5)
        .num("width", w)
        .num("height", chip_h)
        .num("rx", chip_h / 2)
        .attr("fill", INK)
        .leaf();
    s.el("text")
        .num("x", chip_x)
        .num("y", y + 5 + chip_h * 8 / 11)
        .attr("text-anchor", "middle")
        .attr("fill", PAPER)
        .attr("font-weight", "700")
        .num("font-size", size)
        .text(&text);
}

/// The legend: what each shape means, for the kinds this run has, on one row (what does not
/// fit a fitted picture's box is left to the marks' tooltips).
fn legend(s: &mut Markup, f: &Frame) {
    let size = f.label_px;
    let y = match f.fitted {
        Some(_) => f.lanes_bottom() + size + 18 + (size + 10) / 2,
        None => f.height - LEGEND_H / 2,
    };
    let mut x = f.plot_x0 - 8;
    for (key, text) in legend_items(f.diagram, f.axis) {
        let next = x + 26 + fit::text_px(text, size) + size;
        if next - size > f.width - f.right_pad {
            break;
        }
        legend_swatch(s, key, x, y);
        s.el("text")
            .num("x", x + 26)
            .num("y", y + size * 5 / 14)
            .attr("fill", INK)
            .num("font-size", size)
            .text(text);
        x = next;
    }
}

/// What each shape means, for the kinds this run has.
fn legend_items(d: &Diagram, axis: Axis) -> Vec<(&'static str, &'static str)> {
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
    if axis == Axis::Time && !d.breaks.is_empty() {
        items.push(("break", "time cut short"));
    }
    items
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
