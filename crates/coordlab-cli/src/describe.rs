//! `coordlab describe <id>`: everything a user needs to run a scenario.

use crate::list::chapter_text;
use crate::util::{expectation_text, params_code};
use coordlab_sim::scenarios::{find, resolve_params, set_param, ParamKind, Params};
use coordlab_sim::{Limits, Recording, RunRequest, SimError};
use std::fmt::Write;

pub fn describe(id: &str) -> Result<String, SimError> {
    let def = find(id)?;
    let info = def.info();
    let defaults = resolve_params(&info, &Params::new())?;
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", info.id, info.title);
    let _ = writeln!(out, "chapter {}, {}", chapter_text(info.chapter), info.sections);
    let _ = writeln!(out, "\n{}", info.summary);

    // Participants and properties are only known to a run; a summary run of the defaults is cheap.
    let request = RunRequest {
        scenario: id.to_string(),
        params: Params::new(),
        seed: 1,
        actions: Vec::new(),
    };
    let trace = coordlab_sim::run(&request, Limits::default(), Recording::Summary)?;
    out.push_str("\nparticipants (node numbers for --actions):\n");
    for n in &trace.nodes {
        let faults: Vec<String> = n.faults.iter().map(|f| format!("{f:?}").to_lowercase()).collect();
        let _ = writeln!(
            out,
            "  {}  {} ({}); faults: {}",
            n.id.0,
            n.name,
            n.kind,
            faults.join(", ")
        );
    }
    out.push_str("\nproperties:\n");
    for p in &trace.properties {
        let kind = format!("{:?}", p.kind).to_lowercase();
        let _ = writeln!(out, "  {} ({kind}): {}", p.name, p.description);
    }

    out.push_str("\nparameters:\n");
    for p in &info.params {
        let _ = writeln!(out, "  {} — {}", p.key, p.label);
        let _ = writeln!(out, "    default: {}", p.default);
        for d in p.variant_defaults {
            let _ = writeln!(out, "      ({} with {}={})", d.value, d.when.0, d.when.1);
        }
        let _ = writeln!(out, "    allowed: {}", p.allowed());
        if let ParamKind::Choice { options } = &p.kind {
            for o in options {
                let _ = writeln!(
                    out,
                    "      {:<w$}  {}",
                    o.value,
                    o.label,
                    w = width(options.iter().map(|o| o.value))
                );
            }
        }
        let _ = writeln!(out, "    {}", p.help);
    }

    out.push_str("\nexpected outcome:\n");
    let _ = writeln!(
        out,
        "  defaults ({}): {}",
        params_code(&defaults),
        expectation_text(&(def.expectation)(&defaults))
    );
    for p in &info.params {
        if let ParamKind::Choice { options } = &p.kind {
            for o in options.iter().filter(|o| o.value != p.default) {
                // The variant's own defaults apply (see `variant_defaults`).
                let params = set_param(&info, &defaults, p.key, o.value)?;
                let _ = writeln!(
                    out,
                    "  {}={}: {}",
                    p.key,
                    o.value,
                    expectation_text(&(def.expectation)(&params))
                );
            }
        }
    }
    Ok(out)
}

fn width<'a>(values: impl Iterator<Item = &'a str>) -> usize {
    values.map(|v| v.chars().count()).max().unwrap_or(0)
}
