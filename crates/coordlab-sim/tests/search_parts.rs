//! The search as the player runs it in a Web Worker: part by part, each message text, until a
//! witness or the bounded claim — the same answer, in the same words, as one whole run.

use coordlab_sim::search::{
    part_message, run_message, without_story_faults, PartReply, SearchKind, SearchSpec, Space,
};
use coordlab_sim::RunRequest;

/// Drives a search to its end in parts of at most `per_part` schedules, as the player does,
/// passing every message and reply as text; returns the last reply and the parts it took.
fn search(line: &str, per_part: u32) -> (PartReply, u32) {
    // As the player has it: every parameter resolved (the story's pause at its default).
    let mut base = RunRequest::parse_line(line).unwrap();
    let info = coordlab_sim::scenarios::find(&base.scenario).unwrap().info();
    base.params = coordlab_sim::scenarios::resolve_params(&info, &base.params).unwrap();
    let mut from = 0;
    let mut parts = 0;
    loop {
        let mut left = per_part;
        let message = part_message(&base, 1, &[SearchKind::Pause], from);
        let reply = run_message(&message, || {
            left -= 1;
            left > 0
        });
        parts += 1;
        let reply = PartReply::parse(&reply.text());
        match reply {
            PartReply::Progress { done, total } => {
                assert!(done > from && done < total, "{done} of {total} after {from}");
                from = done;
            }
            other => return (other, parts),
        }
    }
}

#[test]
fn an_unfenced_worker_yields_a_one_pause_witness_with_the_story_pause_off() {
    let (reply, _) = search("zombie-worker fencing=none 1 -", 500);
    let PartReply::Found {
        property,
        at_seq,
        run,
        chain,
    } = reply
    else {
        panic!("expected a witness, got {reply:?}");
    };
    assert_eq!(run.params.get("pause_ms").map(String::as_str), Some("0"));
    assert_eq!(run.actions.len(), 1, "{run:?}");
    let trace = coordlab_sim::run(&run, Default::default(), coordlab_sim::Recording::Lines).unwrap();
    let broken = trace.properties.iter().find(|p| p.name == property).unwrap();
    assert_eq!(broken.first_violation_seq, Some(at_seq));
    assert_eq!(chain, coordlab_sim::search::chain(&trace, at_seq));
    assert!(chain.len() >= 3 && chain.last().unwrap().0 == at_seq, "{chain:?}");
}

#[test]
fn a_fenced_worker_gives_the_bounded_claim_in_the_command_lines_words() {
    let line = "zombie-worker fencing=fence-on-takeover 1 -";
    let (reply, parts) = search(line, 400);
    let PartReply::Clean(claims) = reply else {
        panic!("expected the bounded claim, got {reply:?}");
    };
    assert!(parts > 1, "the search ran in parts");
    let (base, _) = without_story_faults(&RunRequest::parse_line(line).unwrap()).unwrap();
    let space = Space::new(SearchSpec {
        base,
        max_faults: 1,
        kinds: vec![SearchKind::Pause],
        properties: Vec::new(),
        pause_ms: None,
    })
    .unwrap();
    let mut expected =
        vec!["The story's own fault is off (pause_ms=0): the search placed every fault itself.".to_string()];
    expected.extend(space.checked.iter().map(|p| space.claim(p, space.len())));
    assert_eq!(claims, expected);
}

#[test]
fn a_bad_message_is_a_failure_that_says_why_not_a_panic() {
    for message in [
        "",
        "x 1 pause zombie-worker - 1 -",
        "0 1 sleep zombie-worker - 1 -",
        "0 9 pause zombie-worker - 1 -",
        "0 1 pause no-such - 1 -",
    ] {
        let reply = run_message(message, || false);
        assert!(matches!(reply, PartReply::Failed(_)), "{message}: {reply:?}");
        assert_eq!(PartReply::parse(&reply.text()), reply);
    }
    assert!(matches!(PartReply::parse("what"), PartReply::Failed(_)));
}
