use super::*;
use coordlab_sim::kernel::faults::parse_script;
use coordlab_sim::scenarios::Params;
use coordlab_sim::{run, Limits, Recording, RunRequest};

fn trace(scenario: &str, sets: &[(&str, &str)], actions: &str) -> Trace {
    let mut params = Params::new();
    for (k, v) in sets {
        params.insert(k.to_string(), v.to_string());
    }
    let request = RunRequest {
        scenario: scenario.to_string(),
        params,
        seed: 1,
        actions: parse_script(actions).expect("a valid script"),
    };
    run(&request, Limits::default(), Recording::Lines).expect("a valid request")
}

/// Checks the text is well-formed XML as far as SVG text written by this crate goes: every
/// element closed in order, attribute values quoted, no stray `<` or `&`.
fn assert_well_formed(svg: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        assert!(!text.contains('>'), "stray > in text {text:?}");
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..text[i..].find(';').map(|e| i + e + 1).unwrap_or(text.len())];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].contains(&entity),
                "bad entity {entity:?}"
            );
        }
        let close = rest[open..].find('>').expect("an unclosed tag") + open;
        let tag = &rest[open + 1..close];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "closing tag out of order");
        } else {
            let name = tag.split([' ', '/']).next().unwrap_or("").to_string();
            assert!(!name.is_empty(), "empty tag");
            assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in <{tag}>");
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        rest = &rest[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
}

fn lane_labels(svg: &str) -> usize {
    svg.matches("text-anchor=\"end\" font-weight=\"700\" font-size=\"16\"")
        .count()
}

#[test]
fn the_zombie_worker_is_drawn_with_a_lane_each_and_its_pause_labelled() {
    let t = trace("zombie-worker", &[], "");
    let d = Diagram::new(&t);
    let last = t.entries.len() - 1;
    let svg = super::svg(
        &t,
        &d,
        last,
        Options {
            axis: Axis::Time,
            window: Window::All,
        },
    );
    assert_well_formed(&svg);
    assert_eq!(lane_labels(&svg), t.nodes.len());
    for node in &t.nodes {
        assert!(
            svg.contains(&format!(">{}</text>", node.name)),
            "no lane for {}",
            node.name
        );
    }
    assert!(svg.contains(">paused 36 s</text>"), "the pause is labelled");
    assert!(svg.contains("⚠ unsafe window"), "the unsafe window is drawn");
    assert!(svg.contains("✕ violated"), "the violation is marked");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
}

#[test]
fn the_pause_span_runs_from_the_fault_to_the_resume() {
    let t = trace("zombie-worker", &[], "");
    let d = Diagram::new(&t);
    let pause = d
        .spans
        .iter()
        .find(|s| s.kind == SpanKind::Paused)
        .expect("a pause");
    assert_eq!(t.entries[pause.start].kind, EventKind::Fault);
    let end = pause.end.expect("the pause ends");
    assert_eq!(t.entries[end].kind, EventKind::Resume);
    assert_eq!(
        t.entries[end].time_us - t.entries[pause.start].time_us,
        36_000_000
    );
    assert_eq!(d.lanes[pause.lane], "worker-A");
}

#[test]
fn the_zombie_still_believes_after_the_store_granted_the_lease_to_another() {
    let t = trace("zombie-worker", &[], "");
    let d = Diagram::new(&t);
    let lane = |name: &str| d.lanes.iter().position(|l| l == name).unwrap();
    let (a, b) = (lane("worker-A"), lane("worker-B"));
    let span = |lane: usize, kind: SpanKind| {
        d.spans
            .iter()
            .filter(|s| s.lane == lane && s.kind == kind)
            .cloned()
            .collect::<Vec<_>>()
    };
    let b_granted = span(b, SpanKind::Granted);
    let first_b = b_granted.first().expect("B is granted the lease").start;
    assert!(
        span(a, SpanKind::Believes)
            .iter()
            .any(|s| s.start < first_b && s.end.is_none_or(|e| e > first_b)),
        "A's belief outlives the store's record"
    );
    assert!(
        span(a, SpanKind::Granted)
            .iter()
            .all(|s| s.end.is_some_and(|e| e <= first_b)),
        "the store's record of A ends by the time B is granted"
    );
}

#[test]
fn a_followed_picture_draws_only_up_to_the_cursor_and_keeps_its_width() {
    let t = trace("raft-chaos", &[], "");
    let d = Diagram::new(&t);
    assert!(d.len() > 1_000, "a long run: {}", d.len());
    for axis in [Axis::Time, Axis::Order] {
        let options = Options {
            axis,
            window: Window::Follow,
        };
        for cursor in [0, 10, 700, d.len() - 1] {
            let svg = super::svg(&t, &d, cursor, options);
            assert_well_formed(&svg);
            assert!(svg.contains(&format!("width=\"{WIDTH}\"")));
            let shown = visible(&d, cursor, options);
            assert_eq!(shown.end, cursor + 1);
            assert!(
                shown.len() < 200,
                "{axis:?} at {cursor}: {} steps drawn",
                shown.len()
            );
            let drawn: Vec<usize> = svg
                .match_indices("data-seq=\"")
                .map(|(i, _)| {
                    let rest = &svg[i + 10..];
                    rest[..rest.find('"').unwrap()].parse().unwrap()
                })
                .collect();
            assert!(
                drawn.iter().all(|s| *s <= cursor),
                "nothing after the cursor is drawn"
            );
            assert!(drawn.contains(&cursor), "the cursor's own event is drawn");
        }
    }
}

#[test]
fn the_same_run_and_step_give_the_same_text() {
    let a = trace("redis-failover", &[], "");
    let b = trace("redis-failover", &[], "");
    let options = Options {
        axis: Axis::Time,
        window: Window::Follow,
    };
    assert_eq!(
        super::svg(&a, &Diagram::new(&a), 40, options),
        super::svg(&b, &Diagram::new(&b), 40, options)
    );
}

#[test]
fn order_never_changes_on_the_time_axis() {
    let t = trace("raft-figure-8", &[], "");
    let d = Diagram::new(&t);
    assert!(
        d.time_x.windows(2).all(|w| w[0] < w[1]),
        "every step is right of the one before"
    );
}

#[test]
fn a_message_lost_to_a_partition_ends_in_a_cross() {
    let t = trace("redis-failover", &[], "");
    let d = Diagram::new(&t);
    let lost = t
        .entries
        .iter()
        .position(|e| !e.lost.is_empty() || e.kind == EventKind::Undeliverable);
    if let Some(i) = lost {
        let svg = super::svg(&t, &d, i, Options::default());
        assert!(svg.contains("l10 10m0 -10l-10 10"), "a cross is drawn");
    } else {
        // The scripted run loses nothing: cut a link so something is lost.
        let t = trace("zombie-worker", &[], "3@cut:1:0");
        let d = Diagram::new(&t);
        let i = t
            .entries
            .iter()
            .position(|e| !e.lost.is_empty())
            .expect("a lost message");
        assert!(super::svg(&t, &d, i, Options::default()).contains("l10 10m0 -10l-10 10"));
    }
}

#[test]
fn names_from_a_trace_are_escaped() {
    let mut t = trace("zombie-worker", &[], "");
    t.nodes[1].name = "<script>&".to_string();
    let d = Diagram::new(&t);
    let svg = super::svg(&t, &d, 10, Options::default());
    assert_well_formed(&svg);
    assert!(svg.contains("&lt;script&gt;&amp;"));
}

#[test]
fn an_empty_trace_says_so() {
    let mut t = trace("zombie-worker", &[], "");
    t.entries.clear();
    let d = Diagram::new(&t);
    let svg = super::svg(&t, &d, 0, Options::default());
    assert_well_formed(&svg);
    assert!(svg.contains("no events"));
}

#[test]
fn labels_of_spans_that_overlap_on_one_lane_do_not_overlap() {
    // S1 of Figure 8 is cut off and then crashed within the same stretch of the run.
    let t = trace("raft-figure-8", &[], "");
    let d = Diagram::new(&t);
    let lane = d.lanes.iter().position(|l| l == "S1").unwrap();
    let overlapping = d.spans.iter().filter(|s| s.lane == lane).count();
    assert!(overlapping >= 2, "S1 has more than one span");
    let svg = super::svg(
        &t,
        &d,
        t.entries.len() - 1,
        Options {
            axis: Axis::Order,
            window: Window::All,
        },
    );
    let h = lane_height(d.lanes.len());
    let y = format!("y=\"{}\"", TOP + h * lane as i64 + h / 2 + 5);
    let mut xs: Vec<i64> = svg
        .match_indices("<text x=\"")
        .filter_map(|(i, _)| {
            let tag = &svg[i..i + svg[i..].find('>').unwrap()];
            tag.contains(&y)
                .then(|| tag[9..].split('"').next().unwrap().parse().unwrap())
        })
        .collect();
    xs.sort();
    assert!(xs.len() >= 2, "{xs:?}");
    assert!(xs.windows(2).all(|w| w[1] - w[0] >= 40), "labels apart: {xs:?}");
}
