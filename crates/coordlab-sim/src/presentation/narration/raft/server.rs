//! What a Raft server saw as it kept its term, voted, led and replicated, and the sentences it
//! reads as. `me` is the server's own name; other names are the peers' it dealt with.

use crate::protocols::raft::{Command, LogIndex, Role, Term};

/// Where a candidate's log ends and where the voter's own ends: (last index, its term).
#[derive(Clone, Copy)]
pub struct LogEnds {
    pub candidate: (LogIndex, Term),
    pub own: (LogIndex, Term),
}

/// One thing a Raft server saw while handling a message, a timer or its start.
pub enum RaftServerSaw<'a> {
    Started {
        me: &'a str,
        term: Term,
    },
    /// With the planted bug forget-vote-on-restart: `whom` it voted for (`itself` or a name).
    CameBackWithoutVote {
        me: &'a str,
        whom: &'a str,
        term: Term,
    },
    TimerRanOutAfterDemo {
        me: &'a str,
    },
    /// A message of a newer `term` from `sender`; `old` is its own term before, `was` its role.
    AdoptedTerm {
        me: &'a str,
        sender: &'a str,
        term: Term,
        old: Term,
        was: Role,
    },
    /// `forced`: the user ran the timer out early, rather than it firing.
    StoodForElection {
        me: &'a str,
        forced: bool,
        term: Term,
    },
    BecameLeader {
        me: &'a str,
        votes: usize,
        cluster: usize,
        term: Term,
    },
    VoteRefusedStaleTerm {
        me: &'a str,
        candidate: &'a str,
        term: Term,
        mine: Term,
    },
    /// The planted bug skip-up-to-date-check granted a vote its log check would have refused.
    VoteGrantedUnchecked {
        me: &'a str,
        candidate: &'a str,
        term: Term,
        logs: LogEnds,
    },
    /// A second vote in `term`: the one for `first` was lost in a restart.
    SecondVote {
        me: &'a str,
        candidate: &'a str,
        term: Term,
        first: &'a str,
    },
    VoteGranted {
        me: &'a str,
        candidate: &'a str,
        term: Term,
    },
    VoteRefusedAlreadyVoted {
        me: &'a str,
        candidate: &'a str,
        voted_for: &'a str,
        term: Term,
    },
    VoteRefusedLogBehind {
        me: &'a str,
        candidate: &'a str,
        logs: LogEnds,
    },
    HeartbeatsEndWithDemo {
        me: &'a str,
    },
    /// It committed up to `index`, from `old`; every entry between commits with it.
    Committed {
        me: &'a str,
        index: LogIndex,
        old: LogIndex,
        stored: usize,
        cluster: usize,
    },
    /// With the planted bug commit-old-term-by-count: `index` was written in `written`.
    CommittedOldTermEntry {
        me: &'a str,
        index: LogIndex,
        written: Term,
        term: Term,
    },
    AppliedForClient {
        me: &'a str,
        index: LogIndex,
        command: &'a Command,
    },
    StaleAppendRejected {
        me: &'a str,
        leader: &'a str,
        term: Term,
        mine: Term,
    },
    /// A candidate or leader (`was`) heard from the `leader` of its own term.
    FollowsLeaderOfItsTerm {
        me: &'a str,
        leader: &'a str,
        term: Term,
        was: Role,
    },
    NoEntryToAppendAfter {
        me: &'a str,
        prev_log_index: LogIndex,
        prev_log_term: Term,
    },
    /// It dropped entries from `index` on, where `leader`'s log differs; up to `commit` they
    /// are committed.
    DroppedEntries {
        me: &'a str,
        leader: &'a str,
        dropped: u64,
        index: LogIndex,
        commit: LogIndex,
    },
    LearnedCommit {
        me: &'a str,
        leader: &'a str,
        commit: LogIndex,
    },
    SteppedBackFor {
        me: &'a str,
        follower: &'a str,
        next: LogIndex,
    },
    /// A client wrote to a server that does not lead; `leader` is whom it points to.
    NotLeader {
        me: &'a str,
        leader: Option<&'a str>,
    },
    Appended {
        me: &'a str,
        command: &'a Command,
        index: LogIndex,
        term: Term,
    },
}

impl From<RaftServerSaw<'_>> for String {
    fn from(saw: RaftServerSaw<'_>) -> String {
        use RaftServerSaw::*;
        match saw {
            Started { me, term } => {
                format!("{me} starts as a follower in term {term} and waits to hear from a leader.")
            }
            CameBackWithoutVote { me, whom, term } => format!(
                "{me} comes back with no vote on record: its vote for {whom} in term {term} was never kept on disk (the planted bug forget-vote-on-restart)."
            ),
            TimerRanOutAfterDemo { me } => {
                format!("{me}'s timer ran out, but the demo is over: no more elections.")
            }
            AdoptedTerm {
                me,
                sender,
                term,
                old,
                was: Role::Leader,
            } => format!(
                "{me} sees term {term} from {sender} — newer than its own term {old}. A leader from an older term has no authority, so it steps down to follower."
            ),
            AdoptedTerm {
                me,
                sender,
                term,
                old,
                was: Role::Candidate,
            } => format!("{me} gives up its candidacy in term {old}: {sender} is already in term {term}."),
            AdoptedTerm {
                me,
                sender,
                term,
                old,
                was: Role::Follower,
            } => format!("{me} moves from term {old} to term {term}, learned from {sender}."),
            StoodForElection { me, forced, term } => {
                let why = if forced {
                    "'s election timer is forced to run out now, whatever it has heard"
                } else {
                    " heard no leader for a whole election timeout"
                };
                format!("{me}{why}. It becomes a candidate in term {term}, votes for itself and asks the others.")
            }
            BecameLeader {
                me,
                votes,
                cluster,
                term,
            } => format!(
                "{me} has {votes} of {cluster} votes — a majority — and is LEADER of term {term}. It announces itself with a heartbeat at once."
            ),
            VoteRefusedStaleTerm {
                me,
                candidate,
                term,
                mine,
            } => format!("{me} refuses to vote for {candidate}: its term {term} is older than {me}'s term {mine}."),
            VoteGrantedUnchecked {
                me,
                candidate,
                term,
                logs,
            } => {
                let ((their_end, their_term), (my_end, my_term)) = (logs.candidate, logs.own);
                format!(
                    "{me} grants its vote to {candidate} in term {term} without checking that {candidate}'s log is at least as up to date as its own (§5.4.1) — the planted bug. {candidate}'s log ends at {their_end} in term {their_term}, {me}'s at {my_end} in term {my_term}: {candidate} may lack entries that are already committed."
                )
            }
            SecondVote {
                me,
                candidate,
                term,
                first,
            } => format!(
                "{me} votes for {candidate} in term {term}, its second vote in this term: the vote it gave {first} before its crash was not kept on disk (the planted bug), so it finds none on record. Raft writes the term and the vote to disk before it replies to a candidate, so that a restart can never free a vote (§5.2)."
            ),
            VoteGranted { me, candidate, term } => format!(
                "{me} votes for {candidate} in term {term}: it has not voted for anyone else this term and {candidate}'s log is at least as up to date as its own."
            ),
            VoteRefusedAlreadyVoted {
                me,
                candidate,
                voted_for,
                term,
            } => format!(
                "{me} refuses {candidate}: it already voted for {voted_for} in term {term}, and a server votes once per term."
            ),
            VoteRefusedLogBehind { me, candidate, logs } => {
                let ((their_end, their_term), (my_end, my_term)) = (logs.candidate, logs.own);
                format!(
                    "{me} refuses {candidate}: {candidate}'s log (last term {their_term}, length {}) is behind its own (last term {my_term}, length {}), so {candidate} might lack committed entries.",
                    their_end.0,
                    my_end.0
                )
            }
            HeartbeatsEndWithDemo { me } => {
                format!("{me} reaches the end of the demo and sets no more timers.")
            }
            Committed {
                me,
                index,
                old,
                stored,
                cluster,
            } => {
                if index.0 > old.0 + 1 {
                    format!(
                        "{me} commits up to {index}: {stored} of {cluster} servers store it, and every entry before it commits with it (from {}).",
                        old.next()
                    )
                } else {
                    format!("{me} commits up to {index}: {stored} of {cluster} servers store it.")
                }
            }
            CommittedOldTermEntry {
                me,
                index,
                written,
                term,
            } => format!(
                "But {index} was written in term {written}, not in {me}'s term {term}: the paper lets a leader count copies only of its own term's entries (§5.4.2), and the planted bug skips that rule. Unless a leader of term {written} already committed it, a server whose log ends in a later term can still be elected without {index}."
            ),
            AppliedForClient { me, index, command } => {
                format!("{me} applies {index} ({command}) and tells the client it is done.")
            }
            StaleAppendRejected {
                me,
                leader,
                term,
                mine,
            } => format!(
                "{me} rejects AppendEntries from {leader}: it carries term {term}, but {me} is in term {mine}. The term works as a fencing token: a deposed leader cannot write."
            ),
            FollowsLeaderOfItsTerm {
                me,
                leader,
                term,
                was: Role::Candidate | Role::Follower,
            } => format!(
                "{me} hears from {leader}, leader of its own term {term}, and goes back to follower."
            ),
            FollowsLeaderOfItsTerm {
                me,
                leader,
                term,
                was: Role::Leader,
            } => format!(
                "{me} hears from {leader}, another leader of its own term {term}. Two leaders in one term: one vote per term should have made that impossible. {me} gives way and follows {leader}."
            ),
            NoEntryToAppendAfter {
                me,
                prev_log_index,
                prev_log_term,
            } => format!(
                "{me} cannot append after {prev_log_index}: its log has no entry of term {prev_log_term} there. The leader will step back and retry."
            ),
            // Only a leader elected without a committed entry asks for this.
            DroppedEntries {
                me,
                leader,
                dropped,
                index,
                commit,
            } if index <= commit => format!(
                "{me} drops {dropped} {} from {index} on because {leader}'s log differs there — yet {me} knows entries up to {commit} are committed. A leader of a correct cluster holds every committed entry (§5.4); {leader} was elected without them, and committed writes are lost.",
                entries(dropped)
            ),
            DroppedEntries {
                me, dropped, index, ..
            } => format!(
                "{me} drops {dropped} {} from {index} on: they conflict with the leader's log, and it knows of no commit among them.",
                entries(dropped)
            ),
            LearnedCommit { me, leader, commit } => {
                format!("{me} learns from {leader} that entries up to {commit} are committed.")
            }
            SteppedBackFor { me, follower, next } => {
                format!("{follower}'s log does not match; {me} steps back to {next} for it and retries.")
            }
            NotLeader { me, leader } => format!(
                "{me} is not the leader and will not take writes; it points the client to {}.",
                leader.unwrap_or("nobody (it knows no leader)")
            ),
            Appended {
                me,
                command,
                index,
                term,
            } => format!(
                "{me} appends {command} at {index} in term {term}; it is not committed until a majority stores it."
            ),
        }
    }
}

/// `entry` or `entries`, for a count of dropped entries.
fn entries(count: u64) -> &'static str {
    if count == 1 {
        "entry"
    } else {
        "entries"
    }
}
