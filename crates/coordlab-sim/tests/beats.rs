//! Every scenario tells its story in beats, and the beats happen: in its default run, and in
//! 200 seeds of every variant (a beat that silently stops happening fails this test).

use coordlab_sim::scenarios::{registry, ParamKind, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest};

const SEEDS: u64 = 200;

/// The scenarios to check: all of them, or those named in `COORDLAB_BEATS_ONLY`
/// (comma-separated ids), for working on one family's story.
fn scenarios() -> impl Iterator<Item = &'static coordlab_sim::scenarios::ScenarioDef> {
    let only: Vec<String> = std::env::var("COORDLAB_BEATS_ONLY")
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    registry()
        .iter()
        .filter(move |d| only.is_empty() || only.iter().any(|o| o == d.id))
}

fn variants(def: &coordlab_sim::scenarios::ScenarioDef) -> Vec<Params> {
    let info = def.info();
    let mut out = vec![Params::new()];
    for p in &info.params {
        if let ParamKind::Choice { options } = &p.kind {
            for o in options.iter().filter(|o| o.value != p.default) {
                out.push([(p.key.to_string(), o.value.to_string())].into_iter().collect());
            }
        }
    }
    out
}

#[test]
fn every_scenario_declares_a_story_of_beats() {
    for def in scenarios() {
        for params in variants(def) {
            let request = RunRequest {
                scenario: def.id.to_string(),
                params: params.clone(),
                seed: 1,
                actions: Vec::new(),
            };
            let trace = run(&request, Limits::default(), Recording::Summary).expect("runs");
            assert!(
                trace.beats.len() >= 3,
                "{} {params:?} declares {} beats",
                def.id,
                trace.beats.len()
            );
            for b in &trace.beats {
                assert!(
                    !b.title.is_empty() && !b.text.is_empty(),
                    "{}: a beat without words",
                    def.id
                );
                assert!(
                    b.title.chars().count() <= 60,
                    "{}: beat title too long for a slide: {}",
                    def.id,
                    b.title
                );
            }
        }
    }
}

#[test]
fn every_beat_happens_in_order_in_every_variant_over_many_seeds() {
    let mut missed = Vec::new();
    for def in scenarios() {
        for params in variants(def) {
            for seed in std::iter::once(1).chain(0..SEEDS) {
                let request = RunRequest {
                    scenario: def.id.to_string(),
                    params: params.clone(),
                    seed,
                    actions: Vec::new(),
                };
                let trace = run(&request, Limits::default(), Recording::Summary).expect("runs");
                if let Some(b) = trace.beats.iter().find(|b| b.seq.is_none()) {
                    missed.push(format!(
                        "{} {params:?} seed {seed}: “{}” never happens",
                        def.id, b.title
                    ));
                    break;
                }
            }
        }
    }
    assert!(
        missed.is_empty(),
        "beats that did not happen:\n{}",
        missed.join("\n")
    );
}

/// A room that learns "the right answer is always the middle one" stops reading the questions:
/// across the course's questions and every variant's beat questions, no place in a list of
/// three answers holds more than half of the right answers (lists in their natural order, like
/// "1", "2", "3", are left out of the count).
#[test]
fn the_right_answer_is_not_always_in_the_same_place() {
    let mut seen = std::collections::BTreeSet::new();
    let mut places = [0usize; 3];
    let mut count = |prompt: &str, answers: &[&str], correct: usize| {
        let ordered = answers
            .iter()
            .all(|a| a.starts_with(|c: char| c.is_ascii_digit()));
        if answers.len() == 3 && !ordered && seen.insert(prompt.to_string()) {
            places[correct] += 1;
        }
    };
    for def in scenarios() {
        if let Some(notes) = def.course {
            let q = notes.question;
            count(q.prompt, q.answers, q.correct);
        }
        for params in variants(def) {
            let request = RunRequest {
                scenario: def.id.to_string(),
                params,
                seed: 1,
                actions: Vec::new(),
            };
            let trace = run(&request, Limits::default(), Recording::Summary).expect("runs");
            for q in trace.beats.iter().filter_map(|b| b.question.as_ref()) {
                let answers: Vec<&str> = q.answers.iter().map(String::as_str).collect();
                count(&q.prompt, &answers, usize::from(q.correct));
            }
        }
    }
    let total: usize = places.iter().sum();
    assert!(total >= 30, "only {total} questions counted");
    for (place, n) in places.iter().enumerate() {
        assert!(
            *n * 2 <= total && *n * 5 >= total,
            "answer {} is right in {n} of {total} questions: {places:?}",
            place + 1
        );
    }
}
