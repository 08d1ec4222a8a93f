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
