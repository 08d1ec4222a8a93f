//! Unit tests of the fenced resource (`protocols/lease/fenced_resource.rs`), the ledger row that
//! remembers the highest fencing token, one rule each: a write with the token predicate is
//! accepted at or above the highest token and rejected below it; an unfenced write lands
//! whatever it carries; a heartbeat mark only raises the highest token; reads of the token
//! and of the job's progress; what is on disk. Each feeds one input and asserts on the effects.

use coordlab_sim::kernel::ids::{FencingToken, NodeId};
use coordlab_sim::kernel::participant::{Effect, Label, Participant};
use coordlab_sim::kernel::testing::{self, narration, persisted, timers_set};
use coordlab_sim::protocols::lease::fenced_resource::{
    FencedResource, LedgerIntro, ResourceDurable, WriteRecord,
};
use coordlab_sim::protocols::lease::lease_msg::{LeaseMsg, RejectReason, WriteCheck};

const LEDGER: NodeId = NodeId(0);
const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const NAMES: [&str; 3] = ["ledger", "worker-A", "worker-B"];

type Fx = Vec<Effect<FencedResource>>;
type R = testing::Harness<FencedResource>;

/// A ledger row at ₹100 whose highest token so far is `highest` (0: none yet).
fn ledger(highest: u64) -> R {
    let mut durable = FencedResource::initial(100);
    durable.last_token = FencingToken(highest);
    let node = <FencedResource as Participant>::recover(&LedgerIntro::RemembersHighest, LEDGER, &durable);
    testing::Harness::new(LEDGER, node, &NAMES)
}

fn sent(fx: &Fx) -> Vec<(NodeId, LeaseMsg)> {
    testing::sent(fx)
}

fn write(r: &mut R, from: NodeId, step: u32, token: u64, check: WriteCheck) -> Fx {
    r.deliver(
        from,
        LeaseMsg::Write {
            step,
            amount: 10,
            token: FencingToken(token),
            check,
        },
    )
}

fn fenced(r: &mut R, from: NodeId, step: u32, token: u64) -> Fx {
    write(r, from, step, token, WriteCheck::TokenPredicate)
}

fn touch(r: &mut R, from: NodeId, token: u64) -> Fx {
    r.deliver(
        from,
        LeaseMsg::Touch {
            token: FencingToken(token),
        },
    )
}

fn result(step: u32, token: u64, accepted: bool, reason: Option<RejectReason>) -> LeaseMsg {
    LeaseMsg::WriteResult {
        step,
        token: FencingToken(token),
        accepted,
        reason,
    }
}

fn only_persisted(fx: &Fx) -> ResourceDurable {
    let p = persisted(fx);
    assert_eq!(p.len(), 1, "exactly one persist: {fx:?}");
    p[0].clone()
}

#[test]
fn a_fenced_write_at_exactly_the_highest_token_is_accepted() {
    let mut r = ledger(33);
    let fx = fenced(&mut r, A, 1, 33);
    assert_eq!(sent(&fx), vec![(A, result(1, 33, true, None))]);
    let d = &r.node.durable;
    assert_eq!((d.balance, d.last_token, d.steps_done), (90, FencingToken(33), 1));
    assert_eq!(
        d.writes,
        vec![WriteRecord {
            worker: A,
            step: 1,
            token: FencingToken(33),
            amount: 10,
            accepted: true,
            reason: None,
            highest_before: FencingToken(33),
            checked: true,
        }]
    );
    assert_eq!(
        only_persisted(&fx),
        r.node.durable,
        "applied and on disk before the answer"
    );
    assert!(timers_set(&fx).is_empty());
}

#[test]
fn a_fenced_write_above_the_highest_token_is_accepted_and_raises_it() {
    let mut r = ledger(33);
    let fx = fenced(&mut r, B, 1, 34);
    assert_eq!(sent(&fx), vec![(B, result(1, 34, true, None))]);
    assert_eq!(r.node.durable.last_token, FencingToken(34));
    assert_eq!(only_persisted(&fx).last_token, FencingToken(34));
    assert!(narration(&fx).contains("UPDATE 1: balance ₹90, last_token 34"));
}

#[test]
fn a_fenced_write_below_the_highest_token_is_rejected_and_changes_nothing_but_the_log() {
    let mut r = ledger(34);
    let fx = fenced(&mut r, A, 2, 33);
    let reason = RejectReason::StaleToken {
        token: FencingToken(33),
        highest: FencingToken(34),
        by_writer: false,
    };
    assert_eq!(sent(&fx), vec![(A, result(2, 33, false, Some(reason.clone())))]);
    let d = only_persisted(&fx);
    assert_eq!(
        (d.balance, d.last_token, d.steps_done),
        (100, FencingToken(34), 0)
    );
    assert_eq!(
        d.writes
            .last()
            .map(|w| (w.accepted, w.reason.clone(), w.highest_before)),
        Some((false, Some(reason), FencingToken(34)))
    );
    assert!(narration(&fx).contains("34 <= 33 is false"));
    assert!(narration(&fx).contains("UPDATE 0: the balance stays ₹100"));
}

#[test]
fn an_unfenced_stale_write_lands_anyway_without_lowering_the_highest_token() {
    let mut r = ledger(34);
    let fx = write(&mut r, A, 2, 33, WriteCheck::Unfenced);
    assert_eq!(sent(&fx), vec![(A, result(2, 33, true, None))]);
    let d = &r.node.durable;
    assert_eq!((d.balance, d.last_token, d.steps_done), (90, FencingToken(34), 2));
    // The record shows it was stale: it carried less than the row had seen.
    let w = d.writes.last().unwrap();
    assert!(w.accepted && w.token < w.highest_before);
    assert!(narration(&fx).contains("nothing checks it, so it lands"));
    assert!(narration(&fx).contains("A stale holder just changed the account"));
}

#[test]
fn an_unfenced_write_with_no_token_lands_and_leaves_the_token_alone() {
    let mut r = ledger(0);
    let fx = write(&mut r, A, 1, 0, WriteCheck::Unfenced);
    assert_eq!(sent(&fx), vec![(A, result(1, 0, true, None))]);
    assert_eq!(r.node.durable.balance, 90);
    assert_eq!(r.node.durable.last_token, FencingToken(0));
    assert_eq!(
        narration(&fx),
        "The ledger applies worker-A's step 1, which carries no token: balance ₹90."
    );
    let w = r.node.durable.writes.last().unwrap();
    assert!(w.carries_no_token() && !w.checked);
    assert_eq!(w.token_text(), "no token");
}

#[test]
fn a_step_applied_twice_is_debited_twice_and_said_so() {
    let mut r = ledger(0);
    fenced(&mut r, A, 1, 33);
    let fx = fenced(&mut r, B, 1, 34);
    assert_eq!(sent(&fx), vec![(B, result(1, 34, true, None))]);
    assert_eq!(r.node.durable.balance, 80);
    assert!(narration(&fx).contains("already been applied by worker-A with token 33"));
    assert!(narration(&fx).contains("debited for it twice"));
}

#[test]
fn writes_without_a_token_say_no_token_never_token_0() {
    let mut r = ledger(0);
    let msg = LeaseMsg::Write {
        step: 1,
        amount: 10,
        token: FencingToken(0),
        check: WriteCheck::Unfenced,
    };
    assert_eq!(
        msg.label(),
        "step 1, ₹10, no token: UPDATE account_state SET balance_minor = balance_minor - 1000 WHERE account_id = 42"
    );
    write(&mut r, A, 1, 0, WriteCheck::Unfenced);
    let fx = write(&mut r, B, 1, 0, WriteCheck::Unfenced);
    let said = narration(&fx);
    assert!(
        said.contains("already been applied by worker-A with no token"),
        "{said}"
    );
    assert!(!said.contains("token 0"), "{said}");
    // A checked write may carry a real token 0 (ZooKeeper's first sequence number).
    let checked = LeaseMsg::Write {
        step: 1,
        amount: 10,
        token: FencingToken(0),
        check: WriteCheck::TokenPredicate,
    };
    assert!(checked.label().contains("token 0: "), "{}", checked.label());
}

#[test]
fn the_fenced_write_is_one_whole_statement_and_says_why_it_is_less_or_equal() {
    let msg = LeaseMsg::Write {
        step: 2,
        amount: 10,
        token: FencingToken(33),
        check: WriteCheck::TokenPredicate,
    };
    assert_eq!(
        msg.label(),
        "step 2, ₹10, token 33: UPDATE account_state SET balance_minor = balance_minor - 1000, last_token = 33 WHERE account_id = 42 AND last_token <= 33"
    );
    let mut r = ledger(0);
    let first = fenced(&mut r, A, 1, 33);
    assert!(!narration(&first).contains("Why <="));
    let second = fenced(&mut r, A, 2, 33);
    assert!(narration(&second).contains("33 <= 33, so the row matches"));
    assert!(
        narration(&second).contains("Why <= where the curriculum writes <"),
        "{}",
        narration(&second)
    );
    // An equal token passes, so the note says what that demands of the grants.
    assert!(narration(&second).contains("no two grants may share a number"));
    // Said once, not at every equal write.
    assert!(!narration(&fenced(&mut r, A, 3, 33)).contains("Why <="));
}

#[test]
fn progress_is_the_highest_step_applied_and_rejected_writes_do_not_count() {
    let mut r = ledger(0);
    fenced(&mut r, A, 3, 33);
    fenced(&mut r, A, 2, 33);
    fenced(&mut r, A, 4, 32);
    assert_eq!(r.node.durable.steps_done, 3);
    let fx = r.deliver(B, LeaseMsg::ReadProgress);
    assert_eq!(sent(&fx), vec![(B, LeaseMsg::Progress { steps_done: 3 })]);
    assert!(persisted(&fx).is_empty());
    let fx = r.deliver(B, LeaseMsg::ReadToken);
    assert_eq!(
        sent(&fx),
        vec![(
            B,
            LeaseMsg::TokenIs {
                last_token: FencingToken(33)
            }
        )]
    );
    assert!(persisted(&fx).is_empty());
}

#[test]
fn a_touch_raises_the_highest_token_and_then_fences_out_older_writes() {
    let mut r = ledger(33);
    let fx = touch(&mut r, B, 34);
    assert!(sent(&fx).is_empty(), "a mark gets no answer");
    assert_eq!(only_persisted(&fx).last_token, FencingToken(34));
    assert_eq!(r.node.durable.balance, 100, "a mark debits nothing");
    assert!(r.node.durable.writes.is_empty(), "and is not a write");
    let fx = fenced(&mut r, A, 1, 33);
    assert!(matches!(
        sent(&fx)[..],
        [(A, LeaseMsg::WriteResult { accepted: false, .. })]
    ));
}

#[test]
fn a_touch_never_lowers_the_highest_token_nor_persists_when_it_changes_nothing() {
    let mut r = ledger(34);
    for (token, says) in [(34, "which the row already has"), (33, "older than the 34")] {
        let fx = touch(&mut r, A, token);
        assert!(persisted(&fx).is_empty() && sent(&fx).is_empty(), "touch {token}");
        assert_eq!(r.node.durable.last_token, FencingToken(34), "touch {token}");
        assert!(narration(&fx).contains(says), "touch {token}: {}", narration(&fx));
    }
}

#[test]
fn a_restart_brings_the_row_back_exactly_as_persisted() {
    let mut r = ledger(0);
    fenced(&mut r, A, 1, 33);
    let on_disk = only_persisted(&fenced(&mut r, A, 2, 33));
    let mut back = testing::Harness::new(
        LEDGER,
        <FencedResource as Participant>::recover(&LedgerIntro::RefusesBelowHighest, LEDGER, &on_disk),
        &NAMES,
    );
    assert_eq!(back.node.durable, r.node.durable);
    assert_eq!(back.node.intro, LedgerIntro::RefusesBelowHighest);
    let fx = back.start();
    assert!(sent(&fx).is_empty() && persisted(&fx).is_empty());
    assert!(narration(&fx)
        .contains("at ₹80 (balance_minor 8000, in paise) and refuses any write whose token is below"));
    // The recovered highest token still fences.
    assert!(matches!(
        sent(&fenced(&mut back, B, 3, 32))[..],
        [(B, LeaseMsg::WriteResult { accepted: false, .. })]
    ));
}

#[test]
fn a_run_whose_writes_carry_no_token_never_says_token_0() {
    use coordlab_sim::{run, Limits, Recording, RunRequest};
    let request = RunRequest {
        scenario: "duplicate-job".into(),
        params: Default::default(),
        seed: 1,
        actions: vec![],
    };
    let t = run(&request, Limits::default(), Recording::Full).unwrap();
    let said = |needle: &str| {
        t.entries
            .iter()
            .any(|e| e.text.contains(needle) || e.notes.iter().any(|n| n.contains(needle)))
    };
    assert!(said("step 1, ₹30, no token: UPDATE account_state"));
    assert!(said("which carries no token"));
    assert!(!said("token 0"));
    let last = t.entries.iter().rev().find_map(|e| e.snapshot.as_ref()).unwrap();
    let writes = last.tables.iter().find(|t| t.title == "writes").unwrap();
    assert!(
        writes.rows.iter().all(|r| r[2] == "no token"),
        "{:?}",
        writes.rows
    );
}

fn with_key(r: &mut R, from: NodeId) -> Fx {
    r.deliver(
        from,
        LeaseMsg::WriteWithRunKey {
            step: 1,
            amount: 10,
            token: FencingToken(0),
            check: WriteCheck::Unfenced,
            key: "nightly:2025-03-14".into(),
        },
    )
}

#[test]
fn a_debit_with_a_run_key_commits_both_and_a_second_one_rolls_back_entirely() {
    let mut r = ledger(0);
    let fx = with_key(&mut r, A);
    assert_eq!(sent(&fx), vec![(A, result(1, 0, true, None))]);
    let d = only_persisted(&fx);
    assert_eq!(d.balance, 90);
    assert_eq!(d.runs.get(&"nightly:2025-03-14".to_string()), Some(&A));
    let fx = with_key(&mut r, B);
    let key = "nightly:2025-03-14".to_string();
    assert_eq!(
        sent(&fx),
        vec![(B, result(1, 0, false, Some(RejectReason::RunKeyTaken { key })))]
    );
    let d = only_persisted(&fx);
    assert_eq!(
        (d.balance, d.run_conflicts, d.writes.len()),
        (90, 1, 1),
        "nothing of B's transaction is kept"
    );
    assert!(narration(&fx).contains("The whole transaction rolls back"));
}

#[test]
fn a_refused_debit_takes_its_run_key_with_it() {
    let mut r = ledger(5);
    let fx = r.deliver(
        A,
        LeaseMsg::WriteWithRunKey {
            step: 1,
            amount: 10,
            token: FencingToken(4),
            check: WriteCheck::TokenPredicate,
            key: "nightly:2025-03-14".into(),
        },
    );
    assert!(!only_persisted(&fx).writes[0].accepted);
    assert!(
        r.node.durable.runs.is_empty(),
        "the key did not commit without its debit"
    );
}
