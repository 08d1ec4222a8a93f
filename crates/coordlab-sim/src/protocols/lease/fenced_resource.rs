//! The protected resource: an account row that remembers the highest fencing token that has
//! written to it. A fenced write is one statement, the check part of the write:
//!
//! ```sql
//! UPDATE account_state SET balance_minor = balance_minor - :amount, last_token = :token
//!  WHERE account_id = 42 AND last_token <= :token
//! ```
//!
//! so a stale holder's write simply matches no row. The curriculum writes `<`; this is `<=`
//! because a holder's second write carries the same token as its first. An unfenced write
//! lands whatever it carries; one that carries no token at all is shown as "no token".

use super::lease_msg::{speaks, LeaseMsg, LeasePart, RejectReason, WriteCheck};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, NoTimer, Participant};
use crate::presentation::narration::lease::fenced_resource::{Debit, LedgerSaw};

/// One write the resource saw, accepted or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRecord {
    pub worker: NodeId,
    pub step: u32,
    pub token: FencingToken,
    pub amount: i64,
    pub accepted: bool,
    pub reason: Option<RejectReason>,
    /// The highest token the resource had seen before this write.
    pub highest_before: FencingToken,
    /// Whether the write's statement checked its token (`AND last_token <= :token`).
    pub checked: bool,
}

impl WriteRecord {
    /// Whether the write carried no token at all (unchecked, token 0).
    pub fn carries_no_token(&self) -> bool {
        !self.checked && self.token.0 == 0
    }
}

/// Everything here is the row on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceDurable {
    pub balance: i64,
    pub last_token: FencingToken,
    pub writes: Vec<WriteRecord>,
    /// The highest job step that has been applied.
    pub steps_done: u32,
    /// Rows of `job_run`, in the same database as the account: a run's key, inserted in the
    /// transaction of the debit it guards, and who committed it.
    pub runs: VecMap<String, NodeId>,
    /// Transactions rolled back because their run key was already there.
    pub run_conflicts: u32,
}

/// How the scenario introduces the ledger when it starts: what the learner should know about
/// it in that chapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LedgerIntro {
    /// The lease chapter: it remembers the highest token any write carried.
    RemembersHighest,
    /// Redis: it refuses stale tokens, and cannot check a debit that carries none.
    RefusesStaleOrUnchecked,
    /// The consensus-backed services: it refuses anything below the highest token.
    RefusesBelowHighest,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FencedResource {
    pub intro: LedgerIntro,
    pub durable: ResourceDurable,
    /// Who last raised or wrote `last_token`, as far as this process saw (not a column: a
    /// restart forgets it). Only the narration asks, to say whose token an equal one met.
    pub last_token_by: Option<NodeId>,
}

impl FencedResource {
    /// The row before any write: the opening balance, no token seen.
    pub fn initial(balance: i64) -> ResourceDurable {
        ResourceDurable {
            balance,
            ..ResourceDurable::default()
        }
    }

    /// One step's debit; with `key`, in one transaction with the insert of the run's key into
    /// `job_run`: a key already there rolls the whole transaction back, and a refused debit
    /// takes the key with it.
    fn write(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        from: NodeId,
        (step, amount, token, check): (u32, i64, FencingToken, WriteCheck),
        key: Option<String>,
    ) {
        let who = ctx.name(from);
        let answer = |ctx: &mut Ctx<'_, Self>, accepted, reason| {
            ctx.send(
                from,
                LeaseMsg::WriteResult {
                    step,
                    token,
                    accepted,
                    reason,
                },
            );
        };
        // Only a debit with its run key carries one (and so the key's code goes with it).
        let key = key.filter(|_| speaks(LeasePart::RunKeys));
        if let Some(owner) = key.as_ref().and_then(|k| self.durable.runs.get(k)) {
            let (owner, key) = (ctx.name(*owner), key.clone().unwrap_or_default());
            self.durable.run_conflicts += 1;
            ctx.persist(self.durable.clone());
            ctx.note(LedgerSaw::RunKeyConflict {
                who,
                key: &key,
                owner,
                balance: self.durable.balance,
            });
            return answer(ctx, false, Some(RejectReason::RunKeyTaken { key }));
        }
        let highest = self.durable.last_token;
        let stale = token < highest;
        let checked = check == WriteCheck::TokenPredicate;
        let accepted = !(stale && checked);
        let reason = (!accepted).then_some(RejectReason::StaleToken {
            token,
            highest,
            by_writer: self.last_token_by == Some(from),
        });
        let balance_before = self.durable.balance;
        if accepted {
            if let Some(key) = key {
                ctx.note(LedgerSaw::RunKeyInserted { who, key: &key });
                self.durable.runs.insert(key, from);
            }
            self.durable.balance -= amount;
            self.durable.last_token = highest.max(token);
            self.durable.steps_done = self.durable.steps_done.max(step);
        }
        let debit = match (accepted, stale) {
            _ if check.no_token(token) => Debit::NoToken,
            (true, false) if checked => Debit::Fenced { highest },
            (true, false) => Debit::Unchecked {
                last_token: self.durable.last_token,
            },
            (true, true) => Debit::StaleLanded { highest },
            (false, _) => Debit::Refused {
                highest,
                balance_before,
            },
        };
        ctx.note(LedgerSaw::Debited {
            who,
            step,
            token,
            balance: self.durable.balance,
            debit,
        });
        // The first time `<=` rather than `<` is what lets a write through, say why.
        let first_equal = !self
            .durable
            .writes
            .iter()
            .any(|w| w.checked && w.accepted && w.token == w.highest_before && w.token.0 > 0);
        // Only where the equal token is the writer's own: an equal token from another holder
        // is two grants sharing a number, which `<=` lets through rather than explains.
        let own_equal = self.last_token_by == Some(from);
        if accepted && checked && token == highest && token.0 > 0 && first_equal && own_equal {
            ctx.note(LedgerSaw::WhyLessOrEqual { token });
        }
        if accepted && token.0 > 0 {
            self.last_token_by = Some(from);
        }
        let earlier = self.durable.writes.iter().find(|w| w.accepted && w.step == step);
        if let (true, Some(earlier)) = (accepted, earlier) {
            ctx.note(LedgerSaw::AppliedTwice {
                step,
                earlier: ctx.name(earlier.worker),
                token: (!earlier.carries_no_token()).then_some(earlier.token),
            });
        }
        self.durable.writes.push(WriteRecord {
            worker: from,
            step,
            token,
            amount,
            accepted,
            reason: reason.clone(),
            highest_before: highest,
            checked,
        });
        ctx.persist(self.durable.clone());
        answer(ctx, accepted, reason);
    }
}

impl Participant for FencedResource {
    type Msg = LeaseMsg;
    type Timer = NoTimer;
    type Durable = ResourceDurable;
    type Config = LedgerIntro;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(LedgerSaw::Opens {
            intro: self.intro,
            balance: self.durable.balance,
            last_token: self.durable.last_token,
        });
        ctx.note(LedgerSaw::FencedDebitIs);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let who = ctx.name(from);
        match msg {
            LeaseMsg::Stamp { token } if speaks(LeasePart::Marks) => {
                let before = self.durable.last_token;
                if token >= before {
                    self.durable.last_token = token;
                    self.last_token_by = Some(from);
                    ctx.persist(self.durable.clone());
                    ctx.note(LedgerSaw::Stamped { who, before, token });
                } else {
                    ctx.note(LedgerSaw::StampTooOld { who, token, before });
                }
                let last_token = self.durable.last_token;
                ctx.send(from, LeaseMsg::TokenIs { last_token });
            }
            LeaseMsg::Write {
                step,
                amount,
                token,
                check,
            } => self.write(ctx, from, (step, amount, token, check), None),
            LeaseMsg::WriteWithRunKey {
                step,
                amount,
                token,
                check,
                key,
            } if speaks(LeasePart::RunKeys) => self.write(ctx, from, (step, amount, token, check), Some(key)),
            LeaseMsg::Touch { token } if speaks(LeasePart::Marks) && token > self.durable.last_token => {
                let before = self.durable.last_token;
                self.durable.last_token = token;
                self.last_token_by = Some(from);
                ctx.persist(self.durable.clone());
                ctx.note(LedgerSaw::HeartbeatRaises { who, before, token });
            }
            LeaseMsg::Touch { token } if speaks(LeasePart::Marks) => {
                ctx.note(if token == self.durable.last_token {
                    LedgerSaw::HeartbeatSame { who, token }
                } else {
                    LedgerSaw::HeartbeatOlder {
                        who,
                        token,
                        last_token: self.durable.last_token,
                    }
                })
            }
            LeaseMsg::ReadToken if speaks(LeasePart::Marks) => ctx.send(
                from,
                LeaseMsg::TokenIs {
                    last_token: self.durable.last_token,
                },
            ),
            LeaseMsg::ReadProgress => {
                ctx.note(LedgerSaw::Progress {
                    who,
                    steps_done: self.durable.steps_done,
                });
                ctx.send(
                    from,
                    LeaseMsg::Progress {
                        steps_done: self.durable.steps_done,
                    },
                )
            }
            // Not the ledger's, or a part this build does not speak ([`speaks`]).
            _ => {}
        }
    }

    fn recover(intro: &LedgerIntro, _id: NodeId, durable: &ResourceDurable) -> Self {
        FencedResource {
            intro: *intro,
            durable: durable.clone(),
            last_token_by: None,
        }
    }
}
