use super::labels::overlap;
use super::*;

fn full_trace(scenario: &str) -> Trace {
    let request = coordlab_sim::RunRequest {
        scenario: scenario.to_string(),
        params: coordlab_sim::scenarios::Params::new(),
        seed: 1,
        actions: Vec::new(),
    };
    coordlab_sim::run(
        &request,
        coordlab_sim::Limits::default(),
        coordlab_sim::Recording::Full,
    )
    .expect("a library scenario runs")
}

/// The picture's box in presenter mode on a projector at 150% (853×480): the width less the
/// page's padding, the height less the caption band and the transport.
const PROJECTOR: Space = Space {
    width: 836.0,
    height: Some(300.0),
    min_text: 12.0,
};

/// The browser replaces only the pieces whose text changed, so a step must leave most of
/// them alone: the links change only when the focus moves cards, and a Raft step redraws the
/// cards it touched and the timers, not every card.
#[test]
fn a_step_changes_few_pieces_of_the_picture() {
    for scenario in ["raft-election", "zombie-worker", "consensus-lock"] {
        let t = full_trace(scenario);
        let frame = Frame::new(&t, Space::STANDARD);
        let parts = |i: usize| {
            let snap = t.entries[i].snapshot.clone().expect("a full recording");
            let lay = frame.layout_at(&t, i);
            frame.parts(&t, i, &snap, &lay, false).expect("a step of the run")
        };
        let cards = t.nodes.len();
        let (mut changed_cards, mut steps) = (0, 0);
        let mut before = parts(0);
        for i in 1..t.entries.len() {
            let now = parts(i);
            assert_eq!(now.pieces.len(), before.pieces.len(), "{scenario} step {i}");
            let card_pieces = 3..3 + cards;
            changed_cards += card_pieces.filter(|&k| now.pieces[k] != before.pieces[k]).count();
            steps += 1;
            let snap = t.entries[i].snapshot.clone().unwrap();
            let options = TopologyOptions {
                messages: false,
                space: Space::STANDARD,
            };
            assert_eq!(now.join(), svg(&t, i, &snap, options));
            before = now;
        }
        assert!(
            changed_cards <= steps * 3,
            "{scenario}: {changed_cards} card redraws in {steps} steps of {cards} cards"
        );
        assert!(steps > 10, "{scenario}: a run of {steps} steps");
    }
}

/// The font sizes a drawing writes, by the class of the text.
fn sizes_in(markup: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for chunk in markup.split("<text").skip(1) {
        let attr = |name: &str| {
            chunk
                .split(&format!(" {name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .map(str::to_string)
        };
        if let Some(size) = attr("font-size").and_then(|v| v.parse::<f64>().ok()) {
            out.push((attr("class").unwrap_or_default(), size));
        }
    }
    out
}

/// At a projector's zoom in presenter mode every card sits inside the picture, apart from the
/// others, its text at 12 px or more, and at every beat the cards in focus have their name,
/// state word and figures at 18 px or more.
#[test]
fn every_scenario_reads_from_the_back_row_at_every_beat() {
    let mut bad = Vec::new();
    for info in coordlab_sim::scenarios::catalog() {
        let t = full_trace(info.id);
        let frame = Frame::new(&t, PROJECTOR);
        for (seq, beat) in t.reached_beats() {
            let i = seq as usize;
            let lay = frame.layout_at(&t, i);
            for (k, a) in lay.boxes.iter().enumerate() {
                if a.0 < 0.0 || a.1 < 0.0 || a.2 > lay.width + 0.5 || a.3 > lay.height + 0.5 {
                    bad.push(format!(
                        "{}: {} leaves the picture at “{}”",
                        info.id, t.nodes[k].name, beat.title
                    ));
                }
                for (j, b) in lay.boxes.iter().enumerate().skip(k + 1) {
                    if overlap(*a, *b) > 0.0 {
                        bad.push(format!(
                            "{}: {} over {}",
                            info.id, t.nodes[k].name, t.nodes[j].name
                        ));
                    }
                }
            }
            let snap = t.entries[i].snapshot.clone().unwrap();
            let parts = frame.parts(&t, i, &snap, &lay, true).unwrap();
            for (k, piece) in parts.pieces.iter().enumerate() {
                for (class, size) in sizes_in(piece) {
                    if size < 12.0 {
                        bad.push(format!("{} “{}”: {class} at {size} px", info.id, beat.title));
                    }
                    let card_piece = (3..3 + t.nodes.len()).contains(&k);
                    let focus = card_piece && lay.full[k - 3];
                    if focus
                        && matches!(class.as_str(), "node-name" | "node-word" | "badge-value")
                        && size < 18.0
                    {
                        bad.push(format!(
                            "{} “{}”: {} {class} at {size} px",
                            info.id,
                            beat.title,
                            t.nodes[k - 3].name
                        ));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} problems:\n{}", bad.len(), bad.join("\n"));
}

/// A room must read every label: no message's dot or label on a card and no label on
/// another, at any step of any scenario's default run.
#[test]
fn no_message_or_label_covers_a_card() {
    let (mut checked, mut bad) = (0, Vec::new());
    for info in coordlab_sim::scenarios::catalog() {
        let t = full_trace(info.id);
        let frame = Frame::new(&t, PROJECTOR);
        for (i, e) in t.entries.iter().enumerate() {
            let snap = e.snapshot.clone().expect("a full recording");
            let lay = frame.layout_at(&t, i);
            let marks = frame.messages(&t, &snap, &lay);
            let boxes: Vec<Bounds> = marks
                .iter()
                .filter_map(|m| {
                    m.label
                        .map(|l| l.bounds((m.x as f64, m.y as f64), &m.text, m.size as f64))
                })
                .collect();
            for (k, a) in boxes.iter().enumerate() {
                if boxes[k + 1..].iter().any(|b| overlap(*a, *b) > 0.0) {
                    bad.push(format!("{} step {i}: two labels overlap", info.id));
                }
            }
            for m in marks {
                let (x, y) = (m.x as f64, m.y as f64);
                let dot = (x - 7.0, y - 7.0, x + 7.0, y + 7.0);
                let label = m
                    .label
                    .map_or((x, y, x, y), |l| l.bounds((x, y), &m.text, m.size as f64));
                for (k, c) in lay.boxes.iter().enumerate() {
                    if overlap(label, *c) > 0.0 || (overlap(dot, *c) > 0.0 && lay.full[k]) {
                        bad.push(format!(
                            "{} step {i}: message “{}” at {x},{y} ({:?}) covers {}",
                            info.id, m.text, m.label, t.nodes[k].name
                        ));
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} messages drawn");
    assert!(
        bad.len() * 50 < checked,
        "{} of {checked}:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_focus_is_the_beats_participants_and_stays_between_beats() {
    let t = full_trace("zombie-worker");
    assert!(
        focus_at(&t, 0).iter().all(|f| !f),
        "nothing in focus before the first beat"
    );
    let (seq, _) = t.reached_beats().next().unwrap();
    let at_beat = focus_at(&t, seq as usize);
    assert!(at_beat.iter().any(|f| *f));
    let next = t
        .reached_beats()
        .nth(1)
        .map_or(t.entries.len(), |(s, _)| s as usize);
    for i in seq as usize..next {
        assert_eq!(focus_at(&t, i), at_beat, "step {i}");
    }
}

#[test]
fn ring_positions_match_the_trigonometry() {
    for n in 1..=16 {
        for k in 0..n {
            let a = std::f64::consts::TAU * k as f64 / n as f64 - std::f64::consts::FRAC_PI_2;
            let (c, s) = around_from_top(k, n);
            assert!(
                (c - a.cos()).abs() < 1e-9 && (s - a.sin()).abs() < 1e-9,
                "k={k} n={n}"
            );
        }
    }
}

#[test]
fn headlines_keep_the_gist_of_a_label() {
    assert_eq!(
        headline("heartbeat term 1 (prev #0/t0, commit #0)"),
        "heartbeat term 1"
    );
    assert_eq!(
        headline("append ok · term 1 · matches up to #1"),
        "append ok · term 1"
    );
    assert_eq!(
        headline("reply 12: not the leader, try S1"),
        "reply 12: not the leader"
    );
    assert_eq!(
        headline("AppendEntries term 1 +1 after #0/t0 (commit #0)"),
        "AppendEntries term 1 +1 after…"
    );
}

#[test]
#[ignore]
fn print_needed_heights() {
    for info in coordlab_sim::scenarios::catalog() {
        let t = full_trace(info.id);
        let mut found = None;
        for h in (150..=700).step_by(10) {
            let space = Space {
                width: 836.0,
                height: Some(h as f64),
                min_text: 12.0,
            };
            let frame = Frame::new(&t, space);
            let ok = t
                .reached_beats()
                .all(|(seq, _)| frame.layout_at(&t, seq as usize).ty.big >= 18.0);
            if ok {
                found = Some((h, frame.arrangement));
                break;
            }
        }
        println!("{:24} {:?}", info.id, found);
    }
}

/// The picture's box in a 400×300 embed: beside its story, above its control bar.
const SMALL_EMBED: Space = Space {
    width: 228.0,
    height: Some(256.0),
    min_text: 11.0,
};

/// In a 400×300 embed every scenario's picture fits its box as drawn (not shrunk), every text
/// at 11 px or more, with no card on another.
#[test]
fn every_scenario_fits_a_small_embed() {
    let mut bad = Vec::new();
    for info in coordlab_sim::scenarios::catalog() {
        let t = full_trace(info.id);
        let frame = Frame::new(&t, SMALL_EMBED);
        let mut steps: Vec<usize> = t.reached_beats().map(|(s, _)| s as usize).collect();
        steps.push(0);
        for i in steps {
            let lay = frame.layout_at(&t, i);
            if lay.width > SMALL_EMBED.width + 0.5 || lay.height > 256.5 {
                bad.push(format!(
                    "{} step {i}: drawn {}x{} for 228x256 ({:?})",
                    info.id, lay.width, lay.height, frame.arrangement
                ));
            }
            for (k, a) in lay.boxes.iter().enumerate() {
                for b in &lay.boxes[k + 1..] {
                    if overlap(*a, *b) > 0.0 {
                        bad.push(format!("{} step {i}: cards overlap", info.id));
                    }
                }
            }
            let snap = t.entries[i].snapshot.clone().unwrap();
            for piece in frame.parts(&t, i, &snap, &lay, true).unwrap().pieces {
                for (class, size) in sizes_in(&piece) {
                    if size < 11.0 {
                        bad.push(format!("{} step {i}: {class} at {size} px", info.id));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} problems:\n{}", bad.len(), bad.join("\n"));
}
