//! How the sentinels agree: each judges the primary alone (subjectively down), a quorum of
//! judgements makes it objectively down, and a majority of votes in one epoch picks the one
//! sentinel that performs the failover. The winner promotes a replica and tells the others.

use super::{Election, Failover, Sentinel};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::Ctx;
use crate::kernel::time::MS_US;
use crate::presentation::narration::redis_locks::redis_sentinel::SentinelSaw;
use crate::protocols::redis_locks::redis_msg::{RedisMsg, Vote};
use rand::Rng;

/// How many ping rounds another sentinel's "it is down" stays valid.
const OPINION_ROUNDS: u64 = 5;

impl Sentinel {
    /// Each round: is the primary silent too long? If so, ask the others what they think.
    pub(super) fn watch_primary(&mut self, ctx: &mut Ctx<'_, Self>) {
        let now = ctx.local_now_us;
        let timeout_us = self.config.failover_timeout_ms * MS_US;
        if let Some(e) = self.election.take_if(|e| now >= e.started_us + timeout_us) {
            ctx.note(SentinelSaw::GivesUpElection {
                me: ctx.me(),
                votes: e.votes.len(),
                needed: self.config.votes_needed(),
                epoch: e.epoch,
            });
        }
        let last = self.last_pong_us.get(&self.primary).copied().unwrap_or(now);
        let silent_us = now.saturating_sub(last);
        let sdown = silent_us > self.config.down_after_ms * MS_US;
        let primary = ctx.name(self.primary);
        match (self.sdown, sdown) {
            (false, true) => ctx.note(SentinelSaw::SubjectivelyDown {
                me: ctx.me(),
                primary,
                silent_ms: silent_us / MS_US,
            }),
            (true, false) => {
                ctx.note(SentinelSaw::AnswersAgain {
                    me: ctx.me(),
                    primary,
                });
                self.odown = false;
                self.said_down_us.clear();
            }
            _ => {}
        }
        self.sdown = sdown;
        if !sdown || self.judge(ctx) {
            return;
        }
        let candidate = self.election.as_ref().map(|_| ctx.node);
        self.ask_others(ctx, candidate);
    }

    /// `SENTINEL is-master-down-by-addr` to every other sentinel; with a candidate, a request
    /// for its vote in the current epoch.
    fn ask_others(&self, ctx: &mut Ctx<'_, Self>, candidate: Option<NodeId>) {
        for s in self.peers(ctx.node) {
            ctx.send(
                s,
                RedisMsg::IsPrimaryDown {
                    primary: self.primary,
                    name: ctx.name(self.primary).to_string(),
                    epoch: self.current_epoch,
                    candidate,
                },
            );
        }
    }

    /// Counts the sentinels that find the primary down; once they reach the quorum it is
    /// objectively down, and a sentinel free to do so starts an election. Returns whether it
    /// started one (which already asked every other sentinel).
    fn judge(&mut self, ctx: &mut Ctx<'_, Self>) -> bool {
        if !self.sdown || self.stopped {
            return false;
        }
        let now = ctx.local_now_us;
        let valid_us = OPINION_ROUNDS * self.config.ping_ms * MS_US;
        let mut agree = vec![ctx.node];
        agree.extend(
            self.said_down_us
                .iter()
                .filter(|(_, at)| now.saturating_sub(**at) <= valid_us)
                .map(|(s, _)| *s),
        );
        let odown = agree.len() as u32 >= self.config.quorum;
        if odown && !self.odown {
            let names: Vec<&str> = agree.iter().map(|s| ctx.name(*s)).collect();
            ctx.note(SentinelSaw::ObjectivelyDown {
                agree: &names,
                primary: ctx.name(self.primary),
                sentinels: self.config.sentinels.len(),
                quorum: self.config.quorum,
            });
        }
        self.odown = odown;
        if odown && self.election.is_none() && now >= self.no_election_before_us {
            self.start_election(ctx);
            return true;
        }
        false
    }

    /// A new epoch: it votes for itself and asks every other sentinel for its vote.
    fn start_election(&mut self, ctx: &mut Ctx<'_, Self>) {
        let now = ctx.local_now_us;
        self.current_epoch += 1;
        let epoch = self.current_epoch;
        self.vote = Some((ctx.node, epoch));
        self.election = Some(Election {
            epoch,
            votes: vec![ctx.node],
            started_us: now,
        });
        self.hold_off(ctx);
        self.persist(ctx);
        ctx.note(SentinelSaw::StartsElection {
            me: ctx.me(),
            primary: ctx.name(self.primary),
            epoch,
            needed: self.config.votes_needed(),
            sentinels: self.config.sentinels.len(),
        });
        self.ask_others(ctx, Some(ctx.node));
    }

    /// No election of its own for twice the failover timeout, plus a random moment so that
    /// sentinels that lost an election together do not retry together.
    fn hold_off(&mut self, ctx: &mut Ctx<'_, Self>) {
        let desync_us = ctx.rng.gen_range(0..self.config.ping_ms) * MS_US;
        self.no_election_before_us =
            ctx.local_now_us + 2 * self.config.failover_timeout_ms * MS_US + desync_us;
    }

    /// Another sentinel asks whether the primary is down, and maybe for its vote.
    pub(super) fn asked(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        primary: NodeId,
        epoch: u64,
        candidate: Option<NodeId>,
    ) {
        let mine = primary == self.primary;
        let vote = match candidate {
            Some(c) if mine && !self.stopped => self.vote_for(ctx, c, epoch),
            _ => None,
        };
        ctx.send(
            from,
            RedisMsg::PrimaryDownReply {
                primary,
                name: ctx.name(primary).to_string(),
                down: mine && self.sdown,
                vote,
            },
        );
    }

    /// One vote per epoch, to the first sentinel that asks; the vote is written to disk
    /// before the answer goes out. Returns its vote in the newest epoch it voted in.
    fn vote_for(&mut self, ctx: &mut Ctx<'_, Self>, candidate: NodeId, epoch: u64) -> Option<Vote> {
        let mut changed = false;
        if epoch > self.current_epoch {
            self.current_epoch = epoch;
            changed = true;
        }
        if self.vote.is_none_or(|(_, e)| e < epoch) && epoch == self.current_epoch {
            self.vote = Some((candidate, epoch));
            changed = true;
            if candidate != ctx.node {
                // Give the chosen sentinel time to finish before trying itself.
                self.election = None;
                self.hold_off(ctx);
                ctx.note(SentinelSaw::VotesFor {
                    me: ctx.me(),
                    candidate: ctx.name(candidate),
                    epoch,
                });
            }
        }
        if changed {
            self.persist(ctx);
        }
        self.vote.map(|(leader, epoch)| Vote {
            leader,
            name: ctx.name(leader).to_string(),
            epoch,
        })
    }

    /// Another sentinel's answer: its judgement of the primary, and maybe a vote.
    pub(super) fn answered(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        primary: NodeId,
        down: bool,
        vote: Option<Vote>,
    ) {
        if primary != self.primary || self.stopped {
            return;
        }
        if down {
            self.said_down_us.insert(from, ctx.local_now_us);
        } else {
            self.said_down_us.remove(&from);
        }
        if let (Some(v), Some(e)) = (vote, self.election.as_mut()) {
            if v.leader == ctx.node && v.epoch == e.epoch && !e.votes.contains(&from) {
                e.votes.push(from);
            }
        }
        if self.judge(ctx) {
            return;
        }
        let won = self
            .election
            .as_ref()
            .filter(|e| e.votes.len() >= self.config.votes_needed())
            .map(|e| (e.epoch, e.votes.len()));
        if let Some((epoch, votes)) = won {
            ctx.note(SentinelSaw::WonElection {
                me: ctx.me(),
                votes,
                sentinels: self.config.sentinels.len(),
                epoch,
            });
            self.fail_over(ctx, epoch);
        }
    }

    /// The elected sentinel promotes the most up-to-date replica it has heard from lately and
    /// points every other node, the clients (once promoted) and the other sentinels at it.
    fn fail_over(&mut self, ctx: &mut Ctx<'_, Self>, epoch: u64) {
        self.election = None;
        let now = ctx.local_now_us;
        // Only a replica that answered one of the last two rounds is a candidate: one that has
        // gone quiet may be down too.
        let recent_us = (2 * self.config.ping_ms + self.config.ping_ms / 2) * MS_US;
        let heard_recently =
            |n: &NodeId| now.saturating_sub(self.last_pong_us.get(n).copied().unwrap_or(0)) <= recent_us;
        // The most up-to-date replica it knows of; ties go to the first in its list.
        let mut best: Option<(NodeId, u64)> = None;
        for n in self
            .config
            .nodes
            .iter()
            .filter(|n| **n != self.primary && heard_recently(n))
        {
            let offset = self.offsets.get(n).copied().unwrap_or(0);
            if best.is_none_or(|(_, b)| offset > b) {
                best = Some((*n, offset));
            }
        }
        let old = self.primary;
        let Some((new, offset)) = best else {
            ctx.note(SentinelSaw::NothingToPromote {
                me: ctx.me(),
                old: ctx.name(old),
            });
            return;
        };
        self.config_epoch = epoch;
        self.primary = new;
        self.sdown = false;
        self.odown = false;
        self.said_down_us.clear();
        let name = ctx.name(new);
        ctx.note(SentinelSaw::Promotes {
            me: ctx.me(),
            new: name,
            offset,
            old: ctx.name(old),
        });
        ctx.send(new, RedisMsg::ReplicaOf { primary: None, epoch });
        for n in &self.config.nodes {
            self.ordered_at_us.insert(*n, now);
        }
        for n in self.config.nodes.clone().into_iter().filter(|n| *n != new) {
            ctx.send(
                n,
                RedisMsg::ReplicaOf {
                    primary: Some((new, name.to_string())),
                    epoch,
                },
            );
        }
        self.announce_pending = true;
        self.failovers.push(Failover {
            from: old,
            to: new,
            epoch,
            offset,
        });
        self.persist(ctx);
        self.send_hello(ctx);
    }

    /// Another sentinel's configuration: a newer epoch wins.
    pub(super) fn hello(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, primary: NodeId, epoch: u64) {
        if epoch <= self.config_epoch {
            return;
        }
        self.primary = primary;
        self.config_epoch = epoch;
        self.current_epoch = self.current_epoch.max(epoch);
        self.election = None;
        self.sdown = false;
        self.odown = false;
        self.said_down_us.clear();
        self.announce_pending = false;
        self.persist(ctx);
        ctx.note(SentinelSaw::AdoptsHello {
            me: ctx.me(),
            from: ctx.name(from),
            primary: ctx.name(primary),
            epoch,
        });
    }
}
