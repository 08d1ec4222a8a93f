//! Regression tests exported by `coordlab search zombie-worker --export-test`. Each runs a schedule
//! the search found and asserts that it still breaks the property: a failure here means
//! the schedule no longer breaks it (the design was fixed, or the model changed).

use coordlab_sim::properties::Verdict;
use coordlab_sim::{Limits, Recording, RunRequest};

/// Runs the request written as `scenario params seed faults` (`RunRequest::to_line`)
/// and panics unless `property` is violated.
pub fn assert_breaks(line: &str, property: &str) {
    let request = RunRequest::parse_line(line).expect("an exported request line");
    let trace = coordlab_sim::run(&request, Limits::default(), Recording::Summary).expect("the run is valid");
    let report = trace
        .properties
        .iter()
        .find(|p| p.name == property)
        .expect("the scenario checks the property");
    assert_eq!(
        report.verdict,
        Verdict::Violated,
        "{property} no longer breaks under {line}"
    );
}

/// Found by the search: `5@pause:1:22510` breaks it, at step 45.
#[test]
fn zombie_worker_no_double_debit_breaks() {
    assert_breaks(
        "zombie-worker fencing=none,pause_ms=0 1 5@pause:1:22510",
        "no-double-debit",
    );
}
