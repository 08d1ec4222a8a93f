//! Cross-target determinism: on wasm32 the simulator must produce exactly the traces it
//! produces natively. This test and the native golden tests (crates/coordlab-sim/tests/
//! golden.rs and library_golden.rs) check the same fingerprint files: every scenario with its
//! defaults, every option of every choice parameter and a fault script per scenario.
//!
//! Run: CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!      cargo test -p coordlab-wasm-check --target wasm32-unknown-unknown --test wasm_fingerprint
#![cfg(target_arch = "wasm32")]

use coordlab_sim::kernel::faults::parse_script;
use coordlab_sim::scenarios::Params;
use coordlab_sim::{run, Limits, Recording, RunRequest};
use wasm_bindgen_test::wasm_bindgen_test;

const LOST_UPDATE: &str = include_str!("../../coordlab-sim/tests/golden/fingerprints.txt");
const LIBRARY: &str = include_str!("../../coordlab-sim/tests/golden/library-fingerprints.txt");

fn fingerprint(request: &RunRequest) -> String {
    let trace = run(request, Limits::default(), Recording::Full).expect("golden request is valid");
    format!("{:016x}", trace.fingerprint())
}

#[wasm_bindgen_test]
fn wasm_traces_of_every_scenario_have_the_native_fingerprints() {
    let mut checked = 0;
    for line in LIBRARY.lines().filter(|l| !l.trim().is_empty()) {
        let (request, want) = line.rsplit_once(' ').expect("request and fingerprint");
        let request = RunRequest::parse_line(request).expect("golden request line parses");
        assert_eq!(
            fingerprint(&request),
            want,
            "wasm32 differs from native for `{line}`"
        );
        checked += 1;
    }
    assert!(checked >= 100, "expected the full library, checked {checked}");
}

#[wasm_bindgen_test]
fn wasm_lost_update_traces_have_the_native_fingerprints() {
    let mut checked = 0;
    for line in LOST_UPDATE.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 4, "malformed golden line `{line}`");
        let mut params = Params::new();
        params.insert("lock".to_string(), fields[0].to_string());
        let actions = if fields[2] == "-" {
            Vec::new()
        } else {
            parse_script(fields[2]).expect("golden script parses")
        };
        let request = RunRequest {
            scenario: "lost-update".to_string(),
            params,
            seed: fields[1].parse().expect("seed"),
            actions,
        };
        assert_eq!(
            fingerprint(&request),
            fields[3],
            "wasm32 differs from native for `{line}`"
        );
        checked += 1;
    }
    assert!(checked >= 10, "expected the full golden set, checked {checked}");
}
