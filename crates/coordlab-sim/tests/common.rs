#![allow(dead_code)]
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Action, Limits, Recording, RunRequest, Trace};

pub fn request(lock: &str, seed: u64, actions: Vec<Action>) -> RunRequest {
    let mut params = Params::new();
    params.insert("lock".to_string(), lock.to_string());
    RunRequest {
        scenario: "lost-update".to_string(),
        params,
        seed,
        actions,
    }
}

pub fn full(lock: &str, seed: u64, actions: Vec<Action>) -> Trace {
    run(&request(lock, seed, actions), Limits::default(), Recording::Full).expect("valid request")
}

pub fn mismatches(lock: &str, trace: &Trace) -> Vec<String> {
    expectation_for(&request(lock, trace.seed, vec![]))
        .unwrap()
        .mismatches(trace)
}
