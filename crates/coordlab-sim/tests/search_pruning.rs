//! The search skips a schedule that cannot differ from the undisturbed run: one pause in
//! which its participant has nothing to do. Checked here by running every such schedule
//! anyway, in scenarios of three chapters: each breaks exactly what the undisturbed run
//! breaks, and ends with the same outcome. Each of them skips some.

use coordlab_sim::scenarios::{self, RunRequest};
use coordlab_sim::search::{without_story_faults, SearchKind, SearchSpec, Space};
use coordlab_sim::{Limits, Recording};

fn space(line: &str) -> Space {
    let base = RunRequest::parse_line(line).unwrap();
    let (base, _) = without_story_faults(&base).unwrap();
    Space::new(SearchSpec {
        base,
        max_faults: 1,
        kinds: vec![SearchKind::Pause, SearchKind::Crash],
        properties: Vec::new(),
        pause_ms: None,
    })
    .unwrap()
}

/// What a run ends with: every property's verdict and first violation, and the outcome.
fn ending(request: &RunRequest) -> String {
    let trace = scenarios::run(request, Limits::default(), Recording::Summary).unwrap();
    let verdicts: Vec<String> = trace
        .properties
        .iter()
        .map(|p| format!("{} {:?} {:?}", p.name, p.verdict, p.first_violation_seq))
        .collect();
    format!("{verdicts:?} {:?}", trace.outcome)
}

fn skipped_schedules_end_as_the_undisturbed_run(line: &str) {
    let space = space(line);
    let undisturbed = ending(&space.request(&[]));
    let mut skipped = 0;
    for atom in &space.atoms {
        if space.cannot_differ(atom) {
            skipped += 1;
            let with = ending(&space.request(std::slice::from_ref(atom)));
            assert_eq!(
                with, undisturbed,
                "{line}: {atom:?} was skipped but changes the run"
            );
        }
    }
    assert!(
        skipped > 0,
        "{line}: none of {} single faults skipped",
        space.atoms.len()
    );
}

#[test]
fn a_skipped_pause_changes_nothing_in_the_zombie_worker() {
    skipped_schedules_end_as_the_undisturbed_run("zombie-worker fencing=none 1 -");
    skipped_schedules_end_as_the_undisturbed_run("zombie-worker fencing=fence-on-takeover 1 -");
}

#[test]
fn a_skipped_pause_changes_nothing_in_a_database_lock() {
    skipped_schedules_end_as_the_undisturbed_run("lost-update lock=row-lock 1 -");
}

#[test]
fn a_skipped_pause_changes_nothing_in_a_raft_election() {
    skipped_schedules_end_as_the_undisturbed_run("raft-election - 1 -");
}
