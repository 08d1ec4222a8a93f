//! Injecting a fault at step k keeps entries before k and re-simulates the rest.

use crate::common::{self, full};
use coordlab_sim::properties::Verdict;
use coordlab_sim::trace::{EventKind, NodeStatus};
use coordlab_sim::{run, Action, Fault, Limits, NodeId, Recording, SimError};
use serde_json::json;

#[test]
fn entries_before_the_fork_are_unchanged() {
    let base = full("none", 9, vec![]);
    for k in [0u32, 3, 7, 12] {
        let forked = full(
            "none",
            9,
            vec![Action {
                at_step: k,
                fault: Fault::Crash { node: NodeId(2) },
            }],
        );
        let k = k as usize;
        assert_eq!(&forked.entries[..k], &base.entries[..k], "fork at {k}");
        assert_eq!(forked.entries[k].kind, EventKind::Fault);
        assert_ne!(forked.fingerprint(), base.fingerprint());
    }
}

#[test]
fn crashing_a_worker_before_it_writes_saves_the_other_debit() {
    // Crash worker-2 right after both have read; only worker-1's debit lands: ₹70, consistent.
    let base = full("none", 4, vec![]);
    let k = base
        .entries
        .iter()
        .filter(|e| e.text.contains("row: balance="))
        .nth(1)
        .unwrap()
        .seq
        + 1;
    let t = full(
        "none",
        4,
        vec![Action {
            at_step: k,
            fault: Fault::Crash { node: NodeId(2) },
        }],
    );
    assert_eq!(t.outcome["balance"], json!(70));
    assert_eq!(t.outcome["committed_debits"], json!(1));
    let safe = t.properties.iter().find(|p| p.name == "no-lost-update").unwrap();
    assert_eq!(safe.verdict, Verdict::Holds);
    let live = t
        .properties
        .iter()
        .find(|p| p.name == "every-debit-finishes")
        .unwrap();
    assert_eq!(live.verdict, Verdict::Violated);
}

#[test]
fn a_crashed_lock_holder_releases_its_lock_and_restart_finishes_the_job() {
    let base = full("row-lock", 2, vec![]);
    // Crash whichever worker got the lock, right after it received the row.
    let got = base
        .entries
        .iter()
        .find(|e| e.text.contains("row: balance=100"))
        .unwrap();
    let holder = got.nodes[0];
    let k = got.seq + 1;
    let t = full(
        "row-lock",
        2,
        vec![
            Action {
                at_step: k,
                fault: Fault::Crash { node: holder },
            },
            Action {
                at_step: k + 4,
                fault: Fault::Restart { node: holder },
            },
        ],
    );
    assert!(
        t.entries.iter().any(|e| e.kind == EventKind::PeerDown),
        "the database notices the dropped connection"
    );
    assert_eq!(t.outcome["balance"], json!(40));
    assert!(
        t.properties.iter().all(|p| p.verdict == Verdict::Holds),
        "{:?}",
        t.properties
    );
}

#[test]
fn a_paused_worker_resumes_with_its_old_beliefs() {
    let base = full("none", 6, vec![]);
    let k = base
        .entries
        .iter()
        .find(|e| e.text.contains("row: balance=100"))
        .unwrap()
        .seq
        + 1;
    let who = base.entries[k as usize - 1].nodes[0];
    let t = full(
        "none",
        6,
        vec![Action {
            at_step: k,
            fault: Fault::Pause {
                node: who,
                duration_ms: 200,
            },
        }],
    );
    let paused = t.entries[k as usize].snapshot.as_ref().unwrap();
    assert!(matches!(
        paused.nodes[who.index()].status,
        NodeStatus::Paused { .. }
    ));
    assert!(t.entries.iter().any(|e| e.kind == EventKind::Resume));
    // It still writes ₹70 computed from its pre-pause read: the update is still lost.
    assert_eq!(t.outcome["balance"], json!(70));
}

#[test]
fn invalid_actions_are_refused_with_a_message() {
    let mut req = common::request(
        "none",
        1,
        vec![Action {
            at_step: 1,
            fault: Fault::Crash { node: NodeId(9) },
        }],
    );
    match run(&req, Limits::default(), Recording::Full) {
        Err(SimError::BadAction(msg)) => {
            assert!(msg.contains("no node 9") && msg.contains("worker-1"), "{msg}")
        }
        other => panic!("expected BadAction, got {other:?}"),
    }
    req.actions.clear();
    req.params.insert("lock".into(), "mutex".into());
    let err = run(&req, Limits::default(), Recording::Full)
        .unwrap_err()
        .to_string();
    assert!(err.contains("none, row-lock, conditional-update"), "{err}");
}

#[test]
fn limits_bound_every_run() {
    let limits = Limits {
        max_events: 5,
        max_time_us: u64::MAX,
    };
    let t = run(&common::request("none", 1, vec![]), limits, Recording::Full).unwrap();
    assert_eq!(t.entries.len(), 5);
    assert_eq!(t.stop, coordlab_sim::trace::StopReason::MaxEvents);
}

#[test]
fn actions_beyond_the_end_are_reported_unapplied() {
    let late = Action {
        at_step: 500,
        fault: Fault::Crash { node: NodeId(1) },
    };
    let t = full("none", 1, vec![late.clone()]);
    assert_eq!(t.unapplied_actions, vec![late]);
    let on_time = full(
        "none",
        1,
        vec![Action {
            at_step: 3,
            fault: Fault::Crash { node: NodeId(1) },
        }],
    );
    assert!(on_time.unapplied_actions.is_empty());
}

#[test]
fn an_action_at_the_event_limit_is_not_consumed() {
    let limits = Limits {
        max_events: 4,
        max_time_us: u64::MAX,
    };
    let req = common::request(
        "none",
        1,
        vec![Action {
            at_step: 4,
            fault: Fault::Crash { node: NodeId(1) },
        }],
    );
    let t = run(&req, limits, Recording::Full).unwrap();
    assert_eq!(t.entries.len(), 4);
    assert_eq!(t.unapplied_actions.len(), 1);
}
