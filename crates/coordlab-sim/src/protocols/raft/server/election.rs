//! Leader election (§5.2) and the rule for all servers (§5.1): the election timer, terms,
//! candidacies, votes and the step to leader.

use super::{RaftServer, RaftTimer};
use crate::kernel::collections::VecSet;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Ctx;
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::presentation::narration::raft::server::{LogEnds, RaftServerSaw};
use crate::protocols::raft::msg::RaftMsg;
use crate::protocols::raft::types::{LogIndex, RaftBug, Role, Term};

impl RaftServer {
    pub(super) fn reset_election_timer(&mut self, ctx: &mut Ctx<'_, Self>) {
        if !self.before_horizon(ctx) {
            ctx.cancel_timer(RaftTimer::Election);
            self.election_deadline_us = None;
            return;
        }
        let (min_us, max_us) = match self.first_timeout_ms.take() {
            Some((a, b)) => (a * MS_US, b.max(a) * MS_US),
            None => self.config.election_range_us(),
        };
        let after = between_us(ctx.rng, min_us, max_us);
        ctx.set_timer(RaftTimer::Election, after);
        self.election_deadline_us = Some(ctx.local_now_us + after);
        self.election_timeout_us = after;
    }

    /// The election timer fired: stand for election, unless leading or past the demo's end.
    pub(super) fn election_timeout(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.election_deadline_us = None;
        if !self.before_horizon(ctx) {
            ctx.note(RaftServerSaw::TimerRanOutAfterDemo { me: ctx.me() });
        } else if self.role != Role::Leader {
            self.start_election(ctx, false);
        }
    }

    /// Rule for all servers (§5.1): a higher term wins; adopt it and become a follower.
    pub(super) fn adopt_term(&mut self, ctx: &mut Ctx<'_, Self>, term: Term, from: NodeId) {
        let was = self.role;
        let old = self.term;
        self.term = term;
        self.voted_for = None;
        self.role = Role::Follower;
        self.votes.clear();
        self.pending.clear();
        self.persist(ctx);
        let (me, sender) = (ctx.me(), ctx.name(from));
        if was == Role::Leader {
            ctx.cancel_timer(RaftTimer::Heartbeat);
        }
        ctx.note(RaftServerSaw::AdoptedTerm {
            me,
            sender,
            term,
            old,
            was,
        });
        if was == Role::Leader {
            self.reset_election_timer(ctx);
        }
    }

    /// `forced`: the user ran the timer out early (an input), rather than it firing.
    pub(super) fn start_election(&mut self, ctx: &mut Ctx<'_, Self>, forced: bool) {
        self.term = Term(self.term.0 + 1);
        self.role = Role::Candidate;
        self.voted_for = Some(self.id);
        self.leader_hint = None;
        self.votes = VecSet::from([self.id]);
        self.answered = VecSet::from([self.id]);
        ctx.note(RaftServerSaw::StoodForElection {
            me: ctx.me(),
            forced,
            term: self.term,
        });
        self.reset_election_timer(ctx);
        if self.votes.len() >= self.config.majority() {
            self.persist(ctx);
            self.become_leader(ctx);
            return;
        }
        self.ask_for_votes(ctx);
        // The requests go out first and the new term and self-vote are written while they
        // travel (with a durable-write cost, only what is sent after a persist waits for it):
        // the write ends long before any answer can come back, and a candidate that crashed
        // before it would only lose a candidacy nobody else has counted.
        self.persist(ctx);
        if self.before_horizon(ctx) {
            ctx.set_timer(RaftTimer::Heartbeat, self.heartbeat_us());
        }
    }

    /// Asks every peer that has not answered this candidacy yet.
    pub(super) fn ask_for_votes(&mut self, ctx: &mut Ctx<'_, Self>) {
        for p in self.peers() {
            if !self.answered.contains(&p) {
                ctx.send(
                    p,
                    RaftMsg::RequestVote {
                        term: self.term,
                        last_log_index: self.last_index(),
                        last_log_term: self.last_term(),
                    },
                );
            }
        }
    }

    fn become_leader(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.role = Role::Leader;
        self.leader_hint = Some(self.id);
        ctx.cancel_timer(RaftTimer::Election);
        self.election_deadline_us = None;
        let next = self.last_index().next();
        self.next_index = self.peers().into_iter().map(|p| (p, next)).collect();
        self.match_index = self.peers().into_iter().map(|p| (p, LogIndex(0))).collect();
        ctx.note(RaftServerSaw::BecameLeader {
            me: ctx.me(),
            votes: self.votes.len(),
            cluster: self.config.cluster.len(),
            term: self.term,
        });
        self.broadcast_append(ctx);
        if self.before_horizon(ctx) {
            ctx.set_timer(RaftTimer::Heartbeat, self.heartbeat_us());
        }
        // A one-server cluster commits on its own.
        self.advance_commit(ctx);
    }

    pub(super) fn on_request_vote(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        term: Term,
        last_log_index: LogIndex,
        last_log_term: Term,
    ) {
        let (me, candidate) = (ctx.me(), ctx.name(from));
        if term < self.term {
            ctx.note(RaftServerSaw::VoteRefusedStaleTerm {
                me,
                candidate,
                term,
                mine: self.term,
            });
            return self.answer_vote(ctx, from, false);
        }
        let (my_term, my_len) = (self.last_term(), self.last_index());
        let logs = LogEnds {
            candidate: (last_log_index, last_log_term),
            own: (my_len, my_term),
        };
        let really_up_to_date =
            last_log_term > my_term || (last_log_term == my_term && last_log_index >= my_len);
        let skipped = !really_up_to_date && self.config.bug == RaftBug::SkipUpToDateCheck;
        let up_to_date = really_up_to_date || skipped;
        let free = self.voted_for.is_none() || self.voted_for == Some(from);
        let granted = free && up_to_date;
        if granted {
            self.voted_for = Some(from);
            self.persist(ctx);
            self.reset_election_timer(ctx);
            if skipped {
                ctx.note(RaftServerSaw::VoteGrantedUnchecked {
                    me,
                    candidate,
                    term,
                    logs,
                });
            } else if let Some((_, first)) = self.forgotten_vote.filter(|(t, v)| *t == term && *v != from) {
                let first = if first == self.id {
                    "itself"
                } else {
                    ctx.name(first)
                };
                ctx.note(RaftServerSaw::SecondVote {
                    me,
                    candidate,
                    term,
                    first,
                });
            } else {
                ctx.note(RaftServerSaw::VoteGranted { me, candidate, term });
            }
        } else if !free {
            ctx.note(RaftServerSaw::VoteRefusedAlreadyVoted {
                me,
                candidate,
                voted_for: self.voted_for.map_or("", |v| ctx.name(v)),
                term,
            });
        } else {
            ctx.note(RaftServerSaw::VoteRefusedLogBehind { me, candidate, logs });
        }
        self.answer_vote(ctx, from, granted);
    }

    /// Tells `candidate` whether it has this server's vote, in this server's term.
    fn answer_vote(&self, ctx: &mut Ctx<'_, Self>, candidate: NodeId, granted: bool) {
        let term = self.term;
        ctx.send(candidate, RaftMsg::Vote { term, granted });
    }

    pub(super) fn on_vote(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, term: Term, granted: bool) {
        if self.role != Role::Candidate || term != self.term {
            return; // a late answer to an election that is over
        }
        self.answered.insert(from);
        if !granted {
            return;
        }
        self.votes.insert(from);
        if self.votes.len() >= self.config.majority() {
            ctx.cancel_timer(RaftTimer::Heartbeat);
            self.become_leader(ctx);
        }
    }

    /// The user input `timeout`: the election timer runs out now, through the same path as
    /// when it fires.
    pub(super) fn force_timeout(&mut self, ctx: &mut Ctx<'_, Self>) -> Result<(), String> {
        if self.role == Role::Leader {
            // A leader has no election timer to run out; asking it to stand again would only
            // bump the term and depose itself, which is not what the button promises.
            return Err(format!(
                "{} is the leader; it runs no election timer, it sends heartbeats",
                ctx.me()
            ));
        }
        if !self.before_horizon(ctx) {
            return Err("the demo is over, so no more elections start".into());
        }
        self.election_deadline_us = None;
        self.start_election(ctx, true);
        Ok(())
    }
}
