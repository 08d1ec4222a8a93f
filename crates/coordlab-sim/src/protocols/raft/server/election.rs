//! Leader election (§5.2) and the rule for all servers (§5.1): the election timer, terms,
//! candidacies, votes and the step to leader.

use super::{RaftServer, RaftTimer};
use crate::kernel::collections::VecSet;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Ctx;
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
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
            ctx.note(format!(
                "{}'s timer ran out, but the demo is over: no more elections.",
                ctx.me()
            ));
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
        match was {
            Role::Leader => {
                ctx.cancel_timer(RaftTimer::Heartbeat);
                ctx.note(format!(
                    "{me} sees term {term} from {sender} — newer than its own term {old}. A leader from an older term has no authority, so it steps down to follower."
                ));
                self.reset_election_timer(ctx);
            }
            Role::Candidate => ctx.note(format!(
                "{me} gives up its candidacy in term {old}: {sender} is already in term {term}."
            )),
            Role::Follower => ctx.note(format!(
                "{me} moves from term {old} to term {term}, learned from {sender}."
            )),
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
        let why = if forced {
            "'s election timer is forced to run out now, whatever it has heard"
        } else {
            " heard no leader for a whole election timeout"
        };
        ctx.note(format!(
            "{}{why}. It becomes a candidate in term {}, votes for itself and asks the others.",
            ctx.me(),
            self.term
        ));
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
        ctx.note(format!(
            "{} has {} of {} votes — a majority — and is LEADER of term {}. It announces itself with a heartbeat at once.",
            ctx.me(),
            self.votes.len(),
            self.config.cluster.len(),
            self.term
        ));
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
            ctx.note(format!(
                "{me} refuses to vote for {candidate}: its term {term} is older than {me}'s term {}.",
                self.term
            ));
            ctx.send(
                from,
                RaftMsg::Vote {
                    term: self.term,
                    granted: false,
                },
            );
            return;
        }
        let (my_term, my_len) = (self.last_term(), self.last_index());
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
                ctx.note(format!(
                    "{me} grants its vote to {candidate} in term {term} without checking that {candidate}'s log is at least as up to date as its own (§5.4.1) — the planted bug. {candidate}'s log ends at {last_log_index} in term {last_log_term}, {me}'s at {my_len} in term {my_term}: {candidate} may lack entries that are already committed."
                ));
            } else if let Some((_, first)) = self.forgotten_vote.filter(|(t, v)| *t == term && *v != from) {
                let first = if first == self.id {
                    "itself"
                } else {
                    ctx.name(first)
                };
                ctx.note(format!(
                    "{me} votes for {candidate} in term {term}, its second vote in this term: the vote it gave {first} before its crash was not kept on disk (the planted bug), so it finds none on record. Raft writes the term and the vote to disk before it replies to a candidate, so that a restart can never free a vote (§5.2)."
                ));
            } else {
                ctx.note(format!(
                    "{me} votes for {candidate} in term {term}: it has not voted for anyone else this term and {candidate}'s log is at least as up to date as its own."
                ));
            }
        } else if !free {
            ctx.note(format!(
                "{me} refuses {candidate}: it already voted for {} in term {term}, and a server votes once per term.",
                self.voted_for.map_or("", |v| ctx.name(v))
            ));
        } else {
            ctx.note(format!(
                "{me} refuses {candidate}: {candidate}'s log (last term {last_log_term}, length {}) is behind its own (last term {my_term}, length {}), so {candidate} might lack committed entries.",
                last_log_index.0,
                my_len.0
            ));
        }
        ctx.send(
            from,
            RaftMsg::Vote {
                term: self.term,
                granted,
            },
        );
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
