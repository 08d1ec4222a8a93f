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

use super::lease_msg::{LeaseMsg, RejectReason, WriteCheck};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::{FencingToken, NodeId};
use crate::kernel::participant::{Ctx, NoTimer, Participant};

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

    /// The token as a table shows it: `no token`, `33`, or `33 (unchecked)`.
    pub fn token_text(&self) -> String {
        match (self.checked, self.carries_no_token()) {
            (_, true) => "no token".to_string(),
            (false, false) => format!("{} (unchecked)", self.token),
            (true, false) => self.token.to_string(),
        }
    }
}

/// Everything here is the row on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
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
}

impl FencedResource {
    /// The row before any write: the opening balance, no token seen.
    pub fn initial(balance: i64) -> ResourceDurable {
        ResourceDurable {
            balance,
            last_token: FencingToken(0),
            writes: Vec::new(),
            steps_done: 0,
            runs: VecMap::new(),
            run_conflicts: 0,
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
            } => self.write(ctx, from, (step, amount, token, check), None),
            LeaseMsg::WriteWithRunKey {
                step,
                amount,
                token,
                check,
                key,
            } => self.write(ctx, from, (step, amount, token, check), Some(key)),
            LeaseMsg::Touch { token } if token > self.durable.last_token => {
                let before = self.durable.last_token;
                self.durable.last_token = token;
                ctx.persist(self.durable.clone());
                ctx.note(format!(
                    "{who}'s heartbeat mark raises the row's last_token from {before} to {token}."
                ));
            }
            LeaseMsg::Touch { token } => ctx.note(if token == self.durable.last_token {
                format!("{who}'s heartbeat mark carries token {token}, which the row already has: UPDATE 0, nothing changes.")
            } else {
                format!(
                    "{who}'s heartbeat mark carries token {token}, older than the {} the row has seen: UPDATE 0, it changes nothing.",
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
        if let Some(owner) = key.as_ref().and_then(|k| self.durable.runs.get(k)) {
            let (owner, key) = (ctx.name(*owner), key.clone().unwrap_or_default());
            self.durable.run_conflicts += 1;
            ctx.persist(self.durable.clone());
            ctx.note(format!(
                "{who}'s INSERT of {key} into job_run conflicts: {owner} committed this run already. The whole transaction rolls back, the debit with it: the balance stays ₹{}.",
                self.durable.balance
            ));
            let reason = Some(RejectReason::RunKeyTaken { key });
            ctx.send(
                from,
                LeaseMsg::WriteResult {
                    step,
                    token,
                    accepted: false,
                    reason,
                },
            );
            return;
        }
        let highest = self.durable.last_token;
        let stale = token < highest;
        let checked = check == WriteCheck::TokenPredicate;
        let accepted = !(stale && checked);
        let reason = (!accepted).then_some(RejectReason::StaleToken { token, highest });
        let balance_before = self.durable.balance;
        if accepted {
            if let Some(key) = key {
                ctx.note(format!(
                    "In the same transaction {who} inserts {key} into job_run: the key and the debit commit together, or neither does."
                ));
                self.durable.runs.insert(key, from);
            }
            self.durable.balance -= amount;
            self.durable.last_token = highest.max(token);
            self.durable.steps_done = self.durable.steps_done.max(step);
        }
        let balance = self.durable.balance;
        ctx.note(match (accepted, stale) {
            _ if check.no_token(token) => format!(
                "The ledger applies {who}'s step {step}, which carries no token: balance ₹{balance}."
            ),
            (true, false) if checked => format!(
                "The ledger applies {who}'s step {step}: last_token was {highest}, and {highest} <= {token}, so the row matches. UPDATE 1: balance ₹{balance}, last_token {token}."
            ),
            (true, false) => format!(
                "The ledger applies {who}'s step {step}. It carries token {token}, but the statement does not check it: balance ₹{balance}, last_token {}.",
                self.durable.last_token
            ),
            (true, true) => format!(
                "{who}'s write carries token {token}, older than {highest} — but nothing checks it, so it lands: balance ₹{balance}. A stale holder just changed the account."
            ),
            (false, _) => format!(
                "The ledger refuses {who}'s step {step}: last_token is {highest}, and {highest} <= {token} is false, so the statement matches no row. UPDATE 0: the balance stays ₹{balance_before}."
            ),
        });
        // The first time `<=` rather than `<` is what lets a write through, say why.
        let first_equal = !self
            .durable
            .writes
            .iter()
            .any(|w| w.checked && w.accepted && w.token == w.highest_before && w.token.0 > 0);
        if accepted && checked && token == highest && token.0 > 0 && first_equal {
            ctx.note(format!(
                "Why <= where the curriculum writes <: last_token is already {token}, from this holder's own mark or earlier write. With < a holder would lock itself out after its first write. <= refuses every older token but lets an equal one through, so no two grants may share a number."
            ));
        }
        let earlier = self.durable.writes.iter().find(|w| w.accepted && w.step == step);
        if let (true, Some(earlier)) = (accepted, earlier) {
            let carried = match earlier.carries_no_token() {
                true => "with no token".to_string(),
                false => format!("with token {}", earlier.token),
            };
            ctx.note(format!(
                "Step {step} had already been applied by {} {carried}: the account is now debited for it twice.",
                ctx.name(earlier.worker)
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
            checked,
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
                "The ledger holds account 42 at ₹{} (balance_minor {}, in paise). It remembers the highest fencing token any write has carried ({highest}).",
                d.balance,
                d.balance * 100
            ),
            LedgerIntro::RefusesStaleOrUnchecked => format!(
                "The ledger holds account 42 at ₹{} (balance_minor {}, in paise). It refuses a debit whose token is lower than the highest it has seen ({highest}); a debit without a token it cannot check at all.",
                d.balance,
                d.balance * 100
            ),
            LedgerIntro::RefusesBelowHighest => format!(
                "The ledger holds account 42 at ₹{} (balance_minor {}, in paise) and refuses any write whose token is below the highest it has seen.",
                d.balance,
                d.balance * 100
            ),
        });
        ctx.note(
            "A fenced debit is one statement: UPDATE account_state SET balance_minor = balance_minor - :amount, last_token = :token WHERE account_id = 42 AND last_token <= :token. Zero rows updated means a newer holder exists.",
        );
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
}
