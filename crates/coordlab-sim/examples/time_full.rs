use coordlab_sim::scenarios::{run, Params};
use coordlab_sim::{Limits, Recording, RunRequest};
use std::time::Instant;
fn main() {
    for id in ["consensus-lock", "raft-chaos", "raft-election", "zombie-worker"] {
        for rec in [Recording::Full, Recording::Lines, Recording::Summary] {
            let req = RunRequest {
                scenario: id.into(),
                params: Params::new(),
                seed: 1,
                actions: vec![],
            };
            let t = Instant::now();
            let mut n = 0;
            for _ in 0..5 {
                n = run(&req, Limits::default(), rec).unwrap().entries.len();
            }
            println!(
                "{id:16} {rec:?}: {:.1} ms  ({n} entries)",
                t.elapsed().as_secs_f64() * 1000.0 / 5.0
            );
        }
    }
}
