//! Log replication (§5.3) and the commit rule (§5.4.2): the leader's heartbeat rounds and
//! AppendEntries, the followers' consistency check, commit and apply, and client writes.

use super::{RaftServer, RaftTimer};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Ctx;
use crate::presentation::narration::raft::server::RaftServerSaw;
use crate::protocols::raft::msg::{ClientAnswer, RaftMsg};
use crate::protocols::raft::types::{keeps_kv, Command, Entry, LogIndex, RaftBug, Role, Term};

/// Most entries one AppendEntries carries; the rest follow in the next round.
const MAX_ENTRIES_PER_APPEND: usize = 16;

impl RaftServer {
    /// The heartbeat timer fired: a leader sends its round, a candidate re-asks the voters
    /// that have not answered; either sets the next round.
    pub(super) fn heartbeat_round(&mut self, ctx: &mut Ctx<'_, Self>) {
        if !self.before_horizon(ctx) {
            ctx.note(RaftServerSaw::HeartbeatsEndWithDemo { me: ctx.me() });
            return;
        }
        match self.role {
            Role::Leader => self.broadcast_append(ctx),
            Role::Candidate => self.ask_for_votes(ctx),
            Role::Follower => return,
        }
        ctx.set_timer(RaftTimer::Heartbeat, self.heartbeat_us());
    }

    fn send_append(&self, ctx: &mut Ctx<'_, Self>, to: NodeId) {
        let next = self
            .next_index
            .get(&to)
            .copied()
            .unwrap_or(LogIndex(1))
            .max(LogIndex(1));
        let next = next.min(self.last_index().next());
        let prev = next.prev();
        let start = prev.0 as usize;
        let end = self.log.len().min(start + MAX_ENTRIES_PER_APPEND);
        ctx.send(
            to,
            RaftMsg::AppendEntries {
                term: self.term,
                prev_log_index: prev,
                prev_log_term: self.term_at(prev).unwrap_or(Term(0)),
                entries: self.log[start..end].to_vec(),
                leader_commit: self.commit_index,
            },
        );
    }

    pub(super) fn broadcast_append(&self, ctx: &mut Ctx<'_, Self>) {
        for p in self.peers() {
            self.send_append(ctx, p);
        }
    }

    /// §5.3/§5.4.2: the leader commits the highest index of its own term stored on a majority.
    pub(super) fn advance_commit(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.role != Role::Leader {
            return;
        }
        let mut n = self.last_index();
        while n > self.commit_index {
            let stored = 1 + self.match_index.values().filter(|m| **m >= n).count();
            let own_term = self.term_at(n) == Some(self.term);
            let allowed = own_term || self.config.bug == RaftBug::CommitOldTermByCount;
            if stored >= self.config.majority() && allowed {
                let old = self.commit_index;
                self.commit_index = n;
                ctx.note(RaftServerSaw::Committed {
                    me: ctx.me(),
                    index: n,
                    old,
                    stored,
                    cluster: self.config.cluster.len(),
                });
                if !own_term {
                    ctx.note(RaftServerSaw::CommittedOldTermEntry {
                        me: ctx.me(),
                        index: n,
                        written: self.term_at(n).unwrap_or_default(),
                        term: self.term,
                    });
                }
                break;
            }
            n = n.prev();
        }
        self.apply(ctx);
    }

    fn apply(&mut self, ctx: &mut Ctx<'_, Self>) {
        while self.last_applied < self.commit_index {
            let i = self.last_applied.next();
            let Some(entry) = self.log.get(i.0 as usize - 1).cloned() else {
                break;
            };
            self.last_applied = i;
            let answer = match &entry.command {
                Command::Set { key, value } => {
                    if keeps_kv() {
                        self.kv.insert(key.clone(), *value);
                    }
                    ClientAnswer::Committed { index: i }
                }
                Command::Lock(op) => ClientAnswer::Locked {
                    index: i,
                    result: self.locks.apply(i.0, op),
                },
            };
            if let Some((client, id)) = self.pending.remove(&i) {
                ctx.note(RaftServerSaw::AppliedForClient {
                    me: ctx.me(),
                    index: i,
                    command: &entry.command,
                });
                ctx.send(client, RaftMsg::ClientReply { id, answer });
            }
        }
    }

    /// Answers an AppendEntries this server will not take (stale term, or no matching entry
    /// at `prev_log_index`), after noting `why`. The reply carries where this log ends so the
    /// leader can step back; both refusals send the same reply, only their notes differ.
    fn refuse_append(&self, ctx: &mut Ctx<'_, Self>, leader: NodeId, why: RaftServerSaw<'_>) {
        ctx.note(why);
        ctx.send(
            leader,
            RaftMsg::AppendReply {
                term: self.term,
                success: false,
                index: self.last_index(),
            },
        );
    }

    /// An AppendEntries from `from` (the server's dispatch hands over no other message).
    pub(super) fn on_append(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RaftMsg) {
        let RaftMsg::AppendEntries {
            term,
            prev_log_index,
            prev_log_term,
            entries,
            leader_commit,
        } = msg
        else {
            return;
        };
        let (me, leader) = (ctx.me(), ctx.name(from));
        if term < self.term {
            self.stale_appends_rejected += 1;
            let why = RaftServerSaw::StaleAppendRejected {
                me,
                leader,
                term,
                mine: self.term,
            };
            return self.refuse_append(ctx, from, why);
        }
        if self.role != Role::Follower {
            // A leader gets here only by a planted bug: one vote per term allows one leader per term.
            ctx.note(RaftServerSaw::FollowsLeaderOfItsTerm {
                me,
                leader,
                term: self.term,
                was: self.role,
            });
            ctx.cancel_timer(RaftTimer::Heartbeat);
            self.role = Role::Follower;
        }
        self.leader_hint = Some(from);
        self.reset_election_timer(ctx);
        if self.term_at(prev_log_index) != Some(prev_log_term) {
            let why = RaftServerSaw::NoEntryToAppendAfter {
                me,
                prev_log_index,
                prev_log_term,
            };
            return self.refuse_append(ctx, from, why);
        }
        let mut changed = false;
        for (k, entry) in entries.iter().enumerate() {
            let index = LogIndex(prev_log_index.0 + 1 + k as u64);
            match self.term_at(index) {
                Some(t) if t == entry.term => continue,
                Some(_) => {
                    let dropped = self.log.len() as u64 - index.0 + 1;
                    self.entries_discarded += dropped;
                    self.log.truncate(index.0 as usize - 1);
                    self.log_cuts += 1;
                    ctx.note(RaftServerSaw::DroppedEntries {
                        me,
                        leader,
                        dropped,
                        index,
                        commit: self.commit_index,
                    });
                    self.log.push(entry.clone());
                }
                None => self.log.push(entry.clone()),
            }
            changed = true;
        }
        if changed {
            self.persist(ctx);
        }
        let matched = LogIndex(prev_log_index.0 + entries.len() as u64);
        if leader_commit > self.commit_index {
            let new = leader_commit.min(matched);
            if new > self.commit_index {
                self.commit_index = new;
                ctx.note(RaftServerSaw::LearnedCommit {
                    me,
                    leader,
                    commit: new,
                });
            }
        }
        self.apply(ctx);
        ctx.send(
            from,
            RaftMsg::AppendReply {
                term: self.term,
                success: true,
                index: matched,
            },
        );
    }

    pub(super) fn on_append_reply(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        term: Term,
        success: bool,
        index: LogIndex,
    ) {
        if self.role != Role::Leader || term != self.term {
            return;
        }
        if success {
            let m = self.match_index.get_or_insert_with(from, Default::default);
            if index > *m {
                *m = index;
            }
            let next = self.next_index.get_or_insert_with(from, || LogIndex(1));
            if index.next() > *next {
                *next = index.next();
            }
            self.advance_commit(ctx);
            if self.next_index.get(&from).copied().unwrap_or_default() <= self.last_index() {
                self.send_append(ctx, from);
            }
        } else {
            let next = self.next_index.get_or_insert_with(from, || LogIndex(1));
            let stepped = next.prev().min(index.next()).max(LogIndex(1));
            *next = stepped;
            ctx.note(RaftServerSaw::SteppedBackFor {
                me: ctx.me(),
                follower: ctx.name(from),
                next: stepped,
            });
            self.send_append(ctx, from);
        }
    }

    pub(super) fn on_client_request(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        id: u32,
        command: Command,
    ) {
        if self.role != Role::Leader {
            let hint = self.leader_hint.filter(|l| *l != self.id);
            ctx.note(RaftServerSaw::NotLeader {
                me: ctx.me(),
                leader: hint.map(|l| ctx.name(l)),
            });
            ctx.send(
                from,
                RaftMsg::ClientReply {
                    id,
                    answer: ClientAnswer::NotLeader { leader: hint },
                },
            );
            return;
        }
        if self.pending.values().any(|(c, i)| *c == from && *i == id) {
            return; // already in the log and waiting to commit
        }
        let index = self.append_command(ctx, command);
        // Before committing: a one-server cluster commits (and answers) at once.
        self.pending.insert(index, (from, id));
        self.broadcast_append(ctx);
        self.advance_commit(ctx);
    }

    /// The leader appends `command` to its log and starts replicating it; no client waits
    /// for the answer (e.g. the lock service's own expiry entries). `None` if not the leader.
    pub fn propose(&mut self, ctx: &mut Ctx<'_, Self>, command: Command) -> Option<LogIndex> {
        if self.role != Role::Leader {
            return None;
        }
        let index = self.append_command(ctx, command);
        self.broadcast_append(ctx);
        self.advance_commit(ctx);
        Some(index)
    }

    fn append_command(&mut self, ctx: &mut Ctx<'_, Self>, command: Command) -> LogIndex {
        self.log.push(Entry {
            term: self.term,
            command: command.clone(),
        });
        self.persist(ctx);
        let index = self.last_index();
        ctx.note(RaftServerSaw::Appended {
            me: ctx.me(),
            command: &command,
            index,
            term: self.term,
        });
        index
    }
}
