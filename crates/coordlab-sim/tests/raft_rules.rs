//! Unit tests of the Raft server state machine, one rule each, named after the section of
//! the Raft paper (Ongaro & Ousterhout 2014) they check. Each feeds one input to a server
//! and asserts on the effects it emits.

use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::participant::{Card, Ctx, Effect, Participant, ViewCtx};
use coordlab_sim::kernel::testing;
use coordlab_sim::protocols::raft::{
    ClientAnswer, Command, Entry, LogIndex, RaftBug, RaftMsg, RaftServer, RaftTimer, Role, ServerConfig, Term,
};
use coordlab_sim::trace::{Badge, Tone};

const A: NodeId = NodeId(0);
const B: NodeId = NodeId(1);
const C: NodeId = NodeId(2);
const CLIENT: NodeId = NodeId(9);

const NAMES: [&str; 10] = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10"];

fn config(n: u32, bug: RaftBug) -> ServerConfig {
    ServerConfig {
        cluster: (0..n).map(NodeId).collect(),
        election_timeout_ms_min: 150,
        election_timeout_ms_max: 300,
        heartbeat_ms: 50,
        stop_at_ms: 10_000,
        bug,
    }
}

/// One server driven by hand, at 1 ms on its clock unless a test moves it.
struct Harness(testing::Harness<RaftServer>);

impl Harness {
    fn new(id: NodeId, n: u32, bug: RaftBug) -> Harness {
        let mut h = testing::Harness::new(id, RaftServer::new(id, config(n, bug)), &NAMES);
        h.now_us = 1_000;
        Harness(h)
    }

    fn s(&self) -> &RaftServer {
        &self.0.node
    }

    fn s_mut(&mut self) -> &mut RaftServer {
        &mut self.0.node
    }

    fn with(&mut self, f: impl FnOnce(&mut RaftServer, &mut Ctx<'_, RaftServer>)) -> Vec<Effect<RaftServer>> {
        self.0.call(f)
    }

    fn deliver(&mut self, from: NodeId, msg: RaftMsg) -> Vec<Effect<RaftServer>> {
        self.0.deliver(from, msg)
    }

    fn fire(&mut self, timer: RaftTimer) -> Vec<Effect<RaftServer>> {
        self.0.fire(timer)
    }

    /// The server as it restarts from what it persisted.
    fn restart(&mut self) {
        let s = self.s();
        self.0.node = RaftServer::recover(&s.config, s.id, &s.durable());
    }

    /// Makes this server leader of `term` with the votes of every peer.
    fn elect(&mut self, term_before: u64) {
        self.s_mut().term = Term(term_before);
        self.fire(RaftTimer::Election);
        let term = self.s().term;
        let peers: Vec<NodeId> = self
            .s()
            .config
            .cluster
            .iter()
            .copied()
            .filter(|p| *p != self.s().id)
            .collect();
        for p in peers {
            self.deliver(p, RaftMsg::Vote { term, granted: true });
        }
        assert_eq!(self.s().role, Role::Leader);
    }
}

fn sent(effects: &[Effect<RaftServer>]) -> Vec<(NodeId, RaftMsg)> {
    testing::sent(effects)
}

fn persisted(effects: &[Effect<RaftServer>]) -> bool {
    !testing::persisted(effects).is_empty()
}

fn election_timer_set(effects: &[Effect<RaftServer>]) -> Option<u64> {
    testing::timers_set(effects)
        .into_iter()
        .find_map(|(timer, after_local_us)| (timer == RaftTimer::Election).then_some(after_local_us))
}

fn entry(term: u64, value: u32) -> Entry {
    Entry {
        term: Term(term),
        command: Command::Set {
            key: "x".into(),
            value,
        },
    }
}

fn vote_request(term: u64, last_index: u64, last_term: u64) -> RaftMsg {
    RaftMsg::RequestVote {
        term: Term(term),
        last_log_index: LogIndex(last_index),
        last_log_term: Term(last_term),
    }
}

fn granted(effects: &[Effect<RaftServer>]) -> Option<bool> {
    sent(effects).into_iter().find_map(|(_, m)| match m {
        RaftMsg::Vote { granted, .. } => Some(granted),
        _ => None,
    })
}

fn append(term: u64, prev_index: u64, prev_term: u64, entries: Vec<Entry>, commit: u64) -> RaftMsg {
    RaftMsg::AppendEntries {
        term: Term(term),
        prev_log_index: LogIndex(prev_index),
        prev_log_term: Term(prev_term),
        entries,
        leader_commit: LogIndex(commit),
    }
}

fn append_reply(effects: &[Effect<RaftServer>]) -> (Term, bool, LogIndex) {
    sent(effects)
        .into_iter()
        .find_map(|(_, m)| match m {
            RaftMsg::AppendReply { term, success, index } => Some((term, success, index)),
            _ => None,
        })
        .expect("an AppendEntries reply")
}

#[test]
fn s5_1_a_higher_term_makes_a_leader_step_down_before_handling_the_message() {
    let mut h = Harness::new(A, 3, RaftBug::None);
    h.elect(0);
    let fx = h.deliver(B, vote_request(5, 0, 0));
    assert_eq!(h.s().role, Role::Follower);
    assert_eq!(h.s().term, Term(5));
    assert!(persisted(&fx));
    // Having adopted term 5 with no vote yet, it can vote in it.
    assert_eq!(granted(&fx), Some(true));
}

#[test]
fn s5_1_a_message_with_a_stale_term_is_rejected() {
    let mut h = Harness::new(B, 3, RaftBug::None);
    h.s_mut().term = Term(4);
    let fx = h.deliver(A, append(3, 0, 0, vec![entry(3, 1)], 0));
    assert_eq!(append_reply(&fx), (Term(4), false, LogIndex(0)));
    assert!(h.s().log.is_empty());
    assert_eq!(h.s().stale_appends_rejected, 1);
    let fx = h.deliver(C, vote_request(3, 9, 3));
    assert_eq!(granted(&fx), Some(false));
}

#[test]
fn s5_1_terms_only_grow_a_lower_term_never_lowers_the_current_one() {
    let mut h = Harness::new(B, 3, RaftBug::None);
    h.s_mut().term = Term(7);
    h.deliver(A, append(2, 0, 0, vec![], 0));
    h.deliver(
        C,
        RaftMsg::Vote {
            term: Term(1),
            granted: true,
        },
    );
    assert_eq!(h.s().term, Term(7));
}

#[test]
fn s5_2_a_follower_that_hears_nothing_stands_for_election() {
    let mut h = Harness::new(A, 3, RaftBug::None);
    let fx = h.fire(RaftTimer::Election);
    assert_eq!(h.s().role, Role::Candidate);
    assert_eq!(h.s().term, Term(1));
    assert_eq!(h.s().voted_for, Some(A));
    assert!(persisted(&fx));
    let asked: Vec<NodeId> = sent(&fx)
        .into_iter()
        .filter(|(_, m)| matches!(m, RaftMsg::RequestVote { .. }))
        .map(|(to, _)| to)
        .collect();
    assert_eq!(asked, vec![B, C]);
    assert!(
        election_timer_set(&fx).is_some(),
        "a new timeout in case the vote splits"
    );
}

#[test]
fn s5_2_election_timeouts_are_drawn_at_random_within_the_configured_range() {
    let mut seen = std::collections::BTreeSet::new();
    let mut h = Harness::new(A, 3, RaftBug::None);
    for _ in 0..50 {
        let fx = h.with(|n, ctx| n.on_start(ctx));
        let t = election_timer_set(&fx).unwrap();
        assert!((150_000..=300_000).contains(&t), "{t}");
        seen.insert(t);
    }
    assert!(seen.len() > 40, "timeouts should differ: {}", seen.len());
}

#[test]
fn s5_2_a_candidate_wins_with_a_majority_of_votes() {
    let mut h = Harness::new(A, 5, RaftBug::None);
    h.fire(RaftTimer::Election);
    h.deliver(
        B,
        RaftMsg::Vote {
            term: Term(1),
            granted: true,
        },
    );
    assert_eq!(h.s().role, Role::Candidate, "2 of 5 is not a majority");
    h.deliver(
        C,
        RaftMsg::Vote {
            term: Term(1),
            granted: false,
        },
    );
    assert_eq!(h.s().role, Role::Candidate);
    let fx = h.deliver(
        NodeId(3),
        RaftMsg::Vote {
            term: Term(1),
            granted: true,
        },
    );
    assert_eq!(h.s().role, Role::Leader);
    let heartbeats = sent(&fx)
        .into_iter()
        .filter(|(_, m)| matches!(m, RaftMsg::AppendEntries { entries, .. } if entries.is_empty()))
        .count();
    assert_eq!(
        heartbeats, 4,
        "a new leader announces itself to every peer at once"
    );
}

#[test]
fn s5_2_a_candidate_asks_again_only_the_peers_that_have_not_answered() {
    let mut h = Harness::new(A, 5, RaftBug::None);
    h.fire(RaftTimer::Election);
    h.deliver(
        B,
        RaftMsg::Vote {
            term: Term(1),
            granted: true,
        },
    );
    h.deliver(
        C,
        RaftMsg::Vote {
            term: Term(1),
            granted: false,
        },
    );
    let fx = h.fire(RaftTimer::Heartbeat);
    let asked: Vec<NodeId> = sent(&fx).into_iter().map(|(to, _)| to).collect();
    assert_eq!(asked, vec![NodeId(3), NodeId(4)]);
}

#[test]
fn s5_2_a_late_vote_from_an_older_term_does_not_count() {
    let mut h = Harness::new(A, 3, RaftBug::None);
    h.s_mut().term = Term(3);
    h.fire(RaftTimer::Election);
    h.deliver(
        B,
        RaftMsg::Vote {
            term: Term(3),
            granted: true,
        },
    );
    assert_eq!(h.s().role, Role::Candidate);
}

#[test]
fn s5_2_a_server_votes_at_most_once_per_term() {
    let mut h = Harness::new(C, 3, RaftBug::None);
    assert_eq!(granted(&h.deliver(A, vote_request(1, 0, 0))), Some(true));
    assert_eq!(granted(&h.deliver(B, vote_request(1, 0, 0))), Some(false));
    // Asking again for the same candidate is answered the same way.
    assert_eq!(granted(&h.deliver(A, vote_request(1, 0, 0))), Some(true));
    assert_eq!(h.s().voted_for, Some(A));
}

#[test]
fn s5_2_a_granted_vote_resets_the_voters_election_timer_and_a_refused_one_does_not() {
    let mut h = Harness::new(C, 3, RaftBug::None);
    let fx = h.deliver(A, vote_request(1, 0, 0));
    assert!(election_timer_set(&fx).is_some());
    let fx = h.deliver(B, vote_request(1, 0, 0));
    assert!(election_timer_set(&fx).is_none());
}

#[test]
fn s5_2_a_candidate_steps_back_when_a_leader_of_its_term_appears() {
    let mut h = Harness::new(B, 3, RaftBug::None);
    h.fire(RaftTimer::Election);
    let fx = h.deliver(A, append(1, 0, 0, vec![], 0));
    assert_eq!(h.s().role, Role::Follower);
    assert_eq!(h.s().leader_hint, Some(A));
    assert!(append_reply(&fx).1);
}

#[test]
fn s5_2_the_vote_survives_a_restart_because_it_is_persisted() {
    let mut h = Harness::new(C, 3, RaftBug::None);
    h.deliver(A, vote_request(1, 0, 0));
    h.restart();
    assert_eq!(h.s().voted_for, Some(A));
    assert_eq!(h.s().role, Role::Follower);
    assert_eq!(h.s().commit_index, LogIndex(0), "commit index is volatile");
    assert_eq!(granted(&h.deliver(B, vote_request(1, 0, 0))), Some(false));
}

#[test]
fn planted_bug_forget_vote_on_restart_votes_twice_in_one_term() {
    let mut h = Harness::new(C, 3, RaftBug::ForgetVoteOnRestart);
    h.deliver(A, vote_request(1, 0, 0));
    h.restart();
    assert_eq!(granted(&h.deliver(B, vote_request(1, 0, 0))), Some(true));
}

#[test]
fn s5_3_append_entries_checks_the_previous_index_and_term() {
    let mut h = Harness::new(B, 3, RaftBug::None);
    h.s_mut().term = Term(2);
    h.s_mut().log = vec![entry(1, 1)];
    // Missing index 2.
    let fx = h.deliver(A, append(2, 2, 2, vec![entry(2, 3)], 0));
    assert_eq!(append_reply(&fx), (Term(2), false, LogIndex(1)));
    // Wrong term at index 1.
    let fx = h.deliver(A, append(2, 1, 2, vec![entry(2, 3)], 0));
    assert!(!append_reply(&fx).1);
    assert_eq!(h.s().log, vec![entry(1, 1)]);
    // Matching.
    let fx = h.deliver(A, append(2, 1, 1, vec![entry(2, 2)], 0));
    assert_eq!(append_reply(&fx), (Term(2), true, LogIndex(2)));
    assert_eq!(h.s().log, vec![entry(1, 1), entry(2, 2)]);
}

#[test]
fn s5_3_a_follower_overwrites_its_conflicting_tail_with_the_leaders_entries() {
    let mut h = Harness::new(B, 3, RaftBug::None);
    h.s_mut().term = Term(3);
    h.s_mut().log = vec![entry(1, 1), entry(2, 7), entry(2, 8)];
    let fx = h.deliver(A, append(3, 1, 1, vec![entry(3, 2)], 0));
    assert!(append_reply(&fx).1);
    assert!(persisted(&fx));
    assert_eq!(h.s().log, vec![entry(1, 1), entry(3, 2)]);
    assert_eq!(h.s().entries_discarded, 2);
}

#[test]
fn s5_3_an_old_duplicate_append_does_not_truncate_matching_entries() {
    let mut h = Harness::new(B, 3, RaftBug::None);
    h.s_mut().term = Term(1);
    h.s_mut().log = vec![entry(1, 1), entry(1, 2)];
    h.deliver(A, append(1, 0, 0, vec![entry(1, 1)], 0));
    assert_eq!(h.s().log.len(), 2);
}

#[test]
fn s5_3_on_a_mismatch_the_leader_steps_next_index_back_and_retries() {
    let mut h = Harness::new(A, 3, RaftBug::None);
    h.s_mut().log = vec![entry(1, 1), entry(1, 2), entry(1, 3)];
    h.elect(1);
    assert_eq!(h.s().next_index[&B], LogIndex(4));
    let fx = h.deliver(
        B,
        RaftMsg::AppendReply {
            term: Term(2),
            success: false,
            index: LogIndex(3),
        },
    );
    assert_eq!(h.s().next_index[&B], LogIndex(3));
    let retry = sent(&fx);
    assert!(
        matches!(&retry[..], [(to, RaftMsg::AppendEntries { prev_log_index: LogIndex(2), entries, .. })] if *to == B && entries.len() == 1)
    );
    // A follower whose log ends earlier lets the leader jump back past the gap.
    h.deliver(
        B,
        RaftMsg::AppendReply {
            term: Term(2),
            success: false,
            index: LogIndex(0),
        },
    );
    assert_eq!(h.s().next_index[&B], LogIndex(1));
}

#[test]
fn s5_3_the_leader_commits_an_entry_of_its_term_once_a_majority_stores_it_and_applies_it() {
    let mut h = Harness::new(A, 3, RaftBug::None);
    h.elect(0);
    h.deliver(
        CLIENT,
        RaftMsg::ClientRequest {
            id: 1,
            command: Command::Set {
                key: "x".into(),
                value: 1,
            },
        },
    );
    assert_eq!(h.s().commit_index, LogIndex(0));
    let fx = h.deliver(
        B,
        RaftMsg::AppendReply {
            term: Term(1),
            success: true,
            index: LogIndex(1),
        },
    );
    assert_eq!(h.s().commit_index, LogIndex(1));
    assert_eq!(h.s().kv.get("x"), Some(&1));
    assert!(sent(&fx).iter().any(|(to, m)| *to == CLIENT
        && matches!(
            m,
            RaftMsg::ClientReply {
                answer: ClientAnswer::Committed { index: LogIndex(1) },
                ..
            }
        )));
}

#[test]
fn s5_3_a_follower_commits_up_to_the_leaders_commit_but_not_past_what_it_matched() {
    let mut h = Harness::new(B, 3, RaftBug::None);
    h.s_mut().term = Term(1);
    h.deliver(A, append(1, 0, 0, vec![entry(1, 1), entry(1, 2)], 5));
    assert_eq!(h.s().commit_index, LogIndex(2));
    assert_eq!(h.s().last_applied, LogIndex(2));
    assert_eq!(h.s().kv.get("x"), Some(&2));
}

#[test]
fn s5_1_followers_redirect_clients_to_the_leader_they_know() {
    let mut h = Harness::new(B, 3, RaftBug::None);
    h.deliver(A, append(1, 0, 0, vec![], 0));
    let fx = h.deliver(
        CLIENT,
        RaftMsg::ClientRequest {
            id: 1,
            command: Command::Set {
                key: "x".into(),
                value: 1,
            },
        },
    );
    assert!(h.s().log.is_empty());
    assert_eq!(
        sent(&fx),
        vec![(
            CLIENT,
            RaftMsg::ClientReply {
                id: 1,
                answer: ClientAnswer::NotLeader { leader: Some(A) }
            }
        )]
    );
}

#[test]
fn s5_4_1_a_voter_refuses_a_candidate_with_a_shorter_log() {
    let mut h = Harness::new(C, 3, RaftBug::None);
    h.s_mut().log = vec![entry(1, 1), entry(1, 2)];
    h.s_mut().term = Term(1);
    assert_eq!(granted(&h.deliver(A, vote_request(2, 1, 1))), Some(false));
    assert_eq!(granted(&h.deliver(B, vote_request(2, 2, 1))), Some(true));
}

#[test]
fn s5_4_1_a_voter_refuses_a_candidate_whose_last_term_is_older_even_if_its_log_is_longer() {
    let mut h = Harness::new(C, 3, RaftBug::None);
    h.s_mut().log = vec![entry(1, 1), entry(3, 2)];
    h.s_mut().term = Term(3);
    assert_eq!(granted(&h.deliver(A, vote_request(4, 5, 2))), Some(false));
    assert_eq!(
        granted(&h.deliver(B, vote_request(4, 1, 4))),
        Some(true),
        "a newer last term wins"
    );
}

#[test]
fn planted_bug_skip_up_to_date_check_votes_for_a_shorter_log() {
    let mut h = Harness::new(C, 3, RaftBug::SkipUpToDateCheck);
    h.s_mut().log = vec![entry(1, 1), entry(1, 2)];
    h.s_mut().term = Term(1);
    assert_eq!(granted(&h.deliver(A, vote_request(2, 0, 0))), Some(true));
}

fn leader_with_old_entry(bug: RaftBug) -> Harness {
    // Figure 8's situation: a leader of term 4 holds an entry from term 2 that it replicates
    // to a majority before any entry of its own term.
    let mut h = Harness::new(A, 3, bug);
    h.s_mut().log = vec![entry(2, 1)];
    h.elect(3);
    assert_eq!(h.s().term, Term(4));
    h.deliver(
        B,
        RaftMsg::AppendReply {
            term: Term(4),
            success: true,
            index: LogIndex(1),
        },
    );
    h
}

#[test]
fn s5_4_2_a_leader_does_not_commit_an_older_terms_entry_by_counting_replicas() {
    let mut h = leader_with_old_entry(RaftBug::None);
    assert_eq!(h.s().commit_index, LogIndex(0));
    // Once an entry of its own term is stored on a majority, both commit.
    h.deliver(
        CLIENT,
        RaftMsg::ClientRequest {
            id: 1,
            command: Command::Set {
                key: "y".into(),
                value: 2,
            },
        },
    );
    h.deliver(
        B,
        RaftMsg::AppendReply {
            term: Term(4),
            success: true,
            index: LogIndex(2),
        },
    );
    assert_eq!(h.s().commit_index, LogIndex(2));
}

#[test]
fn planted_bug_commit_old_term_by_count_commits_it_at_once() {
    let h = leader_with_old_entry(RaftBug::CommitOldTermByCount);
    assert_eq!(h.s().commit_index, LogIndex(1));
}

#[test]
fn demo_horizon_after_stop_at_no_timer_is_set_again() {
    let mut h = Harness::new(A, 3, RaftBug::None);
    h.0.now_us = 10_000_000;
    let fx = h.with(|n, ctx| n.on_start(ctx));
    assert!(election_timer_set(&fx).is_none());
    let fx = h.fire(RaftTimer::Election);
    assert_eq!(h.s().role, Role::Follower);
    assert!(sent(&fx).is_empty());
}

#[test]
fn node_card_names_role_term_vote_log_and_commit() {
    let mut h = Harness::new(A, 3, RaftBug::None);
    h.elect(2);
    let names: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
    let card = h.s().summary(&ViewCtx::new(A, h.0.now_us, &names));
    assert_eq!((card.word.as_str(), card.tone), ("leader", Tone::Holds));
    assert_eq!(
        card.badges,
        vec![Badge {
            label: "term".into(),
            value: "3".into()
        }]
    );
    let details: Vec<&str> = card.details.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(details, ["voted S1", "log 0 · commit 0"]);
}
