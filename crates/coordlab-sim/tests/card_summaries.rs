//! Every card of every scenario reads from the back of a room: at every step of every
//! scenario's default run, each node's summary has one short word (two at most), a few
//! badges with short labels and values, and details short enough for a card — and no time
//! printed the way people do not write it ("0.000ms", "29.912ms").

use coordlab_sim::scenarios::Params;
use coordlab_sim::trace::Summary;
use coordlab_sim::{catalog, run, Limits, Recording, RunRequest};

const WORD_MAX: usize = 12;
const BADGES_MAX: usize = 4;
const LABEL_MAX: usize = 10;
const VALUE_MAX: usize = 8;
const DETAIL_MAX: usize = 32;

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// "ms" right after a decimal fraction: `0.000ms`, `12.5 ms`.
fn fractional_ms(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text[i..].find("ms").map(|k| k + i) {
        let mut j = at;
        while j > 0 && b[j - 1] == b' ' {
            j -= 1;
        }
        let digits_end = j;
        while j > 0 && b[j - 1].is_ascii_digit() {
            j -= 1;
        }
        if j < digits_end && j > 1 && b[j - 1] == b'.' && b[j - 2].is_ascii_digit() {
            return true;
        }
        i = at + 2;
    }
    false
}

/// Everything wrong with one card, in words.
fn faults(s: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    let words = s.word.split_whitespace().count();
    if s.word.trim().is_empty() || chars(&s.word) > WORD_MAX || words > 2 {
        out.push(format!(
            "word {:?}: want 1–{WORD_MAX} characters, at most two words",
            s.word
        ));
    }
    if s.badges.len() > BADGES_MAX {
        out.push(format!("{} badges, want at most {BADGES_MAX}", s.badges.len()));
    }
    for b in &s.badges {
        if b.label.is_empty() || chars(&b.label) > LABEL_MAX {
            out.push(format!(
                "badge label {:?}: want 1–{LABEL_MAX} characters",
                b.label
            ));
        }
        if b.value.is_empty() || chars(&b.value) > VALUE_MAX {
            out.push(format!(
                "badge value {:?}: want 1–{VALUE_MAX} characters",
                b.value
            ));
        }
    }
    for d in &s.details {
        if d.text.is_empty() || chars(&d.text) > DETAIL_MAX {
            out.push(format!("detail {:?}: want 1–{DETAIL_MAX} characters", d.text));
        }
    }
    let texts = std::iter::once(s.word.as_str())
        .chain(s.badges.iter().flat_map(|b| [b.label.as_str(), b.value.as_str()]))
        .chain(s.details.iter().map(|d| d.text.as_str()));
    for t in texts {
        if t.contains("0.000ms") || fractional_ms(t) {
            out.push(format!("{t:?}: a time in fractional ms; use format_duration"));
        }
    }
    out
}

#[test]
fn every_card_of_every_scenario_fits_a_card() {
    // One report per scenario, node and fault, with the first step it shows at.
    let mut seen = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    for info in catalog() {
        let request = RunRequest {
            scenario: info.id.to_string(),
            params: Params::new(),
            seed: 1,
            actions: Vec::new(),
        };
        let trace =
            run(&request, Limits::default(), Recording::Full).unwrap_or_else(|e| panic!("{}: {e}", info.id));
        for e in &trace.entries {
            let snapshot = e.snapshot.as_deref().expect("a full recording");
            for (node, view) in trace.nodes.iter().zip(&snapshot.nodes) {
                for f in faults(&view.summary) {
                    let line = format!("{} / {}: {f}", info.id, node.name);
                    if seen.insert(line.clone()) {
                        problems.push(format!("{line} (first at step {})", e.seq));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} cards do not fit; the first:\n{}",
        problems.len(),
        problems[..problems.len().min(40)].join("\n")
    );
}

#[test]
fn the_checks_catch_what_they_are_for() {
    use coordlab_sim::trace::Tone;
    let good = Summary::new("backing off", Tone::Waiting)
        .badge("token", 33)
        .detail("step 2: writing")
        .minor("14.5 s left");
    assert!(faults(&good).is_empty(), "{:?}", faults(&good));
    let bad = [
        Summary::new("", Tone::Quiet),
        Summary::new("waiting for the job", Tone::Quiet),
        Summary::new("a b c", Tone::Quiet),
        Summary::new("held", Tone::Holds).badge("fencing token", 3),
        Summary::new("held", Tone::Holds).badge("holder", "transfer-1"),
        Summary::new("held", Tone::Holds).detail("the quietest session: 1.322 s silent"),
        Summary::new("held", Tone::Holds).detail("0.000ms"),
        Summary::new("held", Tone::Holds).detail("29.912 ms left"),
        Summary::new("held", Tone::Holds)
            .badge("a", 1)
            .badge("b", 2)
            .badge("c", 3)
            .badge("d", 4)
            .badge("e", 5),
    ];
    for s in bad {
        assert!(!faults(&s).is_empty(), "{s:?} passed");
    }
    assert!(!fractional_ms("250 ms"));
    assert!(!fractional_ms("ms"));
}
