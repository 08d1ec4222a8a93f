//! The story beats of the Raft scenarios, defined by Raft state (a server leads a term, the
//! leader crashes, a higher term appears, an entry commits, a stale leader steps down) and
//! never by step numbers or heartbeats, so they survive other seeds and cluster sizes.

use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::world::Nodes;
use crate::protocols::raft::{RaftServer, Role, Term};
use crate::scenarios::raft_common::RaftCast;
use crate::trace::EventKind;

/// The ids of the Raft servers (every node whose durable state is a server's), up or down.
fn server_ids(n: &Nodes<'_>) -> Vec<NodeId> {
    n.ids_of::<RaftServer>()
}

fn live<'a>(n: &Nodes<'a>, id: NodeId) -> Option<&'a RaftServer> {
    n.live::<RaftServer>(id)
}

fn live_servers<'a>(n: &Nodes<'a>) -> Vec<&'a RaftServer> {
    server_ids(n).into_iter().filter_map(|id| live(n, id)).collect()
}

/// A live leader whose term is above `term`, if any.
fn leader_above<'a>(n: &Nodes<'a>, term: u64) -> Option<&'a RaftServer> {
    live_servers(n)
        .into_iter()
        .find(|s| s.role == Role::Leader && s.term > Term(term))
}

fn is_leader(n: &Nodes<'_>, id: NodeId) -> bool {
    live(n, id).is_some_and(|s| s.role == Role::Leader)
}

/// The beat every Raft story opens with: S1, first to boot, leads term 1; `why` says what
/// that means in this story.
fn s1_leads(setup: &mut Setup, s1: NodeId, why: &str) {
    setup.beat("s1-leads", "S1 leads term 1", why, move |n, _| is_leader(n, s1));
}

fn any_commit(n: &Nodes<'_>, at_least: u64) -> bool {
    live_servers(n).iter().any(|s| s.commit_index.0 >= at_least)
}

/// Every server is up, one of them leads, and every other has heard from it in its term
/// (their logs may differ).
fn settled_roles(n: &Nodes<'_>) -> bool {
    let ids = server_ids(n);
    let servers = live_servers(n);
    let leaders: Vec<&&RaftServer> = servers.iter().filter(|s| s.role == Role::Leader).collect();
    let [leader] = leaders.as_slice() else {
        return false;
    };
    servers.len() == ids.len()
        && servers
            .iter()
            .all(|s| s.term == leader.term && (s.id == leader.id || s.leader_hint == Some(leader.id)))
}

/// Every server is up, one of them leads, every other has heard from it in its term, and
/// all hold the same log.
fn settled(n: &Nodes<'_>) -> bool {
    let ids = server_ids(n);
    let servers = live_servers(n);
    if servers.len() != ids.len() {
        return false;
    }
    let leaders: Vec<&&RaftServer> = servers.iter().filter(|s| s.role == Role::Leader).collect();
    let [leader] = leaders.as_slice() else {
        return false;
    };
    servers.iter().all(|s| {
        s.term == leader.term
            && s.log == leader.log
            && (s.id == leader.id || s.leader_hint == Some(leader.id))
    })
}

/// Two servers hold different entries at an index both count as committed, or a server
/// lost entries below its own commit index: committed writes were overwritten.
fn committed_entry_lost(n: &Nodes<'_>) -> bool {
    let servers = live_servers(n);
    servers.iter().any(|a| {
        a.commit_index.0 > a.log.len() as u64
            || servers.iter().any(|b| {
                let top = a
                    .commit_index
                    .0
                    .min(b.commit_index.0)
                    .min(a.log.len() as u64)
                    .min(b.log.len() as u64);
                (0..top as usize).any(|k| a.log[k] != b.log[k])
            })
    })
}

fn was_fault(step: &crate::kernel::beats::Step<'_>, f: impl Fn(&Fault) -> bool) -> bool {
    step.fault.is_some_and(f)
}

/// `raft-election`, default and the variants whose bug cannot show without a log.
/// `usual`: the timing leaves S1 the leader of term 1 until it crashes (see
/// `raft_common::usual_timing`); otherwise leadership may move before, and the beats say less.
pub fn election(setup: &mut Setup, cast: &RaftCast, servers: u32, usual: bool) {
    let s1 = cast.servers[0];
    let majority = servers / 2 + 1;
    setup
        .beat(
            "s1-stands",
            "S1's timer runs out first",
            "S1 booted first, so its election timer expires before any other. It moves to term 1, votes for itself and asks the others for their votes.",
            move |n, _| live(n, s1).is_some_and(|s| s.role == Role::Candidate),
        )
        .ask(
            &format!("S1 asks the other {} servers to vote for it in term 1. How many votes does it need in all?", servers - 1),
            &[
                "1: its own",
                &format!("{majority}: a majority of {servers}"),
                &format!("{servers}: every server"),
            ],
            1,
            "A candidate needs a majority of the whole cluster, its own vote included; it does not wait for the rest.",
        );
    s1_leads(setup, s1, "A majority voted for S1. It sends heartbeats, and every follower resets its election timer on each one.");
    setup
        .beat(
            "leader-crashes",
            if usual { "The leader S1 crashes" } else { "S1 crashes" },
            if usual {
                "S1 stops: no more heartbeats. Each follower's timer keeps running down."
            } else {
                "S1 stops. With heartbeats this close to the election timeout, leadership may have moved before now; whoever leads, the others' timers keep running."
            },
            move |n, _| !n.is_live(s1),
        )
        .ask(
            "Nobody hears from S1 any more. Who becomes the next leader?",
            &["The follower whose timer runs out first, in a higher term", "Nobody until S1 comes back", "S2, the next server in line"],
            0,
            "Timeouts are drawn at random: the first follower to time out stands in term 2 and usually wins before the others stand.",
        );
    // Under unusual timing the terms may have moved on before S1's crash: these two would
    // then describe what happened earlier.
    if usual {
        setup.beat(
            "higher-term",
            "A follower times out: term 2 begins",
            "A follower heard no heartbeat for a whole timeout. It becomes a candidate in a higher term and asks for votes.",
            move |n, _| live_servers(n).iter().any(|s| s.term > Term(1)),
        );
        setup.beat(
            "new-leader",
            "A new leader wins a higher term",
            "A majority of the survivors voted for it. The cluster takes writes again without S1.",
            move |n, _| leader_above(n, 1).is_some_and(|s| s.id != s1),
        );
    }
    setup.beat(
        "s1-restarts",
        "S1 restarts in its old term",
        if usual {
            "S1 comes back with the term and vote it wrote to disk before it replied to anyone. It still thinks the term is 1."
        } else {
            "S1 comes back with the term and vote it wrote to disk before it replied to anyone: the term it had when it crashed."
        },
        move |n, _| n.is_live(s1),
    );
    setup.beat(
        "s1-follows",
        "S1 follows the new leader",
        "The first message from the new leader carries a higher term: S1 adopts it and follows. Terms only go up.",
        move |n, _| {
            let top = live_servers(n).iter().map(|s| s.term).max().unwrap_or(Term(0));
            live(n, s1).is_some_and(|s| s.role == Role::Follower && s.term == top && top > Term(1))
        },
    );
}

/// `raft-election` with `bug=forget-vote-on-restart`: two leaders of term 1.
pub fn election_forgets_votes(setup: &mut Setup, cast: &RaftCast) {
    let s1 = cast.servers[0];
    s1_leads(setup, s1, "S1 booted first and won term 1. Its messages to the last server are lost, so that server never hears of term 1.");
    setup
        .beat(
            "votes-lost",
            "S1's voters restart with no vote on record",
            "Two servers that voted for S1 crash and come back. With the bug the vote was never written to disk, so they come back free to vote again in term 1.",
            move |n, _| {
                live_servers(n)
                    .iter()
                    .any(|s| s.id != s1 && s.forgotten_vote.is_some())
            },
        )
        .ask(
            "The last server never heard of term 1. Its timer runs out and it stands in term 1. Can it win?",
            &["Yes: the restarted servers vote again", "No: term 1 already has a leader", "Only once S1 crashes"],
            0,
            "The restarted servers find no vote on record for term 1 and grant a second one.",
        );
    setup.beat(
        "second-vote",
        "A second vote in the same term",
        "A restarted server votes for another candidate in term 1. Raft writes the term and vote to disk before replying, so that this can never happen.",
        move |n, _| {
            live_servers(n).iter().any(|s| {
                s.forgotten_vote
                    .is_some_and(|(t, v)| s.term == t && s.voted_for.is_some_and(|x| x != v))
            })
        },
    );
    setup.beat(
        "two-leaders",
        "Two leaders of term 1",
        "The last server collects a majority of term-1 votes too. Election safety is broken: one vote per term was all that kept leaders unique.",
        move |n, _| {
            live_servers(n)
                .iter()
                .any(|s| s.id != s1 && s.role == Role::Leader && s.term == Term(1))
        },
    );
}

/// `raft-split-vote`.
pub fn split_vote(setup: &mut Setup, identical: bool) {
    if identical {
        setup
            .beat(
                "all-stand",
                "Every server stands at once",
                "All timers were set to the same length, so every server times out at the same instant and votes for itself in term 1.",
                move |n, _| {
                    let all = live_servers(n);
                    !all.is_empty() && all.iter().all(|s| s.role == Role::Candidate && s.term == Term(1))
                },
            )
            .ask(
                "Each server has voted for itself in term 1. Who wins?",
                &["Nobody: no one can get a majority", "The server with the lowest id", "The first one to ask"],
                0,
                "Each has already spent its one vote of the term on itself, so every request is refused.",
            );
        setup.beat(
            "again",
            "Term 2: they all stand again",
            "No one won, so every timer runs out again — at the same instant again. Term 2 is split the same way.",
            move |n, _| {
                let all = live_servers(n);
                !all.is_empty() && all.iter().all(|s| s.role == Role::Candidate && s.term == Term(2))
            },
        );
        setup.beat(
            "livelock",
            "Term 5 and still no leader",
            "The cluster is stuck in a livelock: identical timeouts split every vote. Random timeouts are what breaks the tie.",
            move |n, _| {
                let all = live_servers(n);
                !all.is_empty() && all.iter().all(|s| s.term >= Term(5) && s.role != Role::Leader)
            },
        );
        return;
    }
    setup
        .beat(
            "first-candidate",
            "A first timer runs out",
            "Each server drew its own timeout at random. The one that drew the shortest stands first, in term 1.",
            move |n, _| live_servers(n).iter().any(|s| s.role == Role::Candidate),
        )
        .ask(
            "The others' timers have not run out yet. What do they do with its request?",
            &["Refuse: they want to stand too", "Vote for it: they have not voted this term", "Wait for their own timeout"],
            1,
            "A follower that has not voted in the term grants its vote to the first candidate whose log is up to date.",
        );
    setup.beat(
        "leader",
        "A leader is elected",
        "One candidate collected a majority of its term's votes, its own included. Each server votes once a term, so no other candidate of that term can.",
        move |n, _| leader_above(n, 0).is_some(),
    );
    setup.beat(
        "all-follow",
        "Every server follows it",
        "Its heartbeats reset every other timer: one leader, one term. Random timeouts made the difference.",
        move |n, _| settled(n),
    );
}

/// `raft-log-replication`.
pub fn log_replication(setup: &mut Setup, cast: &RaftCast, servers: u32, writes: u64) {
    let s1 = cast.servers[0];
    s1_leads(
        setup,
        s1,
        "S1 booted first and won the election. The client's writes go to it.",
    );
    setup
        .beat(
            "appended",
            "The first write is in S1's log",
            if servers == 1 {
                "S1 appends the client's command at #1. A cluster of one has no follower to send it to."
            } else {
                "S1 appends the client's command at #1 and sends it to every follower."
            },
            move |n, _| live(n, s1).is_some_and(|s| !s.log.is_empty()),
        )
        .ask(
            "When may S1 treat #1 as committed?",
            &[
                "As soon as it is in S1's own log",
                "Once every server stores it",
                "Once a majority of servers store it",
            ],
            2,
            "A majority stores it: any future leader must have a vote from that majority, so it holds #1.",
        );
    setup.beat(
        "committed",
        "#1 commits on a majority",
        if servers == 1 {
            "S1 alone is a majority of one: it applies #1 and answers the client."
        } else {
            "Enough followers stored #1. S1 applies it and answers the client."
        },
        move |n, _| any_commit(n, 1),
    );
    if servers >= 5 {
        let down = cast.servers[cast.servers.len() - 2];
        let name = format!("S{}", servers - 1);
        setup.beat(
            "follower-crashes",
            &format!("Follower {name} crashes"),
            "One follower stops answering. The leader keeps sending it AppendEntries; nothing arrives.",
            move |n, _| !n.is_live(down),
        );
        let mut at_crash = None;
        setup.beat(
            "commits-go-on",
            "Commits go on without it",
            "The remaining majority keeps storing entries, so S1 keeps committing. One missing follower does not hold the client up.",
            move |n, _| {
                let c = live(n, s1).map_or(0, |s| s.commit_index.0);
                let first = *at_crash.get_or_insert(c);
                c > first && !n.is_live(down)
            },
        );
        setup.beat(
            "catches-up",
            &format!("{name} restarts and catches up"),
            "It comes back with the log it wrote to disk. The leader kept sending from where that log ends, so the logs still match there, and the next AppendEntries brings everything it missed.",
            move |n, _| {
                let lead = live(n, s1).map_or(0, |s| s.log.len());
                live(n, down).is_some_and(|s| s.log.len() == lead && lead > 0)
            },
        );
    } else {
        setup.beat(
            "all-committed",
            "Every write is committed",
            "Each write committed once a majority stored it.",
            move |n, _| any_commit(n, writes),
        );
    }
}

/// `raft-partition`; with `stale_voter`, the story of `bug=skip-up-to-date-check`.
pub fn partition(setup: &mut Setup, cast: &RaftCast, stale_voter: bool) {
    let s1 = cast.servers[0];
    let s2 = cast.servers[1];
    s1_leads(
        setup,
        s1,
        "S1 booted first and won the election. The client writes through it; the first writes commit.",
    );
    setup.beat(
        "split",
        "The network splits: {S1, S2} | {S3, S4, S5}",
        "S1 and S2 (and the client) can no longer reach the other three servers.",
        move |_, step| was_fault(step, |f| matches!(f, Fault::Partition { side } if side.len() > 1)),
    );
    setup
        .beat(
            "cannot-commit",
            "S1 appends a write it cannot commit",
            "S1 still believes it leads and takes the client's write into its log. Only S2 can store a copy.",
            move |n, step| {
                step.kind != EventKind::Fault
                    && live(n, s1)
                        .is_some_and(|s| s.role == Role::Leader && s.log.len() as u64 > s.commit_index.0)
            },
        )
        .ask(
            "S1 is a leader and S2 stores the write. Will S1 commit it?",
            &[
                "No: 2 of 5 servers are not a majority",
                "Yes: S1 is the leader",
                "Yes, once S2 acknowledges it",
            ],
            0,
            "Committing needs a majority of the whole cluster, 3 of 5; only S1 and S2 can store it.",
        );
    setup.beat(
        "majority-elects",
        "The majority side elects a new leader",
        "S3, S4 and S5 hear no heartbeats, time out and elect one of them in a higher term. That side has 3 of 5: it can commit.",
        move |n, _| leader_above(n, 1).is_some_and(|s| s.id.0 >= 2),
    );
    setup
        .beat(
            "heal",
            "The network heals",
            "Messages flow between the two sides again. S1 still believes it leads term 1.",
            move |_, step| was_fault(step, |f| matches!(f, Fault::Heal)),
        )
        .focus(&["S1"]);
    setup.beat(
        "steps-down",
        "S1 sees the higher term and steps down",
        "A message stamped with the newer term reaches S1. A leader of an older term has no authority: it becomes a follower.",
        move |n, _| live(n, s1).is_some_and(|s| s.role == Role::Follower && s.term > Term(1)),
    );
    if !stale_voter {
        setup.beat(
            "discarded",
            "S1's uncommitted entry is discarded",
            "The new leader's log wins: S1 drops the entry it took during the split, which never committed. No committed write is lost.",
            move |n, _| live(n, s1).is_some_and(|s| s.entries_discarded > 0),
        );
        return;
    }
    setup
        .beat(
            "s2-term-climbs",
            "S2, still cut off, climbs to a higher term",
            "S2 stays cut off after the heal. It misses the writes committed since, and each time its timer runs out it stands again in a higher term.",
            move |n, _| {
                let others = live_servers(n).iter().filter(|s| s.id != s2).map(|s| s.term).max();
                live(n, s2).is_some_and(|s| others.is_some_and(|t| s.term > t))
            },
        )
        .ask(
            "S2's log lacks writes the others committed. When it is back, can it win an election?",
            &["Yes: with the bug, voters skip the log check", "No: the voters see that its log is behind", "Only if S1 votes for it"],
            0,
            "The planted bug skips the up-to-date check (§5.4.1), so S2's higher term is all it needs.",
        );
    setup.beat(
        "stale-leader-wins",
        "S2 wins with a stale log",
        "The voters adopt S2's higher term and vote for it without comparing logs. A leader now lacks committed entries.",
        move |n, _| is_leader(n, s2),
    );
    setup.beat(
        "committed-lost",
        "Committed writes are overwritten",
        "The followers make their logs match S2's and drop entries that were committed and applied. State-machine safety is broken.",
        move |n, _| committed_entry_lost(n),
    );
}

/// `raft-stale-leader`.
pub fn stale_leader(setup: &mut Setup, cast: &RaftCast) {
    let s1 = cast.servers[0];
    s1_leads(setup, s1, "S1 booted first and won the election.");
    setup.beat(
        "freezes",
        "S1 freezes in a GC pause",
        "S1 is frozen, not crashed: it sends nothing and reads nothing, and it does not know time is passing.",
        move |_, step| was_fault(step, |f| matches!(f, Fault::Pause { node, .. } if *node == s1)),
    );
    setup.beat(
        "new-leader",
        "The others elect a leader in a higher term",
        "The followers hear no heartbeats, time out and elect a new leader in a higher term.",
        move |n, _| leader_above(n, 1).is_some_and(|s| s.id != s1),
    );
    setup
        .beat(
            "wakes",
            "S1 wakes, still sure it leads",
            "The pause ends. S1 still believes it is the leader of term 1, and its overdue heartbeat goes out stamped with term 1.",
            move |n, step| step.acted(s1) && is_leader(n, s1),
        )
        .ask(
            "S1's AppendEntries carry term 1; the others are in a higher term. What do they do?",
            &["Accept them: S1 was the leader", "Hold an election", "Reject them: the term is old"],
            2,
            "A server refuses any message from an older term: the term works as a fencing token.",
        );
    setup.beat(
        "steps-down",
        "S1 sees the newer term and steps down",
        "Among the messages that piled up during the pause, the first stamped with the newer term makes S1 a follower.",
        move |n, _| live(n, s1).is_some_and(|s| s.role == Role::Follower && s.term > Term(1)),
    );
    setup.beat(
        "fenced",
        "The old term's AppendEntries are rejected",
        "Each follower refuses S1's term-1 messages and answers with its newer term. The stale leader wrote nothing.",
        move |n, _| live_servers(n).iter().any(|s| s.stale_appends_rejected > 0),
    );
}

/// `raft-figure-8`, for either commit rule.
pub fn figure_8(setup: &mut Setup, cast: &RaftCast, counting: bool) {
    let s1 = cast.servers[0];
    let all = cast.servers.clone();
    let first_four = cast.servers[..4].to_vec();
    let (s2, s5) = (cast.servers[1], cast.servers[4]);
    let term_at = |n: &Nodes<'_>, id: NodeId, index: usize| {
        n.durable::<RaftServer>(id)
            .and_then(|d| d.log.get(index - 1))
            .map(|e| e.term)
    };
    setup.beat(
        "first-commit",
        "S1 commits x=1 at #1",
        "S1 leads term 1 and commits the first write on a majority: every server will keep it.",
        move |n, _| any_commit(n, 1),
    );
    setup.beat(
        "figure-a",
        "(a) S1, term 2: y=2 reaches only S2",
        "S1 wins term 2 and appends y=2 at #2, but its links to S3, S4 and S5 fail: only S1 and S2 store it.",
        move |n, _| term_at(n, s2, 2) == Some(Term(2)),
    );
    setup.beat(
        "figure-b",
        "(b) S5, term 3: z=3 at #2 on S5 alone",
        "S1 crashes; S5 wins term 3 with S3's and S4's votes and appends z=3 at the same index. Then S5 crashes.",
        move |n, _| term_at(n, s5, 2) == Some(Term(3)),
    );
    setup.beat(
        "figure-c",
        "(c) S1 is back and wins term 4",
        "S1 restarts and is elected again. It copies its term-2 entry y=2 to the others.",
        move |n, _| live(n, s1).is_some_and(|s| s.role == Role::Leader && s.term == Term(4)),
    );
    setup
        .beat(
            "majority-stores",
            "y=2 is now on a majority",
            "S1, S2 and S3 store y=2 at #2: three of five servers.",
            move |n, _| {
                all.iter().filter(|id| term_at(n, **id, 2) == Some(Term(2))).count() >= 3
            },
        )
        .ask(
            "y=2 comes from term 2, and S1 leads term 4. May S1 call #2 committed now?",
            &[
                "Yes: a majority stores it",
                "No: only once an entry of its own term 4 is on a majority above it",
                "No: only once every server stores it",
            ],
            1,
            "A server whose log ends in a later term (S5, term 3) could still win and overwrite an older term's entry; the paper's rule waits for an entry of the leader's own term.",
        );
    if counting {
        setup.beat(
            "counted",
            "S1 counts copies and commits y=2",
            "The planted rule counts copies of any entry: S1 commits #2 at once, applies it, and then crashes.",
            move |n, _| live(n, s1).is_some_and(|s| s.commit_index.0 >= 2),
        );
        setup.beat(
            "figure-d",
            "(d) S5 wins term 5",
            "S5's log ends in term 3, later than the others' term 2, so it passes the up-to-date check and is elected.",
            move |n, _| live(n, s5).is_some_and(|s| s.role == Role::Leader),
        );
        setup.beat(
            "overwritten",
            "A committed entry is overwritten",
            "S5 copies z=3 over y=2 at #2 everywhere. An entry that was committed and applied is gone: state-machine safety is broken.",
            move |n, _| first_four.iter().any(|id| term_at(n, *id, 2) == Some(Term(3))),
        );
    } else {
        setup.beat(
            "committed-together",
            "x=4 commits, and y=2 with it",
            "S1 waited for its own term-4 entry x=4 to reach a majority, then committed #3 and #2 beneath it together.",
            move |n, _| live(n, s1).is_some_and(|s| s.commit_index.0 >= 3),
        );
        setup.beat(
            "s5-stands",
            "(e) S5 stands and is refused",
            "S1 crashes and S5 restarts. S5's log ends in term 3; a majority's ends in term 4, so they refuse it.",
            // In term 4 the others refuse S5 for having voted for S1 already; the log check
            // this beat is about decides only from term 5.
            move |n, _| live(n, s5).is_some_and(|s| s.role == Role::Candidate && s.term > Term(4)),
        );
        setup.beat(
            "safe",
            "A leader with y=2 takes over",
            "Only a server holding x=4, and so y=2, can win. The committed entries are safe for good.",
            move |n, _| leader_above(n, 4).is_some_and(|s| s.id != s5),
        );
    }
}

/// `raft-quorum`, for a cluster of `servers`.
pub fn quorum(setup: &mut Setup, cast: &RaftCast, servers: u32) {
    let s1 = cast.servers[0];
    let majority = servers / 2 + 1;
    let tolerated = servers.saturating_sub(1) / 2;
    let up = |n: &Nodes<'_>| live_servers(n).len() as u32;
    s1_leads(
        setup,
        s1,
        "S1 booted first and won the election. The client writes all the time.",
    );
    setup.beat(
        "commits",
        "Writes commit",
        &format!("Each write commits once {majority} of the {servers} servers store it."),
        move |n, _| any_commit(n, 1),
    );
    if servers == 1 {
        setup.beat(
            "leader-crashes",
            "S1 crashes: nothing is left",
            "A cluster of one tolerates no failure: with S1 down, nothing can be written or elected.",
            move |n, _| !n.is_live(s1),
        );
        return;
    }
    if tolerated >= 1 {
        setup
            .beat(
                "first-crash",
                &format!("S{servers} crashes: {} of {servers} still up", servers - 1),
                &format!("{majority} servers are a majority of {servers}, so the leader still commits every write."),
                move |n, _| up(n) == servers - 1,
            )
            .ask(
                "How many more servers can crash before writes stop committing?",
                &["None", "1", "2"],
                (tolerated - 1) as u8,
                &format!("{servers} servers survive {tolerated} failures (⌊(N−1)/2⌋); one is used up."),
            );
    }
    setup.beat(
        "majority-lost",
        &format!("Only {} of {servers} up: the majority is lost", majority - 1),
        &format!(
            "One more crash than the cluster tolerates: {majority} are needed and only {} are up.",
            majority - 1
        ),
        move |n, _| up(n) < majority && n.is_live(s1),
    );
    setup.beat(
        "stuck",
        "S1 appends the write but cannot commit it",
        "The leader still takes the client's write into its log, but not enough servers can store it. The client waits.",
        move |n, _| up(n) < majority && live(n, s1).is_some_and(|s| s.log.len() as u64 > s.commit_index.0),
    );
    // The majority was lost with `majority - 1` up, S1 among them.
    let survivors = majority - 2;
    setup.beat(
        "leader-crashes",
        "S1 crashes: no one can be elected",
        if survivors == 0 {
            "Every server is down now: nothing can be written, and nobody is left to stand for election."
        } else {
            "The survivors time out and stand, but no candidate can collect a majority of votes either."
        },
        move |n, _| !n.is_live(s1),
    );
}

/// `raft-chaos`: only what every storm brings. With a planted bug the logs may never agree
/// again, so the last beat asks only for one leader in one term.
pub fn chaos(setup: &mut Setup, heal_us: u64, bug: bool) {
    setup.beat(
        "storm-begins",
        "The storm begins",
        "The first of the seed's faults strikes: from now on servers crash and freeze, links are cut, and messages are lost, duplicated and reordered.",
        move |_, step| step.kind == EventKind::Fault,
    );
    setup
        .beat(
            "storm-ends",
            "The storm ends: everything heals",
            "Every cut is repaired, held messages go out and crashed servers restart. From here the cluster must settle by itself.",
            move |n, step| n.now_us >= heal_us && was_fault(step, |f| matches!(f, Fault::Heal)),
        )
        .ask(
            "Nothing is broken any more. What happens next?",
            &[
                "The servers agree on one leader and one log by themselves",
                "An operator must pick the new leader",
                "The logs stay different for good",
            ],
            0,
            "Election timeouts and AppendEntries need no help: the next leader brings every log in line with its own.",
        );
    if bug {
        setup.beat(
            "settled",
            "One leader in one term",
            "Every server follows one leader in one term. Whether the logs agree, and whether a safety check broke in the storm, depends on the planted bug and the seed.",
            move |n, _| settled_roles(n),
        );
    } else {
        setup.beat(
            "settled",
            "One leader, one log",
            "Every server follows one leader in one term and holds the same log. The safety checks held at every step of the storm.",
            move |n, _| settled(n) && settled_roles(n),
        );
    }
}
