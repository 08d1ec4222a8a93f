//! "Find a failure" (web/search.js) runs the bounded search (`coordlab_sim::search`, what
//! `coordlab search` runs) in a Web Worker that loads the chapter's embed bundle: these three
//! functions are what the worker calls. The player's bundle has no room for the search; the
//! page only sends and shows text, and never parses a route itself.

use crate::route::{self, PlayRoute, Route};
use coordlab_sim::search::{self, part_message, run_message, PartReply, SearchKind};
use coordlab_sim::{scenarios, Limits, Recording, RunRequest};
use wasm_bindgen::prelude::wasm_bindgen;

/// The run a player link shows, as the simulator takes it.
fn run_of(hash: &str) -> Result<RunRequest, String> {
    match route::parse(hash).route {
        Route::Play(p) => Ok(RunRequest {
            scenario: p.scenario,
            params: p.params,
            seed: p.seed,
            actions: p.actions,
        }),
        _ => Err("Find a failure searches the run in the player.".to_string()),
    }
}

/// The first part's message ([`part_message`]) of a search of the run `hash` shows, with up
/// to `max_faults` faults of `kinds` (`pause,crash`); or a failure reply, in words.
#[wasm_bindgen]
pub fn search_start(hash: &str, max_faults: u32, kinds: &str) -> String {
    let chosen: Option<Vec<SearchKind>> = kinds.split(',').map(SearchKind::from_code).collect();
    match (run_of(hash), chosen) {
        (Ok(run), Some(chosen)) => part_message(&run, max_faults, &chosen, 0),
        (Err(why), _) => PartReply::Failed(why).text(),
        (_, None) => {
            PartReply::Failed(format!("`{kinds}` names a fault kind the search does not place.")).text()
        }
    }
}

/// One part of a search (about a tenth of a second; [`run_message`]), as [`PartReply::text`]
/// — except that a witness's run line becomes its permalink (the player's link to the run
/// with the witness's faults as its fault script, at the violation, then `&why=` and the
/// chain's steps) and a line with its faults in words.
#[wasm_bindgen]
pub fn search_part(message: &str) -> String {
    let start = js_sys::Date::now();
    let reply = run_message(message, || js_sys::Date::now() - start < 100.0);
    let PartReply::Found {
        run, chain, at_seq, ..
    } = &reply
    else {
        return reply.text();
    };
    let Ok(info) = scenarios::find(&run.scenario).map(|d| d.info()) else {
        return PartReply::Failed(format!("no scenario `{}`", run.scenario)).text();
    };
    let faults: Vec<String> = match scenarios::run(run, Limits::default(), Recording::Summary) {
        Ok(trace) => run
            .actions
            .iter()
            .map(|a| {
                let name = |id| trace.node_name(id).to_string();
                format!(
                    "{} after step {}",
                    a.fault.describe(&name),
                    a.at_step.saturating_sub(1)
                )
            })
            .collect(),
        Err(e) => return PartReply::Failed(e.to_string()).text(),
    };
    let faults = match faults.len() {
        0 => "no fault added".to_string(),
        _ => faults.join(" and "),
    };
    let steps: Vec<String> = chain.iter().map(|(seq, _)| seq.to_string()).collect();
    let link = route::format(&Route::Play(PlayRoute {
        scenario: run.scenario.clone(),
        // The player keeps every parameter resolved; the witness names only those set.
        params: scenarios::resolve_params(&info, &run.params).unwrap_or(run.params.clone()),
        seed: run.seed,
        actions: run.actions.clone(),
        step: Some(*at_seq),
        present: false,
        all_events: false,
        view: Default::default(),
    }));
    // The reply's text with the run's line replaced by the link and the faults in words.
    let text = reply.text();
    let mut lines = text.lines();
    let head = lines.next().unwrap_or_default();
    let chain: String = lines.skip(1).map(|l| format!("\n{l}")).collect();
    format!("{head}\n{link}&why={}\n{faults}{chain}", steps.join("."))
}

fn lines(chain: &[(u32, String)]) -> String {
    chain
        .iter()
        .map(|(seq, line)| format!("\n{seq} {line}"))
        .collect()
}

/// Why the run a witness's permalink shows broke: `PROPERTY`, then the chain (as in
/// [`search_part`]) to the violation at step `at_seq`, the last of the link's `why=` — for a
/// permalink opened afresh, which carries the steps but not the words. Empty when nothing
/// broke there.
#[wasm_bindgen]
pub fn search_why(hash: &str, at_seq: u32) -> String {
    let Ok(run) = run_of(hash) else {
        return String::new();
    };
    let Ok(trace) = scenarios::run(&run, Limits::default(), Recording::Lines) else {
        return String::new();
    };
    let broken = trace
        .properties
        .iter()
        .find(|q| q.first_violation_seq == Some(at_seq));
    match broken {
        Some(q) => format!("{}{}", q.name, lines(&search::chain(&trace, at_seq))),
        None => String::new(),
    }
}
