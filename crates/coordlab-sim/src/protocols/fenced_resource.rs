//! The protected resource: an account row that remembers the highest fencing token that has
//! written to it. A fenced write applies the check in the same atomic step as the write —
//! `WHERE last_token <= :token` — so a stale holder's write simply does not land. An
//! unfenced write lands whatever it carries.

use super::lease_msg::{LeaseMsg, RejectReason, WriteCheck};
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, NoTimer, Participant, ViewCtx};

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
}

/// Everything here is the row on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceDurable {
    pub balance: i64,
    pub last_token: FencingToken,
    pub writes: Vec<WriteRecord>,
    /// The highest job step that has been applied.
    pub steps_done: u32,
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
}

impl FencedResource {
    /// The row before any write: the opening balance, no token seen.
    pub fn initial(balance: i64) -> ResourceDurable {
        ResourceDurable {
            balance,
            last_token: FencingToken(0),
            writes: Vec::new(),
            steps_done: 0,
        }
    }

    pub fn handle(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let who = ctx.name(from);
        match msg {
            LeaseMsg::Stamp { token } => {
                let before = self.durable.last_token;
                if token >= before {
                    self.durable.last_token = token;
                    ctx.persist(self.durable.clone());
                    ctx.note(format!("{who} stamps the row: last_token goes from {before} to {token}. A write with an older token now matches no row."));
                } else {
                    ctx.note(format!("{who}'s stamp carries {token}, older than the row's {before}: UPDATE 0."));
                }
                let last_token = self.durable.last_token;
                ctx.send(from, LeaseMsg::TokenIs { last_token });
            }
            LeaseMsg::Write {
                step,
                amount,
                token,
                check,
            } => {
                let highest = self.durable.last_token;
                let stale = token < highest;
                let accepted = !(stale && check == WriteCheck::TokenPredicate);
                let reason = (!accepted).then_some(RejectReason::StaleToken { token, highest });
                if accepted {
                    self.durable.balance -= amount;
                    self.durable.last_token = highest.max(token);
                    self.durable.steps_done = self.durable.steps_done.max(step);
                }
                ctx.note(match (accepted, stale) {
                    (true, false) if token.0 == 0 && check == WriteCheck::Unfenced => format!(
                        "The ledger applies {who}'s step {step}: balance ₹{}.",
                        self.durable.balance
                    ),
                    (true, false) => format!(
                        "The ledger applies {who}'s step {step} (token {token}): balance ₹{}. Highest token seen: {}.",
                        self.durable.balance, self.durable.last_token
                    ),
                    (true, true) => format!(
                        "{who}'s write carries token {token}, older than {highest} — but nothing checks it, so it lands: balance ₹{}. A stale holder just changed the account.",
                        self.durable.balance
                    ),
                    (false, _) => format!(
                        "Rejected: {token} < {highest}. The predicate is part of the write, so {who}'s stale step {step} changes nothing. Zero rows updated."
                    ),
                });
                let earlier = self
                    .durable
                    .writes
                    .iter()
                    .find(|w| w.accepted && w.step == step);
                if let (true, Some(earlier)) = (accepted, earlier) {
                    ctx.note(format!(
                        "Step {step} had already been applied by {} (token {}): the account is now debited for it twice.",
                        ctx.name(earlier.worker),
                        earlier.token
                    ));
                }
                self.durable.writes.push(WriteRecord {
                    worker: from,
                    step,
                    token,
                    amount,
                    accepted,
                    reason: reason.clone(),
                    highest_before: highest,
                });
                ctx.persist(self.durable.clone());
                ctx.send(
                    from,
                    LeaseMsg::WriteResult {
                        step,
                        token,
                        accepted,
                        reason,
                    },
                );
            }
            LeaseMsg::Touch { token } if token > self.durable.last_token => {
                self.durable.last_token = token;
                ctx.persist(self.durable.clone());
                ctx.note(format!(
                    "{who}'s heartbeat mark raises the row's highest token to {token}."
                ));
            }
            LeaseMsg::Touch { token } => ctx.note(if token == self.durable.last_token {
                format!("{who}'s heartbeat mark carries token {token}, which the row already has: nothing changes.")
            } else {
                format!(
                    "{who}'s heartbeat mark carries token {token}, older than the {} the row has seen: it changes nothing.",
                    self.durable.last_token
                )
            }),
            LeaseMsg::ReadToken => ctx.send(
                from,
                LeaseMsg::TokenIs {
                    last_token: self.durable.last_token,
                },
            ),
            LeaseMsg::ReadProgress => {
                ctx.note(format!(
                    "The ledger tells {who} that {} step(s) of the job are recorded.",
                    self.durable.steps_done
                ));
                ctx.send(
                    from,
                    LeaseMsg::Progress {
                        steps_done: self.durable.steps_done,
                    },
                )
            }
            _ => {}
        }
    }

    pub fn summary(&self) -> Vec<String> {
        vec![
            format!("balance ₹{}", self.durable.balance),
            format!("highest token {}", self.durable.last_token),
        ]
    }
}

impl Participant for FencedResource {
    type Msg = LeaseMsg;
    type Timer = NoTimer;
    type Durable = ResourceDurable;
    type Config = LedgerIntro;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        let d = &self.durable;
        let highest = if d.last_token.0 == 0 {
            "none yet".to_string()
        } else {
            d.last_token.to_string()
        };
        ctx.note(match self.intro {
            LedgerIntro::RemembersHighest => format!(
                "The ledger holds account 42 at ₹{}. It remembers the highest fencing token any write has carried ({highest}).",
                d.balance
            ),
            LedgerIntro::RefusesStaleOrUnchecked => format!(
                "The ledger holds account 42 at ₹{}. It refuses a debit whose token is lower than the highest it has seen ({highest}); a debit without a token it cannot check at all.",
                d.balance
            ),
            LedgerIntro::RefusesBelowHighest => format!(
                "The ledger holds account 42 at ₹{} and refuses any write whose token is below the highest it has seen.",
                d.balance
            ),
        });
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        self.handle(ctx, from, msg);
    }

    fn recover(intro: &LedgerIntro, _id: NodeId, durable: &ResourceDurable) -> Self {
        FencedResource {
            intro: *intro,
            durable: durable.clone(),
        }
    }

    fn summary(&self, _view: &ViewCtx<'_>) -> Vec<String> {
        FencedResource::summary(self)
    }
}
