//! Holding one message in flight: it stays on the wire, undelivered, until its link is
//! released; then it arrives with a fresh delay. Nothing else changes.

use coordlab_sim::scenarios::Params;
use coordlab_sim::trace::EventKind;
use coordlab_sim::{run, Action, Fault, Limits, MsgId, Recording, RunRequest, Trace};

fn request(actions: Vec<Action>) -> RunRequest {
    RunRequest {
        scenario: "raft-election".into(),
        params: Params::new(),
        seed: 1,
        actions,
    }
}

fn full(actions: Vec<Action>) -> Trace {
    run(&request(actions), Limits::default(), Recording::Full).unwrap()
}

fn delivered_at(t: &Trace, id: MsgId) -> Option<usize> {
    t.entries
        .iter()
        .position(|e| e.kind == EventKind::Deliver && e.message.as_ref().is_some_and(|m| m.id == id))
}

#[test]
fn a_held_message_waits_until_its_link_is_released() {
    let base = full(vec![]);
    // The first step with a message in flight that is delivered later.
    let (step, msg) = base
        .entries
        .iter()
        .enumerate()
        .find_map(|(i, e)| {
            let snap = e.snapshot.as_ref()?;
            let m = snap.messages.iter().find(|m| m.deliver_us.is_some())?;
            Some((i, m.clone()))
        })
        .expect("some message is in flight");
    assert!(delivered_at(&base, msg.id).is_some_and(|k| k > step));

    let hold = Action {
        at_step: step as u32 + 1,
        fault: Fault::HoldMessage { msg: msg.id },
    };
    let held = full(vec![hold.clone()]);
    assert_eq!(
        &held.entries[..=step],
        &base.entries[..=step],
        "the fork keeps the past"
    );
    assert_eq!(
        delivered_at(&held, msg.id),
        None,
        "held forever without a release"
    );
    let later = held.entries[step + 1].snapshot.as_ref().unwrap();
    let still = later
        .messages
        .iter()
        .find(|m| m.id == msg.id)
        .expect("still on the wire");
    assert_eq!(still.deliver_us, None);

    let release_step = step as u32 + 20;
    let released = full(vec![
        hold,
        Action {
            at_step: release_step,
            fault: Fault::ReleaseLink {
                from: msg.from,
                to: msg.to,
            },
        },
    ]);
    let k = delivered_at(&released, msg.id).expect("delivered after the release");
    assert!(
        k > release_step as usize,
        "arrives only after the release (step {k})"
    );
    assert_eq!(
        released
            .entries
            .iter()
            .filter(|e| e.message.as_ref().is_some_and(|m| m.id == msg.id))
            .count(),
        1,
        "delivered exactly once: the stale delivery event is ignored"
    );
}

#[test]
fn holding_a_message_that_is_gone_says_so_and_changes_nothing_else() {
    let base = full(vec![]);
    let t = full(vec![Action {
        at_step: 30,
        fault: Fault::HoldMessage { msg: MsgId(0) },
    }]);
    assert!(
        t.entries[30]
            .notes
            .iter()
            .any(|n| n.contains("no longer on its way")),
        "{:?}",
        t.entries[30].notes
    );
    assert_eq!(t.entries.len(), base.entries.len() + 1);
}
