//! `coordlab sweep`: many seeds with random faults and parameters; reports every violated
//! safety property with a command line that reproduces the first violation.

use crate::args::SeedRange;
use crate::util::reproduce;
use coordlab_sim::sweep::sweep as run_sweep;
use coordlab_sim::{RunRequest, SimError};
use std::fmt::Write;

/// The report and whether no checked property was violated.
pub fn sweep(base: &RunRequest, seeds: SeedRange, only: &[String]) -> Result<(String, bool), SimError> {
    let report = run_sweep(base, seeds.start..seeds.start + seeds.count, only)?;
    let mut out = String::new();
    let _ = writeln!(out, "scenario  {}", base.scenario);
    let _ = writeln!(
        out,
        "seeds     {}..={} with random faults",
        seeds.start,
        seeds.start + (seeds.count - 1)
    );
    let _ = writeln!(out, "checked   {}", report.checked.join(", "));
    let _ = writeln!(out, "runs      {}", report.runs);
    for name in &report.checked {
        match report.findings.get(name) {
            None => {
                let _ = writeln!(out, "{name}: never violated");
            }
            Some(f) => {
                let pct_tenths = f.violations * 1000 / report.runs.max(1);
                let _ = writeln!(
                    out,
                    "{name}: violated in {} of {} runs ({}.{}%); first at seed {}",
                    f.violations,
                    report.runs,
                    pct_tenths / 10,
                    pct_tenths % 10,
                    f.first.seed
                );
                let _ = writeln!(
                    out,
                    "  reproduce: {}",
                    reproduce(&f.first.scenario, f.first.seed, &f.first.params, &f.first.actions)
                );
            }
        }
    }
    Ok((out, report.findings.is_empty()))
}
