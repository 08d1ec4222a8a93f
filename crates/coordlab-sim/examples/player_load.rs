//! What the player does on the simulator's side before its first draw: record a run's lines
//! (no snapshots) and compute the state of the step it opens at. Run under
//! `valgrind --tool=callgrind` to count instructions, which (unlike wall time on a shared
//! machine) do not vary from run to run:
//!
//!   cargo build --release --example player_load -p coordlab-sim
//!   valgrind --tool=callgrind target/release/examples/player_load raft-chaos
use coordlab_sim::scenarios::{run, LazySnapshots, Params};
use coordlab_sim::{Limits, Recording, RunRequest};

fn main() {
    let id = std::env::args().nth(1).unwrap_or_else(|| "consensus-lock".into());
    let request = RunRequest {
        scenario: id.clone(),
        params: Params::new(),
        seed: 1,
        actions: vec![],
    };
    let trace = run(&request, Limits::default(), Recording::Lines).expect("the scenario runs");
    let mut states = LazySnapshots::new(&request, Limits::default()).expect("the scenario runs");
    let first = states.at(0).expect("a run has a first step");
    println!(
        "{id}: {} entries, first step shows {} nodes",
        trace.entries.len(),
        first.nodes.len()
    );
}
