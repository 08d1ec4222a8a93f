//! Sweeps: many seeds, each with randomly drawn parameters and faults, checking the safety
//! properties. Where a design is safe the sweep must find nothing; where a bug is planted it
//! must find a violation and name a request that reproduces it.
//!
//! The random draws come from their own ChaCha8 stream keyed by the sweep seed, so a
//! reported seed always rebuilds the same request — and the request itself (parameters,
//! seed, action script) is what the report prints.

use crate::kernel::collections::{sort_by_key, VecMap};
use crate::kernel::faults::{Action, Fault, FaultKind, MAX_FAULT_MS};
use crate::kernel::ids::NodeId;
use crate::kernel::rng::SimRng;
use crate::properties::{PropertyKind, Verdict};
use crate::scenarios::{self, ParamKind, RunRequest, SimError};
use crate::trace::NodeInfo;
use crate::{Limits, Recording};
use rand::{Rng, SeedableRng};

/// The longest pause a sweep draws, in ms (a minute: long enough to outlive most leases).
const MAX_SWEEP_PAUSE_MS: u64 = 60_000;

/// What a sweep found for one property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub violations: u64,
    pub first: RunRequest,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepReport {
    pub runs: u64,
    /// Always-properties checked, by name.
    pub checked: Vec<String>,
    pub findings: VecMap<String, Finding>,
}

/// Builds the request for one sweep seed: the user's fixed parameters stay, every other
/// integer parameter is drawn from its allowed range, and up to three faults (crash then
/// restart, pause, a held link later released) are placed at random steps.
pub fn random_request(base: &RunRequest, steps: u32, seed: u64) -> Result<RunRequest, SimError> {
    let def = scenarios::find(&base.scenario)?;
    let info = def.info();
    let mut rng = SimRng::seed_from_u64(seed);
    rng.set_stream(0x5eed);
    let mut params = base.params.clone();
    for spec in &info.params {
        if params.contains_key(spec.key) {
            continue;
        }
        if let ParamKind::Int { min, max, .. } = spec.kind {
            params.insert(spec.key.to_string(), rng.gen_range(min..=max).to_string());
        }
    }
    // The drawn parameters may change who takes part (e.g. the number of waiters): ask the
    // scenario for its participants without simulating a single event.
    let probe = RunRequest {
        scenario: base.scenario.clone(),
        params: params.clone(),
        seed,
        actions: Vec::new(),
    };
    let nodes = scenarios::participants(&probe)?;
    let mut actions = base.actions.clone();
    let faulty: Vec<&NodeInfo> = nodes
        .iter()
        .filter(|n| n.faults.contains(&FaultKind::Crash) || n.faults.contains(&FaultKind::Pause))
        .collect();
    let steps = steps.max(1);
    for _ in 0..rng.gen_range(0..=3u32) {
        if faulty.is_empty() {
            break;
        }
        let node = faulty[rng.gen_range(0..faulty.len() as u32) as usize];
        let at_step = rng.gen_range(0..steps);
        match rng.gen_range(0..3u32) {
            0 if node.faults.contains(&FaultKind::Crash) => {
                actions.push(Action {
                    at_step,
                    fault: Fault::Crash { node: node.id },
                });
                if node.faults.contains(&FaultKind::Restart) {
                    let later = at_step + rng.gen_range(1..=20u32);
                    actions.push(Action {
                        at_step: later,
                        fault: Fault::Restart { node: node.id },
                    });
                }
            }
            1 if node.faults.contains(&FaultKind::Network) && nodes.len() > 1 => {
                let mut to = NodeId(rng.gen_range(0..nodes.len() as u32));
                if to == node.id {
                    to = NodeId((to.0 + 1) % nodes.len() as u32);
                }
                actions.push(Action {
                    at_step,
                    fault: Fault::HoldLink { from: node.id, to },
                });
                let later = at_step + rng.gen_range(1..=10u32);
                actions.push(Action {
                    at_step: later,
                    fault: Fault::ReleaseLink { from: node.id, to },
                });
            }
            _ if node.faults.contains(&FaultKind::Pause) => {
                let duration_ms = rng.gen_range(1..=MAX_SWEEP_PAUSE_MS.min(MAX_FAULT_MS));
                actions.push(Action {
                    at_step,
                    fault: Fault::Pause {
                        node: node.id,
                        duration_ms,
                    },
                });
            }
            _ => {}
        }
    }
    sort_by_key(&mut actions, |a| a.at_step);
    Ok(RunRequest {
        scenario: base.scenario.clone(),
        params,
        seed,
        actions,
    })
}

/// Runs `seeds` random requests and reports every violated always-property. `only` limits
/// the check to the named properties.
pub fn sweep(
    base: &RunRequest,
    seeds: std::ops::Range<u64>,
    only: &[String],
) -> Result<SweepReport, SimError> {
    let probe = scenarios::run(base, Limits::default(), Recording::Summary)?;
    let checked: Vec<String> = probe
        .properties
        .iter()
        .filter(|p| p.kind == PropertyKind::Always && (only.is_empty() || only.contains(&p.name)))
        .map(|p| p.name.clone())
        .collect();
    for name in only {
        if !probe.properties.iter().any(|p| &p.name == name) {
            let valid: Vec<&str> = probe.properties.iter().map(|p| p.name.as_str()).collect();
            return Err(SimError::BadAction(format!(
                "scenario `{}` has no property `{name}`; its properties are: {}",
                base.scenario,
                valid.join(", ")
            )));
        }
    }
    // Faults land anywhere in a run about as long as the undisturbed one.
    let steps = (probe.event_count as u32).saturating_add(10);
    let mut report = SweepReport {
        runs: 0,
        checked: checked.clone(),
        findings: VecMap::new(),
    };
    for seed in seeds {
        let request = random_request(base, steps, seed)?;
        let trace = scenarios::run(&request, Limits::default(), Recording::Summary)?;
        report.runs += 1;
        for p in trace
            .properties
            .iter()
            .filter(|p| p.verdict == Verdict::Violated && checked.contains(&p.name))
        {
            match report.findings.get_mut(&p.name) {
                Some(f) => f.violations += 1,
                None => {
                    let first = Finding {
                        violations: 1,
                        first: request.clone(),
                    };
                    report.findings.insert(p.name.clone(), first);
                }
            }
        }
    }
    Ok(report)
}
