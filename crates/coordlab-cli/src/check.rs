//! `coordlab check`: runs a range of seeds and compares each with the declared expectation.
//! Seeds are independent runs, so they are shared out over the machine's cores; the report
//! is the same whatever the number of threads (the first miss is the lowest seed that missed).

use crate::args::SeedRange;
use crate::util::{expectation_text, params_code, reproduce, ACTIONS_CAVEAT};
use coordlab_sim::kernel::faults::script_code;
use coordlab_sim::scenarios::{expectation_for, Expectation, Params};
use coordlab_sim::{Limits, Recording, RunRequest, SimError};
use std::fmt::Write;

/// What one thread found over its share of the seeds.
#[derive(Default)]
struct Tally {
    met: u64,
    first_miss: Option<(u64, Vec<String>)>,
    params: Option<Params>,
}

impl Tally {
    fn merge(mut self, other: Tally) -> Tally {
        self.met += other.met;
        self.first_miss = match (self.first_miss, other.first_miss) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        self.params = self.params.or(other.params);
        self
    }
}

/// Runs the seeds `start + i` for `i` in `first, first + stride, …` below `count`.
fn run_share(
    base: &RunRequest,
    expectation: &Expectation,
    seeds: SeedRange,
    first: u64,
    stride: u64,
) -> Result<Tally, SimError> {
    let mut request = base.clone();
    let mut tally = Tally::default();
    let mut i = first;
    while i < seeds.count {
        request.seed = seeds.start + i;
        let trace = coordlab_sim::run(&request, Limits::default(), Recording::Summary)?;
        let mismatches = expectation.mismatches(&trace);
        if mismatches.is_empty() {
            tally.met += 1;
        } else if tally.first_miss.is_none() {
            tally.first_miss = Some((request.seed, mismatches));
        }
        if tally.params.is_none() {
            tally.params = Some(trace.params);
        }
        i += stride;
    }
    Ok(tally)
}

/// The report and whether every seed met the expectation.
pub fn check(base: &RunRequest, seeds: SeedRange) -> Result<(String, bool), SimError> {
    let expectation = expectation_for(base)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get() as u64)
        .clamp(1, seeds.count.max(1));
    let tallies: Vec<Result<Tally, SimError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let expectation = &expectation;
                scope.spawn(move || run_share(base, expectation, seeds, t, threads))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let mut total = Tally::default();
    for tally in tallies {
        total = total.merge(tally?);
    }
    let Tally {
        met,
        first_miss,
        params,
    } = total;
    let params = params.unwrap_or_default();
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
        if !base.actions.is_empty() {
            let _ = writeln!(out, "({ACTIONS_CAVEAT})");
        }
    }
    Ok((out, first_miss.is_none()))
}
