//! Where every card sits and how large the picture's type is. A layout is made for the box the
//! picture has on screen, in CSS px (the drawing's user units are those pixels), so a font size
//! in the drawing is the size a room reads. It picks the largest type that fits: the cards the
//! current beat is about ("in focus") are drawn in full at that size, the others compact.
//!
//! The arrangement — a consensus cluster's servers on a ring, or rows of participants by kind,
//! authorities on top, workers in the middle, what they write to at the bottom — is chosen once
//! per run and box, for the type it allows at the worst of the run's beats, so cards keep their
//! places from beat to beat; only their sizes change with the focus.

use super::card::{self, Level, Shape};
use coordlab_sim::trace::NodeInfo;

/// The box a picture is drawn for, in CSS px.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Space {
    pub width: f64,
    /// `None`: as tall as the cards need (a phone's page scrolls; the width decides).
    pub height: Option<f64>,
    /// No text is drawn smaller than this.
    pub min_text: f64,
}

impl Space {
    /// A 16:9 picture of 960×540 with text of 12 px and up: what a saved or printed picture
    /// uses when no screen decides.
    pub const STANDARD: Space = Space {
        width: 960.0,
        height: Some(540.0),
        min_text: 12.0,
    };

    /// The space, made safe to lay out in: at least 120×80 (a frame that small is not a
    /// picture anyone reads, but must not break the layout), text at least 8 px.
    pub fn sane(self) -> Space {
        Space {
            width: self.width.clamp(120.0, 4000.0),
            height: self.height.map(|h| h.clamp(80.0, 4000.0)),
            min_text: self.min_text.clamp(8.0, 24.0),
        }
    }
}

/// The sizes of a drawing's text, in px.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Type {
    /// A card in focus: its name, its state word and its badges' figures.
    pub big: f64,
    /// Details, badge labels, message labels, log indexes.
    pub small: f64,
    /// A quiet card's name, word and figure.
    pub quiet: f64,
    /// The term in a log cell.
    pub cell: f64,
    /// A card in full stacks its badges under its state word (narrow cards) rather than
    /// beside its name (wide ones).
    pub stack: bool,
    /// How much of a card in focus is drawn, and of the others.
    pub focus: Level,
    pub rest: Level,
}

impl Type {
    pub fn new(big: f64, min_text: f64) -> Type {
        let big = big.round();
        Type {
            big,
            small: (big * 0.62).max(min_text).round(),
            quiet: (big * 0.68).max(min_text + 1.0).min(big).round(),
            cell: (big * 0.8).max(min_text).round(),
            stack: false,
            focus: Level::Full,
            rest: Level::Compact,
        }
    }
}

/// A box as (left, top, right, bottom).
pub type Bounds = (f64, f64, f64, f64);

/// How a run's participants are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrangement {
    /// The consensus servers on an ellipse, everyone else in the corners.
    Ring,
    /// Rows by kind, each wrapped at this many cards.
    Rows(usize),
    /// Every card in one flow, by kind and then in order, wrapped at this many cards: for a
    /// small frame, where a row per kind costs too much height.
    Flow(usize),
}

/// The picture at one focus: every card's box and whether it is drawn in full.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    pub ty: Type,
    /// Card boxes by node id.
    pub boxes: Vec<Bounds>,
    /// By node id: drawn in full (in focus) or compact.
    pub full: Vec<bool>,
    pub ring: bool,
}

impl Layout {
    /// A card's centre.
    pub fn centre(&self, i: usize) -> (f64, f64) {
        let b = self.boxes[i];
        ((b.0 + b.2) / 2.0, (b.1 + b.3) / 2.0)
    }

    /// The `viewBox` attribute: the whole box, one unit a pixel.
    pub fn view_box(&self) -> String {
        format!(
            "0 0 {} {}",
            crate::markup::px(self.width),
            crate::markup::px(self.height)
        )
    }
}

/// Which row a participant sits in.
fn tier(kind: &str) -> usize {
    match kind {
        "database" | "lease-store" | "store" | "server" | "raft-server" => 0,
        "worker" | "client" | "raft-client" => 1,
        _ => 2,
    }
}

pub(crate) fn shape(kind: &str) -> Shape {
    match kind {
        "raft-server" if cfg!(feature = "cluster") => Shape::Server,
        _ => Shape::Plain,
    }
}

/// Whether a run is a consensus cluster (two or more servers).
pub fn is_cluster(nodes: &[NodeInfo]) -> bool {
    cfg!(feature = "cluster") && nodes.iter().filter(|n| n.kind == "raft-server").count() >= 2
}

/// The least space between two cards side by side (a message's dot and some air), and between
/// two rows (a message label's line above and below a dot), and at the picture's edges.
const GAP_X: f64 = 24.0;
const GAP_X_MAX: f64 = 64.0;
const EDGE: f64 = 6.0;
/// The largest type a picture uses, and on a phone (whose page scrolls: larger cards only make
/// it longer).
const BIG_MAX: f64 = 34.0;
const BIG_MAX_TALL: f64 = 18.0;

/// The least gap between rows: a message label's line above and below a dot; less between
/// chips, whose messages go unlabelled.
fn gap_y(ty: &Type) -> f64 {
    if ty.rest == Level::Chip && ty.focus != Level::Full {
        (ty.small * 1.2).max(12.0)
    } else {
        (ty.small * 2.2).max(24.0)
    }
}

/// The least gap between two cards side by side.
fn gap_x(ty: &Type) -> f64 {
    if ty.rest == Level::Chip {
        16.0
    } else {
        GAP_X
    }
}

/// The card sizes for one focus at one type.
fn sizes(nodes: &[NodeInfo], full: &[bool], ty: &Type) -> Vec<(f64, f64)> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| card::need(&n.name, shape(&n.kind), ty, full[i]))
        .collect()
}

/// Rows: each kind's participants in order, wrapped at `per_row`.
fn rows(nodes: &[NodeInfo], per_row: usize) -> Vec<Vec<usize>> {
    let mut tiers: Vec<usize> = nodes.iter().map(|n| tier(&n.kind)).collect();
    coordlab_sim::kernel::collections::sort(&mut tiers);
    tiers.dedup();
    let mut out = Vec::new();
    for t in tiers {
        let members: Vec<usize> = (0..nodes.len()).filter(|&i| tier(&nodes[i].kind) == t).collect();
        for chunk in members.chunks(per_row.max(1)) {
            out.push(chunk.to_vec());
        }
    }
    out
}

/// One flow: every participant by kind, then in order, wrapped at `per_row`.
fn flow(nodes: &[NodeInfo], per_row: usize) -> Vec<Vec<usize>> {
    let order: Vec<usize> = rows(nodes, usize::MAX).concat();
    order.chunks(per_row.max(1)).map(<[usize]>::to_vec).collect()
}

/// The boxes of `sizes` in rows inside `space`, or `None` if they do not fit.
#[inline(never)]
fn place_rows(
    rows: &[Vec<usize>],
    sizes: &[(f64, f64)],
    full: &[bool],
    space: &Space,
    ty: &Type,
) -> Option<(Vec<Bounds>, f64)> {
    let w = space.width;
    let gy = gap_y(ty);
    let mut heights: Vec<f64> = rows
        .iter()
        .map(|r| r.iter().map(|&i| sizes[i].1).fold(0.0, f64::max))
        .collect();
    for r in rows {
        let used: f64 =
            r.iter().map(|&i| sizes[i].0).sum::<f64>() + gap_x(ty) * (r.len() as f64 - 1.0) + 2.0 * EDGE;
        if used > w {
            return None;
        }
    }
    let cards: f64 = heights.iter().sum();
    let n = rows.len() as f64;
    let needed = cards + gy * (n - 1.0) + 2.0 * EDGE;
    let height = match space.height {
        Some(h) if needed > h => return None,
        Some(h) => h,
        None => needed,
    };
    // Spare height first lets the cards in focus grow (room for badges under the word and
    // for details), then goes between the rows (more room for messages), up to twice the
    // least gap; what is left centres the picture.
    let mut spare = height - needed;
    let grows = |r: &Vec<usize>| ty.focus == Level::Full && r.iter().any(|&i| full[i]);
    let growing = rows.iter().filter(|r| grows(r)).count();
    let grow = if growing > 0 {
        (spare / growing as f64).min(card::growth(ty)).max(0.0)
    } else {
        0.0
    };
    let mut sizes = sizes.to_vec();
    for (r, row_h) in rows.iter().zip(heights.iter_mut()) {
        if grows(r) {
            *row_h += grow;
            spare -= grow;
            for &i in r.iter().filter(|&&i| full[i]) {
                sizes[i].1 = *row_h;
            }
        }
    }
    let cards: f64 = heights.iter().sum();
    let gy = gy + (spare / n.max(1.0)).min(gy);
    let total = cards + gy * (n - 1.0);
    let mut top = (height - total) / 2.0;
    let mut boxes = vec![(0.0, 0.0, 0.0, 0.0); sizes.len()];
    for (r, row_h) in rows.iter().zip(&heights) {
        let widths: f64 = r.iter().map(|&i| sizes[i].0).sum();
        let count = r.len() as f64;
        let gap = ((w - 2.0 * EDGE - widths) / (count + 1.0)).clamp(gap_x(ty), GAP_X_MAX);
        let mut left = (w - widths - gap * (count - 1.0)) / 2.0;
        for &i in r {
            let (cw, ch) = sizes[i];
            let y = top + (row_h - ch) / 2.0;
            boxes[i] = (left, y, left + cw, y + ch);
            left += cw + gap;
        }
        top += row_h + gy;
    }
    Some((boxes, height))
}

fn apart(a: Bounds, b: Bounds, gap: f64) -> bool {
    a.2 + gap <= b.0 || b.2 + gap <= a.0 || a.3 + gap <= b.1 || b.3 + gap <= a.1
}

/// The servers on an ellipse filling the box, starting at the top, clockwise; everyone else in
/// the corners. `None` if any two cards come closer than a gap or a card leaves the box.
#[inline(never)]
fn place_ring(nodes: &[NodeInfo], sizes: &[(f64, f64)], space: &Space) -> Option<(Vec<Bounds>, f64)> {
    if !cfg!(feature = "cluster") {
        return None;
    }
    let h = space.height?;
    let w = space.width;
    let servers: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].kind == "raft-server")
        .collect();
    let others: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].kind != "raft-server")
        .collect();
    if others.len() > 4 {
        return None;
    }
    let widest = servers.iter().map(|&i| sizes[i].0).fold(0.0, f64::max);
    let tallest = servers.iter().map(|&i| sizes[i].1).fold(0.0, f64::max);
    let (rx, ry) = (w / 2.0 - widest / 2.0 - EDGE, h / 2.0 - tallest / 2.0 - EDGE);
    if rx <= 0.0 || ry <= 0.0 {
        return None;
    }
    let mut boxes = vec![(0.0, 0.0, 0.0, 0.0); sizes.len()];
    for (k, &i) in servers.iter().enumerate() {
        let (cos, sin) = super::around_from_top(k, servers.len());
        let (x, y) = (w / 2.0 + rx * cos, h / 2.0 + ry * sin);
        let (cw, ch) = sizes[i];
        boxes[i] = (x - cw / 2.0, y - ch / 2.0, x + cw / 2.0, y + ch / 2.0);
    }
    for (k, &i) in others.iter().enumerate() {
        let (cw, ch) = sizes[i];
        let (l, t) = (
            if k % 2 == 0 { EDGE } else { w - EDGE - cw },
            if k < 2 { EDGE } else { h - EDGE - ch },
        );
        boxes[i] = (l, t, l + cw, t + ch);
    }
    let gap = GAP_X * 0.6;
    for (i, a) in boxes.iter().enumerate() {
        if a.0 < 0.0 || a.1 < 0.0 || a.2 > w || a.3 > h {
            return None;
        }
        if boxes[i + 1..].iter().any(|b| !apart(*a, *b, gap)) {
            return None;
        }
    }
    Some((boxes, h))
}

fn place(
    nodes: &[NodeInfo],
    arrangement: Arrangement,
    space: &Space,
    full: &[bool],
    ty: &Type,
) -> Option<(Vec<Bounds>, f64)> {
    match arrangement {
        Arrangement::Ring => place_ring(nodes, &sizes(nodes, full, ty), space),
        Arrangement::Rows(k) => place_rows(&rows(nodes, k), &sizes(nodes, full, ty), full, space, ty),
        Arrangement::Flow(k) => place_rows(&flow(nodes, k), &sizes(nodes, full, ty), full, space, ty),
    }
}

/// How much of the cards to draw, richest first: in focus in full with the rest compact, then
/// with the rest as one-line chips, then everything compact or chips (a small frame).
const LEVELS: [(Level, Level, bool); 6] = [
    (Level::Full, Level::Compact, false),
    (Level::Full, Level::Compact, true),
    (Level::Full, Level::Chip, false),
    (Level::Full, Level::Chip, true),
    (Level::Compact, Level::Chip, false),
    (Level::Chip, Level::Chip, false),
];

/// The largest type (whole pixels) at which `arrangement` fits `space` with `full` cards in
/// focus at one level of detail, and the boxes at it; `None` if it does not fit even at the
/// smallest.
fn largest(
    nodes: &[NodeInfo],
    arrangement: Arrangement,
    space: &Space,
    full: &[bool],
    (focus, rest, stack): (Level, Level, bool),
) -> Option<(Type, (Vec<Bounds>, f64))> {
    let cap = if space.height.is_some() {
        BIG_MAX
    } else {
        BIG_MAX_TALL
    };
    let at = |big: f64| {
        let ty = Type {
            stack,
            focus,
            rest,
            ..Type::new(big, space.min_text)
        };
        place(nodes, arrangement, space, full, &ty).map(|p| (ty, p))
    };
    let mut found = at(space.min_text)?;
    let (mut lo, mut hi) = (space.min_text, cap.max(space.min_text));
    while hi - lo >= 1.0 {
        let mid = ((lo + hi) / 2.0).ceil();
        match at(mid) {
            Some(f) => {
                lo = mid;
                found = f;
            }
            None => hi = mid - 1.0,
        }
    }
    Some(found)
}

/// The richest level of detail at which the cards in focus get type a room reads (half as large
/// again as the smallest text), at the largest type it allows; else the richest that fits at
/// all; else `None`.
fn best(
    nodes: &[NodeInfo],
    arrangement: Arrangement,
    space: &Space,
    full: &[bool],
) -> Option<(Type, (Vec<Bounds>, f64))> {
    let readable = space.min_text * 1.5;
    let mut fallback = None;
    for levels in LEVELS {
        if let Some(found) = largest(nodes, arrangement, space, full, levels) {
            if found.0.big >= readable {
                return Some(found);
            }
            fallback = fallback.or(Some(found));
        }
    }
    fallback
}

/// The arrangement for a run in `space`: the one whose worst focus (of `focuses`, one per beat
/// and one with nothing in focus) still gets the largest type; a ring before rows, fewer rows
/// before more, when they tie.
pub fn arrange(nodes: &[NodeInfo], space: &Space, focuses: &[Vec<bool>]) -> Arrangement {
    let mut candidates = Vec::new();
    if is_cluster(nodes) && space.height.is_some() {
        candidates.push(Arrangement::Ring);
    }
    let widest = rows(nodes, usize::MAX).iter().map(Vec::len).max().unwrap_or(1);
    for k in (1..=widest).rev() {
        candidates.push(Arrangement::Rows(k));
    }
    // A flow across kinds: after the rows, so it is taken only where it does better.
    for k in (2..=nodes.len().min(6)).rev() {
        candidates.push(Arrangement::Flow(k));
    }
    let score = |a: Arrangement| -> (i64, i64) {
        let mut worst = i64::MAX;
        let mut height = 0.0f64;
        for f in focuses {
            let (points, h) = match best(nodes, a, space, f) {
                // Richer levels of detail first, then larger type.
                // Type past 24 px (twice the usual smallest) reads from any seat: beyond it
                // the candidates tie, and the ring, which shows who talks to whom best, wins.
                Some((ty, (_, h))) => (
                    1000 - 100 * detail_rank(&ty) + ty.big.min(space.min_text * 2.0) as i64,
                    h,
                ),
                None => (0, f64::MAX),
            };
            worst = worst.min(points);
            height = height.max(h);
        }
        // Ties go to the shorter picture (a phone scrolls less).
        (worst, -(height as i64))
    };
    let mut best_a = candidates[0];
    let mut best_s = score(best_a);
    for &a in &candidates[1..] {
        let s = score(a);
        if s > best_s {
            best_s = s;
            best_a = a;
        }
    }
    best_a
}

/// How far down [`LEVELS`] a type's levels are.
fn detail_rank(ty: &Type) -> i64 {
    LEVELS
        .iter()
        .position(|l| (l.0, l.1) == (ty.focus, ty.rest))
        .unwrap_or(LEVELS.len()) as i64
}

/// The layout of `nodes` arranged as `arrangement` in `space`, with `full` cards in focus.
pub fn lay_out(nodes: &[NodeInfo], arrangement: Arrangement, space: &Space, full: &[bool]) -> Layout {
    let ring = arrangement == Arrangement::Ring;
    let (ty, (boxes, height)) = best(nodes, arrangement, space, full).unwrap_or_else(|| {
        // Nothing fits even as chips at the smallest type: one chip a row, as tall and wide as
        // that needs; the browser then fits the larger picture into the box, smaller.
        let ty = Type {
            focus: Level::Chip,
            rest: Level::Chip,
            ..Type::new(space.min_text, space.min_text)
        };
        let sz = sizes(nodes, full, &ty);
        let widest = sz.iter().map(|s| s.0).fold(space.width, f64::max) + 2.0 * EDGE;
        let tall = Space {
            width: widest,
            height: None,
            ..*space
        };
        let placed = place_rows(&rows(nodes, 1), &sz, full, &tall, &ty)
            .unwrap_or((vec![(0.0, 0.0, 10.0, 10.0); nodes.len()], 100.0));
        (ty, placed)
    });
    let width = boxes.iter().map(|b| b.2 + EDGE).fold(space.width, f64::max);
    Layout {
        width,
        height,
        ty,
        boxes,
        full: full.to_vec(),
        ring,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordlab_sim::kernel::ids::NodeId;

    fn nodes(kinds: &[&str]) -> Vec<NodeInfo> {
        kinds
            .iter()
            .enumerate()
            .map(|(i, k)| NodeInfo {
                id: NodeId(i as u32),
                name: format!("{k}-{i}"),
                kind: (*k).to_string(),
                faults: Vec::new(),
            })
            .collect()
    }

    fn assert_no_overlap(l: &Layout) {
        for (i, a) in l.boxes.iter().enumerate() {
            assert!(
                a.0 >= 0.0 && a.1 >= 0.0 && a.2 <= l.width + 0.5 && a.3 <= l.height + 0.5,
                "card {i} {a:?} outside {}x{}",
                l.width,
                l.height
            );
            for b in &l.boxes[i + 1..] {
                assert!(apart(*a, *b, 8.0), "{a:?} over {b:?}");
            }
        }
    }

    #[test]
    fn a_busy_picture_at_a_projectors_zoom_draws_its_focus_at_18_px_or_more() {
        let ns = nodes(&[
            "store", "store", "store", "worker", "worker", "resource", "sentinel", "sentinel", "sentinel",
        ]);
        let space = Space {
            width: 840.0,
            height: Some(300.0),
            min_text: 12.0,
        };
        let mut full = vec![false; ns.len()];
        full[0] = true;
        full[3] = true;
        let a = arrange(&ns, &space, &[full.clone()]);
        let l = lay_out(&ns, a, &space, &full);
        assert!(l.ty.big >= 18.0, "{:?} with {a:?}", l.ty);
        assert!(l.ty.small >= 12.0 && l.ty.quiet >= 12.0);
        assert_no_overlap(&l);
    }

    #[test]
    fn a_cluster_fits_a_ring_in_a_squarish_box_and_rows_on_a_phone() {
        let ns = nodes(&["raft-server"; 5]);
        let square = Space {
            width: 720.0,
            height: Some(560.0),
            min_text: 12.0,
        };
        let focus = vec![vec![true, false, true, false, false]];
        let l = lay_out(&ns, Arrangement::Ring, &square, &focus[0]);
        assert_no_overlap(&l);
        assert!(l.ty.big >= 18.0, "{:?}", l.ty);
        let phone = Space {
            width: 370.0,
            height: None,
            min_text: 12.0,
        };
        let a = arrange(&ns, &phone, &focus);
        assert!(matches!(a, Arrangement::Rows(_)), "{a:?}");
        let l = lay_out(&ns, a, &phone, &focus[0]);
        assert_no_overlap(&l);
        assert!(l.ty.big >= 16.0, "{:?}", l.ty);
    }

    #[test]
    fn a_tiny_box_still_lays_every_card_out_apart() {
        let ns = nodes(&[
            "store", "store", "store", "worker", "worker", "resource", "sentinel", "sentinel", "sentinel",
        ]);
        let space = Space {
            width: 200.0,
            height: Some(120.0),
            min_text: 11.0,
        };
        let full = vec![true; ns.len()];
        let l = lay_out(
            &ns,
            arrange(&ns, &space, std::slice::from_ref(&full)),
            &space,
            &full,
        );
        assert_no_overlap(&l);
        assert!(l.ty.small >= 11.0);
    }
}
