//! What a space-time diagram shows, worked out once per trace from the trace alone (no
//! snapshots), so a trace loaded from a file is drawn the same way as one just simulated:
//! where each event sits on both time axes, which step sent each delivered message, and the
//! spans — faults, the lock as each holder believes it and as the authority records it, the
//! unsafe window — as ranges of steps.

use coordlab_sim::kernel::time::{format_time, MS_US};
use coordlab_sim::trace::{EventKind, Trace};
use coordlab_sim::{Fault, NodeId};

/// Below this gap, real time is drawn to scale.
pub const LINEAR_GAP_US: u64 = 10 * MS_US;
/// Pixels per millisecond while drawn to scale.
const PX_PER_MS: i64 = 3;
/// The least room between two events, even at the same instant: order stays visible.
const MIN_GAP_PX: i64 = 10;
/// Each doubling of a compressed gap adds this much room, so a longer quiet gap still looks
/// longer without taking the screen.
const PX_PER_DOUBLING: i64 = 6;
/// Room per event on the event-order axis.
pub const ORDER_COL_PX: i64 = 26;

/// A labelled range of steps on one lane (or across all, for `Unsafe`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub lane: usize,
    /// The step it began.
    pub start: usize,
    /// The step it ended; `None` while it lasts to the end of the trace.
    pub end: Option<usize>,
    pub kind: SpanKind,
    pub label: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    Paused,
    Crashed,
    /// A partition or a cut link cuts the lane off.
    CutOff,
    /// A held link keeps this lane's messages.
    Holding,
    Slowed,
    Drifting,
    /// The participant believes it holds the lock.
    Believes,
    /// The authority's record names the participant as holder.
    Granted,
}

/// A quiet gap drawn shorter than real time: the gap ends at step `entry`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Break {
    pub entry: usize,
    pub gap_us: u64,
}

/// The unsafe window: steps where the world warns (two holders).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    pub start: usize,
    pub end: Option<usize>,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagram {
    pub lanes: Vec<String>,
    /// Each step's position on the real-time axis, from 0.
    pub time_x: Vec<i64>,
    pub breaks: Vec<Break>,
    /// For each step that delivered (or failed to deliver) a message, the step that sent it.
    pub send_of: Vec<Option<usize>>,
    /// Whether the message delivered at each step was held by a fault on its way.
    pub held: Vec<bool>,
    pub spans: Vec<Span>,
    pub unsafe_bands: Vec<Band>,
}

impl Diagram {
    pub fn new(trace: &Trace) -> Diagram {
        let lanes = trace.nodes.iter().map(|n| n.name.clone()).collect();
        let (time_x, breaks) = time_positions(trace);
        let send_of = senders(trace);
        let mut spans = fault_spans(trace);
        spans.extend(holding_spans(trace));
        let held = held_messages(trace, &send_of);
        Diagram {
            lanes,
            time_x,
            breaks,
            send_of,
            held,
            spans,
            unsafe_bands: unsafe_bands(trace),
        }
    }

    pub fn len(&self) -> usize {
        self.time_x.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_x.is_empty()
    }
}

/// Room for a real-time gap: to scale while short, then growing by doublings.
pub fn gap_px(gap_us: u64) -> i64 {
    if gap_us <= LINEAR_GAP_US {
        return (gap_us as i64 * PX_PER_MS / MS_US as i64).max(MIN_GAP_PX);
    }
    let linear = LINEAR_GAP_US as i64 * PX_PER_MS / MS_US as i64;
    let doublings = i64::from((gap_us / LINEAR_GAP_US).ilog2()) + 1;
    linear + PX_PER_DOUBLING * doublings
}

fn time_positions(trace: &Trace) -> (Vec<i64>, Vec<Break>) {
    let mut xs = Vec::with_capacity(trace.entries.len());
    let mut breaks = Vec::new();
    let mut x = 0;
    let mut last_us = None;
    for (i, e) in trace.entries.iter().enumerate() {
        if let Some(prev) = last_us {
            let gap = e.time_us.saturating_sub(prev);
            x += gap_px(gap);
            if gap > LINEAR_GAP_US {
                breaks.push(Break {
                    entry: i,
                    gap_us: gap,
                });
            }
        }
        last_us = Some(e.time_us);
        xs.push(x);
    }
    (xs, breaks)
}

/// The step that sent each delivered message: the last step at or before its send time where
/// the sender acted (a message is sent by the step its sender took).
fn senders(trace: &Trace) -> Vec<Option<usize>> {
    let entries = &trace.entries;
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let m = e.message.as_ref()?;
            let upto = entries[..i].partition_point(|x| x.time_us <= m.sent_us);
            entries[..upto]
                .iter()
                .rposition(|x| x.nodes.first() == Some(&m.from))
                .or(upto.checked_sub(1))
        })
        .collect()
}

fn lane_of(trace: &Trace, node: NodeId) -> Option<usize> {
    (node.index() < trace.nodes.len()).then_some(node.index())
}

/// The first step after `from` that satisfies `ends`.
fn end_of(trace: &Trace, from: usize, ends: impl Fn(usize) -> bool) -> Option<usize> {
    (from + 1..trace.entries.len()).find(|i| ends(*i))
}

fn fault_at(trace: &Trace, i: usize) -> Option<&Fault> {
    trace.entries[i].fault.as_ref()
}

/// Seconds or milliseconds, whichever reads better: `36 s`, `400 ms`.
pub fn short_duration(ms: u64) -> String {
    if ms >= 10_000 && ms.is_multiple_of(1_000) {
        format!("{} s", ms / 1_000)
    } else if ms >= 1_000 {
        format!("{}.{} s", ms / 1_000, (ms % 1_000) / 100)
    } else {
        format!("{ms} ms")
    }
}

fn fault_spans(trace: &Trace) -> Vec<Span> {
    let mut spans = Vec::new();
    for (i, e) in trace.entries.iter().enumerate() {
        let Some(fault) = &e.fault else { continue };
        let mut push = |node: NodeId, end: Option<usize>, kind: SpanKind, label: String| {
            if let Some(lane) = lane_of(trace, node) {
                spans.push(Span {
                    lane,
                    start: i,
                    end,
                    kind,
                    label,
                });
            }
        };
        match fault {
            Fault::Pause { node, duration_ms } => {
                let end = end_of(trace, i, |j| {
                    let x = &trace.entries[j];
                    x.kind == EventKind::Resume && x.nodes.first() == Some(node)
                });
                push(
                    *node,
                    end,
                    SpanKind::Paused,
                    format!("paused {}", short_duration(*duration_ms)),
                );
            }
            Fault::Crash { node } => {
                let end = end_of(
                    trace,
                    i,
                    |j| matches!(fault_at(trace, j), Some(Fault::Restart { node: n }) if n == node),
                );
                push(*node, end, SpanKind::Crashed, "crashed".to_string());
            }
            Fault::Partition { side } => {
                let end = end_of(trace, i, |j| matches!(fault_at(trace, j), Some(Fault::Heal)));
                for node in side {
                    push(*node, end, SpanKind::CutOff, "partitioned".to_string());
                }
            }
            Fault::CutLink { from, to } => {
                let end = end_of(trace, i, |j| matches!(fault_at(trace, j), Some(Fault::Heal)));
                push(
                    *from,
                    end,
                    SpanKind::CutOff,
                    format!("link → {} cut", trace.node_name(*to)),
                );
            }
            Fault::HoldLink { from, to } => {
                let end = end_of(
                    trace,
                    i,
                    |j| matches!(fault_at(trace, j), Some(Fault::ReleaseLink { from: f, to: t }) if f == from && t == to),
                );
                push(
                    *from,
                    end,
                    SpanKind::Holding,
                    format!("held → {}", trace.node_name(*to)),
                );
            }
            Fault::SlowNode { node, extra_ms } if *extra_ms > 0 => {
                let end = end_of(
                    trace,
                    i,
                    |j| matches!(fault_at(trace, j), Some(Fault::SlowNode { node: n, .. }) if n == node),
                );
                push(
                    *node,
                    end,
                    SpanKind::Slowed,
                    format!("slowed +{}", short_duration(*extra_ms)),
                );
            }
            Fault::ClockDrift { node, drift_ppm } if *drift_ppm != 0 => {
                let end = end_of(
                    trace,
                    i,
                    |j| matches!(fault_at(trace, j), Some(Fault::ClockDrift { node: n, .. }) if n == node),
                );
                let sign = if *drift_ppm > 0 { "+" } else { "" };
                push(
                    *node,
                    end,
                    SpanKind::Drifting,
                    format!("clock {sign}{drift_ppm} ppm"),
                );
            }
            _ => {}
        }
    }
    spans
}

/// The lock as each participant believes it and as the authority records it, as runs of
/// consecutive steps.
fn holding_spans(trace: &Trace) -> Vec<Span> {
    let lanes = trace.nodes.len();
    // Per lane: where the current run of each flag began.
    let mut open: Vec<[Option<usize>; 2]> = vec![[None, None]; lanes];
    let mut spans = Vec::new();
    let kinds = [SpanKind::Believes, SpanKind::Granted];
    for (i, e) in trace.entries.iter().enumerate() {
        for (lane, runs) in open.iter_mut().enumerate() {
            let h = e.holdings.iter().find(|h| h.node.index() == lane);
            let now = [h.is_some_and(|h| h.believes), h.is_some_and(|h| h.granted)];
            for k in 0..2 {
                match (runs[k], now[k]) {
                    (None, true) => runs[k] = Some(i),
                    (Some(start), false) => {
                        spans.push(holding_span(lane, start, Some(i), kinds[k]));
                        runs[k] = None;
                    }
                    _ => {}
                }
            }
        }
    }
    for (lane, runs) in open.iter().enumerate() {
        for k in 0..2 {
            if let Some(start) = runs[k] {
                spans.push(holding_span(lane, start, None, kinds[k]));
            }
        }
    }
    spans
}

fn holding_span(lane: usize, start: usize, end: Option<usize>, kind: SpanKind) -> Span {
    let label = match kind {
        SpanKind::Believes => "believes it holds the lock",
        _ => "the store's record: holder",
    };
    Span {
        lane,
        start,
        end,
        kind,
        label: label.to_string(),
    }
}

fn unsafe_bands(trace: &Trace) -> Vec<Band> {
    let mut bands: Vec<Band> = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, e) in trace.entries.iter().enumerate() {
        match (&open, &e.highlight) {
            (None, Some(text)) => open = Some((i, text.clone())),
            (Some(_), None) => {
                if let Some((start, text)) = open.take() {
                    bands.push(Band {
                        start,
                        end: Some(i),
                        text,
                    });
                }
            }
            _ => {}
        }
    }
    if let Some((start, text)) = open {
        bands.push(Band {
            start,
            end: None,
            text,
        });
    }
    bands
}

/// Whether each delivered message waited on a held link or was held itself on its way.
fn held_messages(trace: &Trace, send_of: &[Option<usize>]) -> Vec<bool> {
    let any_hold = trace
        .entries
        .iter()
        .any(|e| matches!(e.fault, Some(Fault::HoldMessage { .. } | Fault::HoldLink { .. })));
    if !any_hold {
        return vec![false; trace.entries.len()];
    }
    trace
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (Some(m), Some(sent)) = (&e.message, send_of[i]) else {
                return false;
            };
            trace.entries[sent..i].iter().any(|x| match &x.fault {
                Some(Fault::HoldMessage { msg }) => *msg == m.id,
                Some(Fault::HoldLink { from, to }) => *from == m.from && *to == m.to,
                _ => false,
            }) || trace.entries[..sent].iter().rev().find_map(|x| match &x.fault {
                Some(Fault::HoldLink { from, to }) if *from == m.from && *to == m.to => Some(true),
                Some(Fault::ReleaseLink { from, to }) if *from == m.from && *to == m.to => Some(false),
                _ => None,
            }) == Some(true)
        })
        .collect()
}

/// A time for an axis label.
pub fn time_label(time_us: u64) -> String {
    format_time(time_us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_to_scale_when_short_and_grow_with_doublings_when_long() {
        assert_eq!(gap_px(0), MIN_GAP_PX);
        assert_eq!(gap_px(5 * MS_US), 15);
        assert_eq!(gap_px(10 * MS_US), 30);
        assert!(gap_px(11 * MS_US) > gap_px(10 * MS_US));
        assert!(gap_px(5_000 * MS_US) < gap_px(36_000 * MS_US));
        assert!(
            gap_px(36_000 * MS_US) < 120,
            "a 36 s gap takes a small part of the screen"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(short_duration(36_000), "36 s");
        assert_eq!(short_duration(1_500), "1.5 s");
        assert_eq!(short_duration(400), "400 ms");
    }
}
