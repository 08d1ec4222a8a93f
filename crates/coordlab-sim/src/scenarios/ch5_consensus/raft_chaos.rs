//! `raft-chaos` (curriculum §6): Raft under a storm of faults drawn from the seed — crashes
//! and restarts, GC pauses, symmetric partitions, one-way cuts, held links — on a network
//! that loses, duplicates and reorders messages. Then everything heals at once, and the
//! cluster must settle: one leader, one log. Every seed is a different storm; `coordlab
//! check raft-chaos --seeds 0..10000` is the safety and convergence sweep of the chapter.

use crate::kernel::collections::{sort, sort_by_key, VecSet};
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::rng::Ratio;
use crate::kernel::rng::SimRng;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::raft::RaftBug;
use crate::scenarios::raft_common::promised_verdicts;
use crate::scenarios::raft_common::CONVERGES_AFTER_HEAL;
use crate::scenarios::raft_common::{
    bug, build, common_params, election_timeouts_ms, int_param, num, servers_param, ClusterPlan, RaftCast,
    MIN_SPREAD_MS,
};
use crate::scenarios::{Expectation, Listing, Params};
use rand::{Rng, SeedableRng};

pub const ID: &str = "raft-chaos";
/// Time the cluster gets after the heal before the servers stop: long enough for the
/// longest pause to end and for several rounds of elections.
pub const SETTLE_MS: u64 = 4_000;
/// Longest GC pause the storm draws.
pub const MAX_CHAOS_PAUSE_MS: u64 = 800;
/// The chaos draws have their own stream, so the storm does not shift when the protocol's
/// own randomness changes.
const CHAOS_STREAM: u64 = 0xc4a05;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Watch the safety checks hold at every step through random faults",
        "See the cluster settle on one leader and one log once the storm heals",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt:
            "During the storm there is sometimes no leader for a while. Which property is broken by that?",
        answers: &[
            "None of the safety ones: only progress pauses",
            "Safety: two leaders in one term",
            "Log matching",
        ],
        correct: 0,
        why: "Raft gives up progress when it must, never agreement.",
    },
};

pub fn info() -> Listing {
    let mut params = vec![
        servers_param(3),
        int_param(
            "fault_count",
            "Faults in the storm",
            "How many crashes, pauses, partitions, one-way cuts and held links the seed throws at the cluster before the heal.",
            "12",
            0,
            40,
            "",
        ),
        int_param(
            "chaos_ms",
            "Storm length",
            "When the storm ends: every cut heals, held links let go and crashed servers restart.",
            "3000",
            500,
            10_000,
            "ms",
        ),
        int_param(
            "loss_percent",
            "Message loss",
            "Chance that any one message is lost on the way, for the whole run.",
            "3",
            0,
            30,
            "%",
        ),
        int_param(
            "duplicate_percent",
            "Message duplication",
            "Chance that a message arrives twice, each copy with its own delay.",
            "3",
            0,
            30,
            "%",
        ),
        int_param(
            "latency_ms_max",
            "Latency (max)",
            "Each message takes 1 ms up to this long, drawn at random — so messages on one link overtake each other.",
            "15",
            1,
            100,
            "ms",
        ),
    ];
    params.extend(common_params());
    Listing {
        sections: "§6",
        title: "Raft in a storm: random faults, then heal",
        summary: "The seed draws a storm: servers crash and come back, freeze in pauses, get partitioned or cut off one way, while the network loses, duplicates and reorders messages and a client keeps writing. At the end of the storm everything heals. The safety checks must hold at every step, and afterwards the cluster must settle on one leader and one log. Change the seed for a different storm.",
        params,
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let mut verdicts = promised_verdicts(bug(params));
    // Settling after the heal needs one election to succeed and its leader to keep the
    // others quiet: a fixed or narrow election timeout can split the vote term after term (as
    // raft-split-vote shows), and heartbeats slower than the timeout start elections under a
    // live leader.
    let (min, max) = election_timeouts_ms(params, 150);
    let settles = max >= min + MIN_SPREAD_MS && num(params, "heartbeat_ms", 50) * 2 < min;
    if bug(params) == RaftBug::None && settles {
        verdicts.push((CONVERGES_AFTER_HEAL.0.to_string(), Verdict::Holds));
    }
    Expectation {
        outcome: Vec::new(),
        verdicts,
    }
}

/// The storm for one seed over the servers `ids`: faults at true times (ms), ending with the
/// heal at `chaos_ms`.
pub fn storm(seed: u64, ids: &[NodeId], fault_count: u64, chaos_ms: u64) -> Vec<(u64, Fault)> {
    let mut rng = SimRng::seed_from_u64(seed);
    rng.set_stream(CHAOS_STREAM);
    let servers = ids.len() as u32;
    let mut times: Vec<u64> = (0..fault_count).map(|_| rng.gen_range(100..chaos_ms)).collect();
    sort(&mut times);
    let mut out = Vec::new();
    // Until when each server is down (restarts are placed when the crash is drawn), by its
    // place in `ids`.
    let mut down_until: Vec<Option<u64>> = vec![None; ids.len()];
    let mut held: VecSet<(NodeId, NodeId)> = VecSet::new();
    let pick_place = |rng: &mut SimRng| rng.gen_range(0..servers) as usize;
    let pick = |rng: &mut SimRng| ids[pick_place(rng)];
    for at in times {
        for d in down_until.iter_mut() {
            if d.is_some_and(|until| until <= at) {
                *d = None;
            }
        }
        match rng.gen_range(0..5u32) {
            0 => {
                let place = pick_place(&mut rng);
                let node = ids[place];
                if down_until[place].is_some() {
                    continue;
                }
                out.push((at, Fault::Crash { node }));
                let back = at + rng.gen_range(50..=1_500u64);
                if back < chaos_ms {
                    out.push((back, Fault::Restart { node }));
                    down_until[place] = Some(back);
                } else {
                    down_until[place] = Some(u64::MAX);
                }
            }
            1 => {
                let node = pick(&mut rng);
                let duration_ms = rng.gen_range(10..=MAX_CHAOS_PAUSE_MS);
                out.push((at, Fault::Pause { node, duration_ms }));
            }
            2 => {
                // A random proper, non-empty subset of the servers, cut off from the rest
                // (the client stays with the rest).
                let mut side: Vec<NodeId> = ids.iter().copied().filter(|_| rng.gen_bool(0.5)).collect();
                if side.is_empty() || side.len() == servers as usize {
                    side = vec![pick(&mut rng)];
                }
                if side.len() < servers as usize {
                    out.push((at, Fault::Partition { side }));
                }
                if rng.gen_bool(0.5) {
                    out.push((
                        (at + rng.gen_range(100..=1_000u64)).min(chaos_ms - 1),
                        Fault::Heal,
                    ));
                }
            }
            3 => {
                let from = pick(&mut rng);
                let to = pick(&mut rng);
                if from != to {
                    out.push((at, Fault::CutLink { from, to }));
                }
            }
            _ => {
                let from = pick(&mut rng);
                let to = pick(&mut rng);
                if from != to && held.insert((from, to)) {
                    out.push((at, Fault::HoldLink { from, to }));
                    let later = at + rng.gen_range(10..=500u64);
                    if later < chaos_ms {
                        out.push((later, Fault::ReleaseLink { from, to }));
                        held.remove(&(from, to));
                    }
                }
            }
        }
    }
    // The heal: every cut restored, every held link let go, every crashed server back.
    out.push((chaos_ms, Fault::Heal));
    for (from, to) in held {
        out.push((chaos_ms, Fault::ReleaseLink { from, to }));
    }
    for (&node, d) in ids.iter().zip(&down_until) {
        if d.is_some_and(|until| until >= chaos_ms) {
            out.push((chaos_ms, Fault::Restart { node }));
        }
    }
    // Stable: faults at the same time keep the order they were drawn in.
    sort_by_key(&mut out, |(at, _)| *at);
    out
}

pub fn setup(params: &Params, seed: u64) -> Setup {
    let servers = num(params, "servers", 5) as u32;
    let chaos_ms = num(params, "chaos_ms", 3_000);
    let fault_count = num(params, "fault_count", 12);
    let scripted = move |cast: &RaftCast| storm(seed, &cast.servers, fault_count, chaos_ms);
    let (mut setup, mut world, _) = build(
        params,
        ClusterPlan {
            servers,
            writes: 20,
            client_start_ms: 300,
            stop_at_ms: chaos_ms + SETTLE_MS,
            scripted: Some(Box::new(scripted)),
            ..ClusterPlan::default()
        },
    );
    let percent = |key: &str, default: u64| Ratio {
        numerator: num(params, key, default).min(100) as u32,
        denominator: 100,
    };
    setup.link = LinkConfig {
        loss: percent("loss_percent", 3),
        duplicate: percent("duplicate_percent", 3),
        ..LinkConfig::reliable(MS_US, num(params, "latency_ms_max", 15).max(1) * MS_US)
    };
    world.converge_after_us = Some(chaos_ms * MS_US);
    setup.set_world(world);
    super::raft_beats::chaos(&mut setup, chaos_ms * MS_US, bug(params) != RaftBug::None);
    setup
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Five server ids, as a setup hands them out.
    fn five() -> Vec<NodeId> {
        let mut setup = Setup::new(LinkConfig::reliable(MS_US, MS_US));
        (0..5).map(|_| setup.reserve()).collect()
    }

    #[test]
    fn the_storm_is_a_function_of_the_seed() {
        assert_eq!(storm(7, &five(), 12, 3_000), storm(7, &five(), 12, 3_000));
        assert_ne!(storm(7, &five(), 12, 3_000), storm(8, &five(), 12, 3_000));
    }

    #[test]
    fn every_server_crashed_in_the_storm_is_restarted_by_the_heal() {
        for seed in 0..200 {
            let mut down = BTreeSet::new();
            for (_, f) in storm(seed, &five(), 30, 3_000) {
                match f {
                    Fault::Crash { node } => assert!(down.insert(node), "seed {seed}: {node} crashed twice"),
                    Fault::Restart { node } => assert!(down.remove(&node), "seed {seed}: {node} not down"),
                    _ => {}
                }
            }
            assert!(
                down.is_empty(),
                "seed {seed}: still down after the heal: {down:?}"
            );
        }
    }

    #[test]
    fn the_storm_ends_with_a_heal_at_its_end_time() {
        let s = storm(3, &five(), 12, 2_000);
        assert!(s.iter().all(|(at, _)| *at <= 2_000));
        assert!(s.iter().any(|(at, f)| *at == 2_000 && *f == Fault::Heal));
    }
}
