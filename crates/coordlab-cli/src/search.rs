//! `coordlab search`: every schedule of up to K faults, breadth-first, on all cores; per
//! property the shortest schedule that breaks it (shrunk and explained), or the bounded claim
//! that none does. `--shard I/N` runs one of N disjoint parts and prints it as JSON;
//! `--merge` combines such parts into the answer a single run gives.

use crate::args::UsageError;
use crate::util::{params_code, reproduce};
use coordlab_sim::kernel::faults::{parse_script, script_code};
use coordlab_sim::search::{
    grouped, plural, vocabulary, SearchKind, SearchReport, SearchSpec, Space, Witness,
};
use coordlab_sim::{Limits, Recording, RunRequest};
use serde_json::{json, Value};
use std::fmt::Write;

/// Which part of the space this run takes: schedules numbered `≡ index (mod count)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

#[derive(Debug, PartialEq, Eq)]
pub enum SearchCommand {
    Run {
        spec: SearchSpec,
        shard: Option<Shard>,
        /// The story's own faults the search switched off (`pause_ms=0`).
        story_off: Vec<String>,
        /// Print each witness as a Rust regression test instead of the report.
        export_test: bool,
    },
    Merge(Vec<String>),
}

pub fn parse_shard(text: &str) -> Result<Shard, UsageError> {
    let bad = || {
        UsageError(format!(
            "bad --shard `{text}`; expected I/N with 0 <= I < N, e.g. 0/4"
        ))
    };
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (index, count) = (
        i.parse::<u64>().map_err(|_| bad())?,
        n.parse::<u64>().map_err(|_| bad())?,
    );
    if count == 0 || index >= count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

pub fn parse_kinds(text: &str) -> Result<Vec<SearchKind>, UsageError> {
    let mut kinds = Vec::new();
    for code in text.split(',') {
        let kind = SearchKind::from_code(code.trim()).ok_or_else(|| {
            UsageError(format!(
                "bad --kinds `{text}`: `{code}` is not a fault kind the search places (pause, crash)"
            ))
        })?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    kinds.sort();
    Ok(kinds)
}

pub fn parse_pauses(text: &str) -> Result<Vec<u64>, UsageError> {
    text.split(',')
        .map(|p| {
            p.trim().parse::<u64>().map_err(|_| {
                UsageError(format!(
                    "bad --pause-ms `{text}`: `{p}` is not a whole number of milliseconds; e.g. --pause-ms 15000,36000"
                ))
            })
        })
        .collect()
}

/// Runs the part of the space `shard` names (all of it without one) on every core.
fn run_space(space: &Space, shard: Shard) -> Result<SearchReport, UsageError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let mine = (space.len() + shard.count - 1 - shard.index) / shard.count;
    let bar = indicatif::ProgressBar::new(mine);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} schedules, {per_sec}, about {eta} left",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let parts: Vec<Result<SearchReport, coordlab_sim::SimError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let bar = bar.clone();
                scope.spawn(move || {
                    space.run_part(
                        |i| i % shard.count == shard.index && (i / shard.count) % threads == t,
                        || bar.inc(1),
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(coordlab_sim::SimError::BadAction("a search thread failed".into()))
                })
            })
            .collect()
    });
    bar.finish_and_clear();
    let mut report = SearchReport::empty();
    for part in parts {
        report.absorb(part?);
    }
    Ok(report)
}

/// The text report: per property a shrunk, explained witness or the bounded claim.
fn render(space: &Space, report: &SearchReport, story_off: &[String]) -> Result<(String, bool), UsageError> {
    let spec = &space.spec;
    let base = &spec.base;
    let mut out = String::new();
    if !story_off.is_empty() {
        let _ = writeln!(
            out,
            "story     its own fault is off ({}): the search places every fault itself; --set it to keep it",
            story_off.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "scenario  {} (seed {}, {})",
        base.scenario,
        base.seed,
        params_code(&base.params)
    );
    if !base.actions.is_empty() {
        let _ = writeln!(out, "faults    the request's own: {}", script_code(&base.actions));
    }
    let _ = writeln!(
        out,
        "space     every schedule of up to {} ({}) on any participant that offers it, at any of {} steps: {} schedules",
        plural(u64::from(spec.max_faults), "fault", "faults"),
        vocabulary(space),
        space.steps,
        grouped(space.len())
    );
    let _ = writeln!(
        out,
        "ran       {} schedules, {} events",
        grouped(report.schedules),
        grouped(report.events)
    );
    let mut clean = true;
    for name in &space.checked {
        let Some(found) = report.witnesses.get(name) else {
            let _ = writeln!(out, "{}", space.claim(name, report.schedules));
            continue;
        };
        clean = false;
        let small = space.shrink(name, found)?;
        let k = small.faults.len() as u64;
        if k == 0 {
            let _ = writeln!(
                out,
                "{name}: broken with no added fault (at step {})",
                small.at_seq
            );
        } else {
            let _ = writeln!(
                out,
                "{name}: broken by {}: {} (at step {})",
                plural(k, "fault", "faults"),
                script_code(&small.faults),
                small.at_seq
            );
            if small.faults != found.faults {
                let _ = writeln!(
                    out,
                    "  first found as {}; shortened to the shortest pause that still breaks it",
                    script_code(&found.faults)
                );
            }
        }
        explain(&mut out, space, name, &small)?;
    }
    Ok((out, clean))
}

fn explain(out: &mut String, space: &Space, name: &str, w: &Witness) -> Result<(), UsageError> {
    let request: RunRequest = space.request(&w.faults);
    let _ = writeln!(
        out,
        "  reproduce: {}",
        reproduce(&request.scenario, request.seed, &request.params, &request.actions)
    );
    let trace = coordlab_sim::run(&request, Limits::default(), Recording::Lines)?;
    let _ = writeln!(out, "  why {name} broke:");
    for (seq, line) in coordlab_sim::search::chain(&trace, w.at_seq) {
        let _ = writeln!(out, "    step {seq:>4}  {line}");
    }
    Ok(())
}

/// The JSON of one shard's report, with everything that names its space so `--merge` can
/// refuse parts of different searches.
fn shard_json(space: &Space, shard: Shard, report: &SearchReport, story_off: &[String]) -> String {
    let spec = &space.spec;
    let witnesses: serde_json::Map<String, Value> = report
        .witnesses
        .iter()
        .map(|(name, w)| {
            (
                name.clone(),
                json!({ "index": w.index, "faults": script_code(&w.faults), "at_step": w.at_seq }),
            )
        })
        .collect();
    let value = json!({
        "coordlab_search": 1,
        "scenario": spec.base.scenario,
        "seed": spec.base.seed,
        "params": spec.base.params,
        "actions": script_code(&spec.base.actions),
        "faults": spec.max_faults,
        "kinds": spec.kinds.iter().map(|k| k.code()).collect::<Vec<_>>(),
        "properties": spec.properties,
        "pause_ms": space.pause_ms,
        "story_off": story_off,
        "shard": [shard.index, shard.count],
        "schedules": report.schedules,
        "events": report.events,
        "witnesses": witnesses,
    });
    format!("{value}\n")
}

pub fn execute(command: &SearchCommand) -> Result<(String, bool), UsageError> {
    match command {
        SearchCommand::Run {
            spec,
            shard,
            story_off,
            export_test,
        } => {
            let space = Space::new(spec.clone())?;
            let part = shard.unwrap_or(Shard { index: 0, count: 1 });
            let report = run_space(&space, part)?;
            if *export_test {
                return export(&space, &report);
            }
            match shard {
                Some(s) => Ok((
                    shard_json(&space, *s, &report, story_off),
                    report.witnesses.is_empty(),
                )),
                None => render(&space, &report, story_off),
            }
        }
        SearchCommand::Merge(files) => merge(files),
    }
}

/// A Rust test name: the words of `text`, lower case, joined by `_`.
fn ident(text: &str) -> String {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("_")
}

/// Each shrunk witness as a `#[test]` that uses only the simulator's public API and fails
/// once the schedule no longer breaks the property. The output is a whole file: paste it
/// into `crates/coordlab-sim/tests/` (or a crate depending on `coordlab-sim`).
fn export(space: &Space, report: &SearchReport) -> Result<(String, bool), UsageError> {
    if report.witnesses.is_empty() {
        return Err(UsageError(
            "no schedule broke a property, so there is no witness to export as a test".into(),
        ));
    }
    let base = &space.spec.base;
    let mut out = format!(
        "//! Regression tests exported by `coordlab search {} --export-test`. Each runs a schedule\n\
         //! the search found and asserts that it still breaks the property: a failure here means\n\
         //! the schedule no longer breaks it (the design was fixed, or the model changed).\n\
         \n\
         use coordlab_sim::properties::Verdict;\n\
         use coordlab_sim::{{Limits, Recording, RunRequest}};\n\
         \n\
         /// Runs the request written as `scenario params seed faults` (`RunRequest::to_line`)\n\
         /// and panics unless `property` is violated.\n\
         pub fn assert_breaks(line: &str, property: &str) {{\n    \
         let request = RunRequest::parse_line(line).expect(\"an exported request line\");\n    \
         let trace = coordlab_sim::run(&request, Limits::default(), Recording::Summary).expect(\"the run is valid\");\n    \
         let report = trace\n        .properties\n        .iter()\n        .find(|p| p.name == property)\n        .expect(\"the scenario checks the property\");\n    \
         assert_eq!(\n        report.verdict,\n        Verdict::Violated,\n        \"{{property}} no longer breaks under {{line}}\"\n    );\n\
         }}\n",
        base.scenario
    );
    for name in &space.checked {
        let Some(found) = report.witnesses.get(name) else {
            continue;
        };
        let small = space.shrink(name, found)?;
        let what = if small.faults.is_empty() {
            "the run with no added fault".to_string()
        } else {
            format!("`{}`", coordlab_sim::kernel::faults::script_code(&small.faults))
        };
        let _ = write!(
            out,
            "\n/// Found by the search: {what} breaks it, at step {}.\n#[test]\nfn {}_{}_breaks() {{\n    assert_breaks(\n        {:?},\n        {name:?},\n    );\n}}\n",
            small.at_seq,
            ident(&base.scenario),
            ident(name),
            space.request(&small.faults).to_line(),
        );
    }
    Ok((out, false))
}

fn field<'a>(v: &'a Value, key: &str, file: &str) -> Result<&'a Value, UsageError> {
    v.get(key).ok_or_else(|| {
        UsageError(format!(
            "{file}: not a `coordlab search --shard` report (no `{key}`)"
        ))
    })
}

fn merge(files: &[String]) -> Result<(String, bool), UsageError> {
    if files.is_empty() {
        return Err(UsageError(
            "`search --merge` needs the shard reports to merge, e.g. part-*.json".into(),
        ));
    }
    // The first part fixes the search (its identity: everything but the shard and results)
    // and the number of shards; every other part must agree.
    let mut first: Option<(Value, Space, u64, Vec<String>)> = None;
    let mut seen: Vec<u64> = Vec::new();
    let mut total = SearchReport::empty();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| UsageError(format!("{file}: {e}")))?;
        let v: Value =
            serde_json::from_str(text.trim()).map_err(|e| UsageError(format!("{file}: not JSON: {e}")))?;
        if v.get("coordlab_search") != Some(&json!(1)) {
            return Err(UsageError(format!(
                "{file}: not a `coordlab search --shard` report"
            )));
        }
        let shard = field(&v, "shard", file)?;
        let (Some(index), Some(count)) = (
            shard.get(0).and_then(Value::as_u64),
            shard.get(1).and_then(Value::as_u64),
        ) else {
            return Err(UsageError(format!("{file}: bad `shard`")));
        };
        if count == 0 || index >= count {
            return Err(UsageError(format!("{file}: bad `shard` {index}/{count}")));
        }
        let mut identity = v.clone();
        if let Some(o) = identity.as_object_mut() {
            for k in ["shard", "schedules", "events", "witnesses"] {
                o.remove(k);
            }
        }
        match &first {
            None => {
                let story_off = field(&v, "story_off", file)?
                    .as_array()
                    .ok_or_else(|| UsageError(format!("{file}: bad `story_off`")))?
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect();
                first = Some((identity, Space::new(spec_of(&v, file)?)?, count, story_off));
            }
            Some((id, _, n, _)) if *id != identity || *n != count => {
                return Err(UsageError(format!(
                    "{file}: a part of a different search (its scenario, settings, faults or number of shards differ from {}'s)",
                    files[0]
                )));
            }
            Some(_) => {}
        }
        if seen.contains(&index) {
            return Err(UsageError(format!(
                "{file}: shard {index}/{count} is given twice"
            )));
        }
        seen.push(index);
        let mut part = SearchReport::empty();
        part.schedules = field(&v, "schedules", file)?
            .as_u64()
            .ok_or_else(|| UsageError(format!("{file}: bad `schedules`")))?;
        part.events = field(&v, "events", file)?
            .as_u64()
            .ok_or_else(|| UsageError(format!("{file}: bad `events`")))?;
        let witnesses = field(&v, "witnesses", file)?
            .as_object()
            .ok_or_else(|| UsageError(format!("{file}: bad `witnesses`")))?;
        for (name, w) in witnesses {
            let bad = || UsageError(format!("{file}: bad witness of {name}"));
            let faults = parse_script(w.get("faults").and_then(Value::as_str).ok_or_else(bad)?)
                .map_err(|e| UsageError(format!("{file}: witness of {name}: {e}")))?;
            let index = w.get("index").and_then(Value::as_u64).ok_or_else(bad)?;
            let at_seq = w
                .get("at_step")
                .and_then(Value::as_u64)
                .and_then(|s| u32::try_from(s).ok())
                .ok_or_else(bad)?;
            part.witnesses.insert(
                name.clone(),
                Witness {
                    index,
                    faults,
                    at_seq,
                },
            );
        }
        total.absorb(part);
    }
    let Some((_, space, count, story_off)) = first else {
        return Err(UsageError("no shard reports".into()));
    };
    let missing: Vec<String> = (0..count)
        .filter(|i| !seen.contains(i))
        .take(8)
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(UsageError(format!("missing shards: {}", missing.join(", "))));
    }
    render(&space, &total, &story_off)
}

fn spec_of(v: &Value, file: &str) -> Result<SearchSpec, UsageError> {
    let bad = |what: &str| UsageError(format!("{file}: bad `{what}`"));
    let scenario = field(v, "scenario", file)?
        .as_str()
        .ok_or_else(|| bad("scenario"))?
        .to_string();
    let seed = field(v, "seed", file)?.as_u64().ok_or_else(|| bad("seed"))?;
    let params = field(v, "params", file)?
        .as_object()
        .ok_or_else(|| bad("params"))?
        .iter()
        .map(|(k, v)| Ok((k.clone(), v.as_str().ok_or_else(|| bad("params"))?.to_string())))
        .collect::<Result<_, UsageError>>()?;
    let actions = parse_script(
        field(v, "actions", file)?
            .as_str()
            .ok_or_else(|| bad("actions"))?,
    )
    .map_err(|e| UsageError(format!("{file}: actions: {e}")))?;
    let max_faults = field(v, "faults", file)?.as_u64().ok_or_else(|| bad("faults"))? as u32;
    let kinds = field(v, "kinds", file)?
        .as_array()
        .ok_or_else(|| bad("kinds"))?
        .iter()
        .map(|k| {
            k.as_str()
                .and_then(SearchKind::from_code)
                .ok_or_else(|| bad("kinds"))
        })
        .collect::<Result<_, _>>()?;
    let properties = field(v, "properties", file)?
        .as_array()
        .ok_or_else(|| bad("properties"))?
        .iter()
        .map(|p| p.as_str().map(str::to_string).ok_or_else(|| bad("properties")))
        .collect::<Result<_, _>>()?;
    let pause_ms = field(v, "pause_ms", file)?
        .as_array()
        .ok_or_else(|| bad("pause_ms"))?
        .iter()
        .map(|p| p.as_u64().ok_or_else(|| bad("pause_ms")))
        .collect::<Result<_, _>>()?;
    Ok(SearchSpec {
        base: RunRequest {
            scenario,
            params,
            seed,
            actions,
        },
        max_faults,
        kinds,
        properties,
        pause_ms: Some(pause_ms),
    })
}
