//! Where a message's dot and its label go: the dot in the gap between its two cards, the label
//! beside the dot where it covers no card and no earlier label.

use super::layout::{Bounds, Layout};
use super::text;
use crate::markup::px;

/// A label's offset from its point. The text's end at that point (`text-anchor`) follows the
/// side: text to the right starts there, text to the left ends there, else it is centred.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelPlace {
    pub dx: i64,
    pub dy: i64,
}

/// Where a label can go beside its point, in units of its font size (×10) as (dx, dy), in the
/// order tried: above, below, right, left, then the same a little further off.
const PLACES: [(i8, i8); 8] = [
    (0, -9),
    (0, 18),
    (9, 4),
    (-9, 4),
    (0, -20),
    (0, 29),
    (9, -9),
    (-9, -9),
];

impl LabelPlace {
    fn at(size: f64, (dx, dy): (i8, i8)) -> LabelPlace {
        LabelPlace {
            dx: px(f64::from(dx) * size / 10.0),
            dy: px(f64::from(dy) * size / 10.0),
        }
    }

    /// The SVG `text-anchor` for this place.
    pub fn anchor(&self) -> &'static str {
        match self.dx.signum() {
            1 => "start",
            -1 => "end",
            _ => "middle",
        }
    }

    /// The box `label` at `size` px covers when placed here beside `(x, y)`.
    pub fn bounds(&self, (x, y): (f64, f64), label: &str, size: f64) -> Bounds {
        let w = text::width(label, size, true);
        let bx = x + self.dx as f64;
        let (l, r) = match self.dx.signum() {
            1 => (bx, bx + w),
            -1 => (bx - w, bx),
            _ => (bx - w / 2.0, bx + w / 2.0),
        };
        let base = y + self.dy as f64;
        // Room above the baseline for capitals and below for descenders (and for glyphs from
        // a fallback font: ₹ is drawn taller and deeper than the Latin text around it).
        (l, base - size * 0.95, r, base + size * 0.45)
    }
}

/// How much of `a` lies on `b`, as an area.
pub fn overlap(a: Bounds, b: Bounds) -> f64 {
    let ox = (a.2.min(b.2) - a.0.max(b.0)).max(0.0);
    let oy = (a.3.min(b.3) - a.1.max(b.1)).max(0.0);
    ox * oy
}

/// Where `label` at `size` goes beside the point `p`: the first of the places that covers
/// none of `obstacles` and stays inside `view`, or `None` when every one would cover one.
#[inline(never)]
pub fn place(
    obstacles: &[Bounds],
    view: Bounds,
    p: (f64, f64),
    label: &str,
    size: f64,
) -> Option<LabelPlace> {
    PLACES.into_iter().map(|d| LabelPlace::at(size, d)).find(|place| {
        let b = place.bounds(p, label, size);
        obstacles.iter().all(|&c| overlap(b, c) == 0.0)
            && b.0 >= view.0
            && b.1 >= view.1
            && b.2 <= view.2
            && b.3 <= view.3
    })
}

/// The card boxes with the air a message's dot keeps from a card.
pub fn with_air(boxes: &[Bounds]) -> Vec<Bounds> {
    boxes
        .iter()
        .map(|c| (c.0 - 10.0, c.1 - 10.0, c.2 + 10.0, c.3 + 10.0))
        .collect()
}

/// A point on the part of the line from card `a` to card `b` that lies between the two cards,
/// `f` of the way from `a` (0) to `b` (1), on the line shifted sideways so the two directions
/// of a link do not overlap: a message's dot is drawn in the gap, clear of both cards, and
/// steps round any card in its way. Rounded to whole units, as drawn.
#[inline(never)]
pub fn between_cards(lay: &Layout, air: &[Bounds], a: usize, b: usize, f: f64) -> (f64, f64) {
    let (pa, pb) = (lay.centre(a), lay.centre(b));
    let (dx, dy) = (pb.0 - pa.0, pb.1 - pa.1);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let unit = (-dy / len, dx / len);
    let (sa, sb) = (
        (pa.0 + unit.0 * 12.0, pa.1 + unit.1 * 12.0),
        (pb.0 + unit.0 * 12.0, pb.1 + unit.1 * 12.0),
    );
    // The fraction of the way from `from` to `to` at which the line leaves `bx`; `from` lies
    // inside it.
    let exit = |bx: Bounds, from: (f64, f64), to: (f64, f64)| {
        let leave = |e: f64, low: f64, high: f64, at: f64| {
            if e.abs() > 1e-9 {
                ((if e > 0.0 { high } else { low }) - at) / e
            } else {
                f64::MAX
            }
        };
        let tx = leave(to.0 - from.0, bx.0, bx.2, from.0);
        let ty = leave(to.1 - from.1, bx.1, bx.3, from.1);
        tx.min(ty).max(0.0)
    };
    let start = exit(air[a], sa, sb);
    let end = 1.0 - exit(air[b], sb, sa);
    let mut p = if end - start < 0.02 {
        let t = 0.3 + 0.4 * f.clamp(0.0, 1.0);
        (sa.0 + (sb.0 - sa.0) * t, sa.1 + (sb.1 - sa.1) * t)
    } else {
        let t = start + (end - start) * f.clamp(0.0, 1.0);
        (sa.0 + (sb.0 - sa.0) * t, sa.1 + (sb.1 - sa.1) * t)
    };
    // A card standing on the way, or neighbours with no gap between them: the dot steps
    // sideways off the line to the nearest clear spot.
    let clear = |q: (f64, f64)| {
        air.iter()
            .all(|c| !(q.0 > c.0 && q.0 < c.2 && q.1 > c.1 && q.1 < c.3))
    };
    if !clear(p) {
        let sidestep = (1..=60)
            .flat_map(|k| [k as f64 * 4.0, -(k as f64) * 4.0])
            .map(|d| (p.0 + unit.0 * d, p.1 + unit.1 * d))
            .find(|&q| clear(q));
        if let Some(q) = sidestep {
            p = q;
        }
    }
    (px(p.0) as f64, px(p.1) as f64)
}
