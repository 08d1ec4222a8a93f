//! User inputs to Raft nodes (`input:<node>:<word>`) and the structured card data a Raft
//! snapshot carries (election-timer gauge, log cells, advertised inputs).

use coordlab_sim::kernel::faults::parse_script;
use coordlab_sim::scenarios::Params;
use coordlab_sim::trace::{NodeStatus, NodeView, Snapshot, Tone};
use coordlab_sim::{run, Limits, NodeId, Recording, RunRequest, Trace};

fn trace(scenario: &str, script: &str) -> Trace {
    let request = RunRequest {
        scenario: scenario.into(),
        params: Params::new(),
        seed: 1,
        actions: parse_script(script).expect("a valid script"),
    };
    run(&request, Limits::default(), Recording::Full).expect("a valid request")
}

fn snap(t: &Trace, step: usize) -> &Snapshot {
    t.entries[step].snapshot.as_deref().expect("full recording")
}

fn node(t: &Trace, step: usize, id: u32) -> &NodeView {
    &snap(t, step).nodes[id as usize]
}

/// A server's role (its card's word and tone) and its term (the `term` badge).
fn head(t: &Trace, step: usize, id: u32) -> (String, Tone, u64) {
    let s = &node(t, step, id).summary;
    let term = s
        .badges
        .iter()
        .find(|b| b.label == "term")
        .and_then(|b| b.value.parse().ok())
        .expect("a server's card has a term badge");
    (s.word.clone(), s.tone, term)
}

/// The first step at which S1 leads in the undisturbed run.
fn first_leader_step(t: &Trace) -> usize {
    (0..t.entries.len())
        .find(|&k| head(t, k, 0).0 == "leader")
        .expect("S1 becomes leader")
}

#[test]
fn forcing_a_timeout_makes_a_follower_a_candidate_in_the_next_term_at_once() {
    let base = trace("raft-election", "");
    let k = first_leader_step(&base) + 10;
    let before = head(&base, k - 1, 2);
    assert_eq!(
        (before.0.as_str(), before.1),
        ("follower", Tone::Quiet),
        "{before:?}"
    );
    let t = trace("raft-election", &format!("{k}@input:2:timeout"));
    let e = &t.entries[k];
    assert_eq!(e.text, "user input `timeout` to S3");
    let after = head(&t, k, 2);
    assert_eq!(
        (after.0.as_str(), after.1),
        ("candidate", Tone::Asking),
        "{after:?}"
    );
    assert_eq!(after.2, before.2 + 1);
    assert!(
        e.notes.iter().any(|n| n.contains("forced to run out")),
        "{:?}",
        e.notes
    );
    // It asks every other server for its vote, through the ordinary path.
    let asks = snap(&t, k)
        .messages
        .iter()
        .filter(|m| m.from == NodeId(2) && m.label.starts_with("RequestVote"))
        .count();
    assert_eq!(asks, 4);
    assert!(t.refused_actions.is_empty());
    // Everything before the fork is unchanged.
    assert_eq!(t.entries[..k], base.entries[..k]);
}

#[test]
fn a_leader_refuses_a_forced_timeout_and_the_run_carries_on_unchanged() {
    let base = trace("raft-election", "");
    let k = first_leader_step(&base) + 3;
    let t = trace("raft-election", &format!("{k}@input:0:timeout"));
    assert_eq!(t.refused_actions.len(), 1);
    assert!(
        t.refused_actions[0].reason.contains("is the leader"),
        "{:?}",
        t.refused_actions
    );
    assert_eq!(
        t.refused_actions[0].action.to_code(),
        format!("{k}@input:0:timeout")
    );
    assert!(t.entries[k]
        .notes
        .iter()
        .any(|n| n.contains("does not act on `timeout`")));
    assert_eq!(node(&t, k, 0), node(&base, k - 1, 0), "S1's state is untouched");
    // The rest of the run is the undisturbed one, one step later.
    let texts = |tr: &Trace, from: usize| -> Vec<String> {
        tr.entries[from..]
            .iter()
            .map(|e| format!("{} {}", e.time_us, e.text))
            .collect()
    };
    assert_eq!(texts(&t, k + 1), texts(&base, k));
}

#[test]
fn unknown_inputs_and_inputs_to_a_down_node_are_refused_not_panics() {
    let base = trace("raft-election", "");
    let k = first_leader_step(&base) + 3;
    let t = trace("raft-election", &format!("{k}@input:3:explode"));
    assert!(t.refused_actions[0].reason.contains("takes only `timeout`"));
    let t = trace("raft-election", &format!("{k}@crash:3;{k}@input:3:timeout"));
    assert_eq!(t.refused_actions.len(), 1);
    assert!(
        t.refused_actions[0].reason.contains("S4 is down"),
        "{:?}",
        t.refused_actions
    );
    let t = trace("raft-election", &format!("{k}@pause:3:50;{k}@input:3:timeout"));
    assert!(t.refused_actions[0].reason.contains("frozen"));
}

#[test]
fn a_scenario_without_inputs_rejects_the_script_with_a_clear_error() {
    let request = RunRequest {
        scenario: "lost-update".into(),
        params: Params::new(),
        seed: 1,
        actions: parse_script("3@input:1:write").unwrap(),
    };
    let err = run(&request, Limits::default(), Recording::Lines)
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not allow input faults"), "{err}");
}

#[test]
fn the_clients_write_input_sends_one_more_write_through_the_normal_path() {
    let base = trace("raft-partition", "");
    assert_eq!(base.outcome["writes_committed"], 4);
    // Before its first scheduled write (0.5 s), the client is idle: the input sends now.
    let k = first_leader_step(&base) + 5;
    assert!(snap(&base, k).time_us < 500_000);
    let t = trace("raft-partition", &format!("{k}@input:5:write"));
    let e = &t.entries[k];
    let sent: Vec<_> = snap(&t, k)
        .messages
        .iter()
        .filter(|m| m.from == NodeId(5))
        .map(|m| m.label.clone())
        .collect();
    assert_eq!(sent, vec!["request 1: set x=1".to_string()], "{:?}", e.notes);
    let client = &node(&t, k, 5).summary;
    assert!(
        client
            .badges
            .iter()
            .any(|b| b.label == "writes" && b.value.ends_with("/5")),
        "{client:?}"
    );
    assert_eq!(t.outcome["writes_committed"], 5, "the extra write commits too");
    assert!(t.refused_actions.is_empty());

    // While a write is outstanding, the extra one queues behind it.
    let busy = (0..base.entries.len())
        .find(|&j| {
            let client = &node(&base, j, 5).summary;
            client.word == "writing" && client.details.iter().any(|d| d.text.starts_with("write 1 via"))
        })
        .unwrap();
    let t = trace("raft-partition", &format!("{}@input:5:write", busy + 1));
    assert!(t.entries[busy + 1].notes[0].contains("once write 1 is done"));
    assert_eq!(t.outcome["writes_committed"], 5);
}

#[test]
fn servers_carry_an_election_timer_gauge_that_runs_down_by_their_clock() {
    let t = trace("raft-election", "");
    let k = first_leader_step(&t);
    assert!(
        node(&t, k, 0).gauge.is_none(),
        "the leader runs no election timer"
    );
    assert!(node(&t, k, 0).inputs.is_empty(), "nor offers to force one");
    // A follower between two heartbeats: same timer, less of it left.
    let mut checked = 0;
    for j in k..t.entries.len() - 1 {
        let (a, b) = (node(&t, j, 3), node(&t, j + 1, 3));
        let (Some(ga), Some(gb)) = (&a.gauge, &b.gauge) else {
            continue;
        };
        assert!((150_000..=300_000).contains(&ga.total_us), "{ga:?}");
        assert!(ga.remaining_us <= ga.total_us);
        if ga.total_us == gb.total_us
            && a.summary.word == b.summary.word
            && snap(&t, j + 1).time_us > snap(&t, j).time_us
        {
            let elapsed = snap(&t, j + 1).time_us - snap(&t, j).time_us;
            if gb.remaining_us + elapsed == ga.remaining_us {
                checked += 1;
            }
        }
    }
    assert!(
        checked > 10,
        "the gauge should count down step by step ({checked})"
    );
    assert_eq!(node(&t, k, 3).inputs[0].code, "timeout");
    assert_eq!(node(&t, k, 3).inputs[0].label, "Force election timeout");
}

#[test]
fn log_cells_show_index_term_and_what_the_node_knows_committed() {
    let t = trace("raft-partition", "");
    let last = snap(&t, t.entries.len() - 1);
    for n in &last.nodes[..5] {
        assert_eq!(n.status, NodeStatus::Up);
        let idx: Vec<u64> = n.log.iter().map(|c| c.index).collect();
        assert_eq!(idx, (1..=n.log.len() as u64).collect::<Vec<_>>());
        assert!(
            n.log.iter().all(|c| c.committed),
            "everything commits in the end: {:?}",
            n.log
        );
    }
    // Mid-split, the minority leader holds an entry it cannot commit.
    let heal = t
        .entries
        .iter()
        .position(|e| e.text == "the network heals")
        .unwrap();
    let s1 = node(&t, heal - 1, 0);
    let open: Vec<_> = s1.log.iter().filter(|c| !c.committed).collect();
    assert!(!open.is_empty(), "{:?}", s1.log);
    assert!(open.iter().all(|c| c.term == 1));
    assert!(node(&t, heal - 1, 5).log.is_empty(), "the client keeps no log");
}

#[test]
fn scenarios_without_the_new_card_data_serialise_as_before() {
    let t = trace("lost-update", "");
    let json = serde_json::to_string(snap(&t, t.entries.len() - 1)).unwrap();
    for key in ["\"gauge\"", "\"log\"", "\"inputs\""] {
        assert!(!json.contains(key), "{key} in {json}");
    }
    // A node view without these fields reads.
    let old = r#"{"id":0,"status":{"state":"up"},"local_time_us":5,"clock_offset_us":0,"waiting_inputs":0,"summary":{"word":"x","tone":"quiet"}}"#;
    let view: NodeView = serde_json::from_str(old).unwrap();
    assert!(view.gauge.is_none() && view.log.is_empty() && view.inputs.is_empty());
}

#[test]
fn unchanged_node_views_are_still_shared_between_steps() {
    // A view holds the node's clock reading, so it can only be unchanged between two steps at
    // the same instant; there, every server the step did not touch (gauge included) must
    // share the previous step's allocation.
    let t = trace("raft-election", "");
    let (mut shared, mut changed) = (0, 0);
    for k in 1..t.entries.len() {
        if t.entries[k].time_us != t.entries[k - 1].time_us {
            continue;
        }
        for id in 0..5u32 {
            if t.entries[k].nodes.contains(&NodeId(id)) {
                continue;
            }
            if std::rc::Rc::ptr_eq(
                &snap(&t, k - 1).nodes[id as usize],
                &snap(&t, k).nodes[id as usize],
            ) {
                shared += 1;
            } else {
                changed += 1;
            }
        }
    }
    assert!(shared > 10, "{shared} shared");
    assert_eq!(changed, 0, "an untouched node's view was copied");
}

#[test]
fn a_trace_with_inputs_round_trips_through_json_and_an_old_one_still_reads() {
    let base = trace("raft-election", "");
    let k = first_leader_step(&base) + 3;
    let t = trace(
        "raft-election",
        &format!("{k}@input:0:timeout;{}@input:2:timeout", k + 1),
    );
    let json = serde_json::to_string(&t).unwrap();
    let back: Trace = serde_json::from_str(&json).unwrap();
    assert_eq!(back.refused_actions, t.refused_actions);
    assert_eq!(back.actions, t.actions);
    // A trace serialised before `refused_actions` existed has no such key.
    let old = serde_json::to_string(&trace("lost-update", "")).unwrap();
    assert!(!old.contains("refused_actions"));
    let read: Trace = serde_json::from_str(&old).unwrap();
    assert!(read.refused_actions.is_empty());
}
