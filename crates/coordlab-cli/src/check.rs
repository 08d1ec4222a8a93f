//! `coordlab check`: runs a range of seeds and compares each with the declared expectation.

use crate::args::SeedRange;
use crate::util::{expectation_text, params_code, reproduce};
use coordlab_sim::kernel::faults::script_code;
use coordlab_sim::scenarios::expectation_for;
use coordlab_sim::{Limits, Recording, RunRequest, SimError};
use std::fmt::Write;

/// The report and whether every seed met the expectation.
pub fn check(base: &RunRequest, seeds: SeedRange) -> Result<(String, bool), SimError> {
    let expectation = expectation_for(base)?;
    let mut request = base.clone();
    let mut met = 0u64;
    let mut first_miss: Option<(u64, Vec<String>)> = None;
    let mut resolved_params = None;
    for i in 0..seeds.count {
        request.seed = seeds.start + i;
        let trace = coordlab_sim::run(&request, Limits::default(), Recording::Summary)?;
        let mismatches = expectation.mismatches(&trace);
        if mismatches.is_empty() {
            met += 1;
        } else if first_miss.is_none() {
            first_miss = Some((request.seed, mismatches));
        }
        if resolved_params.is_none() {
            resolved_params = Some(trace.params);
        }
    }
    let params = resolved_params.unwrap_or_default();
    let last = seeds.start + (seeds.count - 1);
    let mut out = String::new();
    let _ = writeln!(out, "scenario  {}", base.scenario);
    let _ = writeln!(out, "params    {}", params_code(&params));
    if !base.actions.is_empty() {
        let _ = writeln!(out, "actions   {}", script_code(&base.actions));
    }
    let _ = writeln!(out, "seeds     {}..={last} ({} seeds)", seeds.start, seeds.count);
    let _ = writeln!(out, "expected  {}", expectation_text(&expectation));
    let _ = writeln!(out, "{met}/{} seeds reached the expected outcome", seeds.count);
    if let Some((seed, mismatches)) = &first_miss {
        let _ = writeln!(out, "first seed that did not: {seed}");
        for m in mismatches {
            let _ = writeln!(out, "  - {m}");
        }
        let _ = writeln!(
            out,
            "reproduce: {}",
            reproduce(&base.scenario, *seed, &params, &base.actions)
        );
    }
    Ok((out, first_miss.is_none()))
}
