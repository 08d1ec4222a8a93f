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
            let shown = visible(&t, &d, cursor, options);
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

/// A presenter's diagram's box at 853×480 (a 1280×720 projector at 150%) beside the story,
/// and above it with a question under the picture (the story's band at its tallest); at
/// 1280×720 beside the story and above it.
const SMALL_PROJECTOR: Fit = Fit {
    width: 500,
    height: 400,
    text_px: 18,
};
const SMALL_PROJECTOR_BAND: Fit = Fit {
    width: 830,
    height: 264,
    text_px: 18,
};
/// Eight lanes under the story's band at its tallest (lease-stampede's question): the title
/// goes beside the markers.
const SMALL_PROJECTOR_QUESTION: Fit = Fit {
    width: 830,
    height: 227,
    text_px: 18,
};
const LARGE_PROJECTOR: Fit = Fit {
    width: 760,
    height: 620,
    text_px: 24,
};
const LARGE_PROJECTOR_BAND: Fit = Fit {
    width: 1258,
    height: 480,
    text_px: 24,
};
/// The player's diagram beside the story at 1280×720, in the page's type.
const PLAYER: Fit = Fit {
    width: 868,
    height: 352,
    text_px: 17,
};

fn fitted(fit: Fit) -> Options {
    Options {
        axis: Axis::Time,
        window: Window::Fit(fit),
    }
}

/// Every `<tag …>` start tag of `svg` with the given class.
fn tags_with_class<'a>(svg: &'a str, tag: &str, class: &str) -> Vec<&'a str> {
    svg.match_indices(&format!("<{tag} class=\"{class}\""))
        .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()])
        .collect()
}

/// The value of `name` in a start tag, as a number.
fn attr(tag: &str, name: &str) -> i64 {
    let at = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {tag}"));
    let rest = &tag[at + name.len() + 3..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

/// The text of the current beat's title: its lines joined with spaces.
fn current_title(svg: &str) -> Option<String> {
    let at = svg.find("<text class=\"st-beat-title\"")?;
    let end = at + svg[at..].find("</text>").unwrap();
    let lines: Vec<&str> = svg[at..end]
        .split("<tspan")
        .skip(1)
        .map(|t| {
            let t = &t[t.find('>').unwrap() + 1..];
            &t[..t.find("</tspan>").unwrap()]
        })
        .collect();
    Some(lines.join(" ").replace("&#39;", "'").replace("&amp;", "&"))
}

#[test]
fn a_fitted_picture_is_drawn_for_its_box_with_large_text_at_every_beat() {
    for info in coordlab_sim::scenarios::catalog() {
        let t = trace(info.id, &[], "");
        let d = Diagram::new(&t);
        for fit in [
            SMALL_PROJECTOR,
            SMALL_PROJECTOR_BAND,
            SMALL_PROJECTOR_QUESTION,
            LARGE_PROJECTOR,
            LARGE_PROJECTOR_BAND,
            PLAYER,
        ] {
            // The one nine-lane run, redis-failover, keeps 264 px under its tallest band.
            if fit == SMALL_PROJECTOR_QUESTION && t.nodes.len() > 8 {
                continue;
            }
            let big = fit.text_px;
            for (number, (seq, beat)) in t.reached_beats().enumerate() {
                let cursor = seq as usize;
                let svg = super::svg(&t, &d, cursor, fitted(fit));
                let at = format!("{} at beat {} ({big} px)", info.id, number + 1);
                assert_well_formed(&svg);
                assert!(
                    svg.contains(&format!(
                        "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\"",
                        fit.width, fit.height, fit.width, fit.height
                    )),
                    "{at}: one unit a pixel"
                );
                // Every text at least 13 px; lane names and the title at the large size.
                for (i, _) in svg.match_indices("<text ") {
                    let tag = &svg[i..i + svg[i..].find('>').unwrap()];
                    let size = attr(tag, "font-size");
                    assert!(size >= 13, "{at}: {size} px in {tag}");
                }
                let names = svg
                    .matches(&format!(
                        "text-anchor=\"end\" font-weight=\"700\" font-size=\"{big}\""
                    ))
                    .count();
                assert_eq!(names, t.nodes.len(), "{at}: a large name for each lane");
                // The current beat's title whole, whichever beat shares its step.
                let (_, now) = current_beat(&t, cursor).expect("a beat is reached");
                assert_eq!(now, cursor);
                let title = current_title(&svg).expect("the title is written");
                let expected = &t.beats[current_beat(&t, cursor).unwrap().0 - 1].title;
                assert_eq!(&title, expected, "{at}");
                if beat.title == *expected {
                    assert!(!title.contains('…'));
                }
                // Its lines fit across the box.
                let f = frame(&t, &d, cursor, fitted(fit));
                let fitted = f.fitted.as_ref().unwrap();
                let text_x = fitted.pad * 2 + 2 * fitted.badge_r;
                for line in fit::wrap(expected, big, f.width - text_x - fitted.pad) {
                    assert!(text_x + fit::text_px(&line, big) <= f.width, "{at}: {line}");
                }
                // Markers apart, in the box, and below the title.
                let markers = tags_with_class(&svg, "circle", "st-beat-marker");
                assert!(!markers.is_empty(), "{at}: the current beat's marker");
                let xs: Vec<i64> = markers.iter().map(|m| attr(m, "cx")).collect();
                let r = attr(markers[0], "r");
                assert!(xs.windows(2).all(|w| w[1] - w[0] >= 2 * r + 6), "{at}: {xs:?}");
                assert!(xs.iter().all(|x| *x - r >= 0 && *x + r <= fit.width));
                match fitted.title {
                    Title::Above => {
                        let lines = fit::wrap(expected, big, f.width - text_x - fitted.pad).len();
                        let bottom = fitted.title_y + fitted.line_h * (lines as i64 - 1);
                        assert!(
                            bottom + big / 4 <= fitted.markers_y - r - 3,
                            "{at}: the title clears the markers"
                        );
                    }
                    Title::Beside => {
                        let end = text_x + fit::text_px(expected, big);
                        assert!(
                            xs.iter().all(|x| x - r - 3 > end),
                            "{at}: the markers keep right of the title"
                        );
                        assert!(end <= f.width - fitted.pad, "{at}: the title in the box");
                    }
                    Title::Off => panic!("{at}: the title is left out"),
                }
                // The beat is in the plot with what led to it before it (a fifth of the plot,
                // or the run from its start), and the axis and its chip in the box.
                let (x, plot_w) = (f.x(cursor), f.plot_right() - f.plot_x0);
                let context = (plot_w / 5).min(f.pos(cursor));
                assert!(x >= f.plot_x0 + context && x <= f.plot_right(), "{at}: x {x}");
                if t.nodes.len() <= 9 {
                    assert!(
                        f.lanes_bottom() + f.label_px + 15 <= fit.height,
                        "{at}: lanes and axis fit the box"
                    );
                }
            }
        }
    }
}

#[test]
fn a_fitted_picture_turns_by_pages_and_always_shows_the_cursor() {
    let t = trace("raft-election", &[], "");
    let d = Diagram::new(&t);
    let mut starts = Vec::new();
    for cursor in 0..d.len() {
        let f = frame(&t, &d, cursor, fitted(SMALL_PROJECTOR));
        let x = f.x(cursor);
        assert!(x >= f.plot_x0 && x <= f.plot_right(), "step {cursor} at {x}");
        if starts.last() != Some(&f.x_start) {
            starts.push(f.x_start);
        }
        // Only what is in view is drawn: a step draws a page, not the run.
        let shown = visible(&t, &d, cursor, fitted(SMALL_PROJECTOR));
        assert!(shown.len() < 120, "step {cursor}: {} steps", shown.len());
    }
    assert!(
        starts.len() * 4 < d.len(),
        "{} moves in {} steps",
        starts.len(),
        d.len()
    );
}

#[test]
fn before_the_first_beat_a_fitted_picture_has_no_title_and_keeps_its_layout() {
    let t = trace("zombie-worker", &[], "");
    let d = Diagram::new(&t);
    let first = t.reached_beats().next().unwrap().0 as usize;
    let before = super::svg(&t, &d, first - 1, fitted(SMALL_PROJECTOR));
    assert!(current_title(&before).is_none());
    let (a, b) = (
        frame(&t, &d, first - 1, fitted(SMALL_PROJECTOR)),
        frame(&t, &d, first, fitted(SMALL_PROJECTOR)),
    );
    assert_eq!((a.top, a.lane_h, a.plot_x0), (b.top, b.lane_h, b.plot_x0));
}

#[test]
fn the_followed_and_whole_pictures_are_unchanged_by_fitting() {
    // The CLI's export: no fitted parts, the beat titles on their two rows.
    let t = trace("zombie-worker", &[], "");
    let d = Diagram::new(&t);
    for window in [Window::Follow, Window::All] {
        let svg = super::svg(
            &t,
            &d,
            40,
            Options {
                axis: Axis::Time,
                window,
            },
        );
        assert!(!svg.contains("st-beat"));
        assert!(svg.contains(&format!("viewBox=\"0 0 {WIDTH} ")) || window == Window::All);
    }
}

#[test]
fn in_a_short_box_the_text_shrinks_until_every_lane_fits_but_never_below_13_px() {
    // Under the topology in presenter mode: half a small projector's height.
    let short = Fit {
        width: 490,
        height: 150,
        text_px: 18,
    };
    for (id, fits) in [
        ("zombie-worker", true),
        ("redis-failover", false),
        ("raft-figure-8", false),
    ] {
        let t = trace(id, &[], "");
        let d = Diagram::new(&t);
        let cursor = t.reached_beats().last().unwrap().0 as usize;
        let f = frame(&t, &d, cursor, fitted(short));
        assert!(f.name_px >= 13 && f.name_px <= 18, "{id}: {}", f.name_px);
        if fits {
            assert_eq!(f.height, short.height, "{id}: the box's height");
            assert!(f.lanes_bottom() + f.label_px + 15 <= short.height, "{id}");
        } else {
            // Eight or nine lanes cannot share 150 px at 13 px, even without the title's row:
            // the picture is taller, and scrolls.
            assert_eq!(f.name_px, 13, "{id}");
            assert!(
                f.fitted.as_ref().unwrap().title == Title::Off,
                "{id}: the lanes take the title's row"
            );
            assert!(f.height > short.height, "{id}");
            assert!(f.lanes_bottom() + f.label_px + 15 <= f.height, "{id}");
        }
        let svg = super::svg(&t, &d, cursor, fitted(short));
        assert!(svg.contains(&format!("viewBox=\"0 0 490 {}\"", f.height)));
        for (i, _) in svg.match_indices("<text ") {
            let tag = &svg[i..i + svg[i..].find('>').unwrap()];
            assert!(attr(tag, "font-size") >= 13, "{id}: {tag}");
        }
    }
    // With room, the text is as large as asked, with the title.
    let t = trace("redis-failover", &[], "");
    let d = Diagram::new(&t);
    let f = frame(&t, &d, 100, fitted(SMALL_PROJECTOR));
    assert_eq!(f.name_px, 18);
    assert_eq!(f.fitted.as_ref().unwrap().title, Title::Above);
}

#[test]
#[ignore = "a timing, not a check: cargo test -p coordlab-render --release -- --ignored --nocapture"]
fn time_a_fitted_step() {
    for id in ["consensus-lock", "redis-failover", "raft-chaos"] {
        let t = trace(id, &[], "");
        let d = Diagram::new(&t);
        let start = std::time::Instant::now();
        let mut bytes = 0;
        for cursor in 0..d.len() {
            bytes += super::svg(&t, &d, cursor, fitted(SMALL_PROJECTOR_BAND)).len();
        }
        let per = start.elapsed() / d.len() as u32;
        println!("{id}: {per:?} a step, {} bytes", bytes / d.len());
    }
}
