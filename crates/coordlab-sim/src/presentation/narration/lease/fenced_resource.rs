//! What the fenced ledger row saw of the writes that reached it, and the sentences it reads as.

use crate::kernel::ids::FencingToken;
use crate::protocols::lease::fenced_resource::LedgerIntro;

/// What became of a debit: the ledger's verdict on its token.
pub enum Debit {
    /// It carries no token: nothing to check.
    NoToken,
    /// Checked: `highest <= token`, so the row matched.
    Fenced { highest: FencingToken },
    /// It carries a token the statement does not check.
    Unchecked { last_token: FencingToken },
    /// Older than `highest`, but unchecked: it lands.
    StaleLanded { highest: FencingToken },
    /// Checked and older than `highest`: it matches no row.
    Refused {
        highest: FencingToken,
        balance_before: i64,
    },
}

/// One thing the fenced ledger saw; `who` is the writer.
pub enum LedgerSaw<'a> {
    Opens {
        intro: LedgerIntro,
        balance: i64,
        last_token: FencingToken,
    },
    FencedDebitIs,
    Stamped {
        who: &'a str,
        before: FencingToken,
        token: FencingToken,
    },
    StampTooOld {
        who: &'a str,
        token: FencingToken,
        before: FencingToken,
    },
    HeartbeatRaises {
        who: &'a str,
        before: FencingToken,
        token: FencingToken,
    },
    HeartbeatSame {
        who: &'a str,
        token: FencingToken,
    },
    HeartbeatOlder {
        who: &'a str,
        token: FencingToken,
        last_token: FencingToken,
    },
    Progress {
        who: &'a str,
        steps_done: u32,
    },
    RunKeyConflict {
        who: &'a str,
        key: &'a str,
        owner: &'a str,
        balance: i64,
    },
    RunKeyInserted {
        who: &'a str,
        key: &'a str,
    },
    Debited {
        who: &'a str,
        step: u32,
        token: FencingToken,
        balance: i64,
        debit: Debit,
    },
    /// The first time `<=` rather than `<` let an equal token through.
    WhyLessOrEqual {
        token: FencingToken,
    },
    /// Step `step` applied a second time; `token` is what the earlier write carried.
    AppliedTwice {
        step: u32,
        earlier: &'a str,
        token: Option<FencingToken>,
    },
}

impl From<LedgerSaw<'_>> for String {
    fn from(saw: LedgerSaw<'_>) -> String {
        use LedgerSaw::*;
        match saw {
            Opens {
                intro,
                balance,
                last_token,
            } => {
                let highest = if last_token.0 == 0 {
                    "none yet".to_string()
                } else {
                    last_token.to_string()
                };
                let minor = balance * 100;
                let holds = format!(
                    "The ledger holds account 42 at ₹{balance} (balance_minor {minor}, in paise)"
                );
                match intro {
                    LedgerIntro::RemembersHighest => format!(
                        "{holds}. It remembers the highest fencing token any write has carried ({highest})."
                    ),
                    LedgerIntro::RefusesStaleOrUnchecked => format!(
                        "{holds}. It refuses a debit whose token is lower than the highest it has seen ({highest}); a debit without a token it cannot check at all."
                    ),
                    LedgerIntro::RefusesBelowHighest => format!(
                        "{holds} and refuses any write whose token is below the highest it has seen."
                    ),
                }
            }
            FencedDebitIs => "A fenced debit is one statement: UPDATE account_state SET balance_minor = balance_minor - :amount, last_token = :token WHERE account_id = 42 AND last_token <= :token. Zero rows updated means a newer holder exists.".to_string(),
            Stamped { who, before, token } => format!(
                "{who} stamps the row: last_token goes from {before} to {token}. A write with an older token now matches no row."
            ),
            StampTooOld { who, token, before } => {
                format!("{who}'s stamp carries {token}, older than the row's {before}: UPDATE 0.")
            }
            HeartbeatRaises { who, before, token } => format!(
                "{who}'s heartbeat mark raises the row's last_token from {before} to {token}."
            ),
            HeartbeatSame { who, token } => format!(
                "{who}'s heartbeat mark carries token {token}, which the row already has: UPDATE 0, nothing changes."
            ),
            HeartbeatOlder {
                who,
                token,
                last_token,
            } => format!(
                "{who}'s heartbeat mark carries token {token}, older than the {last_token} the row has seen: UPDATE 0, it changes nothing."
            ),
            Progress { who, steps_done } => format!(
                "The ledger tells {who} that {steps_done} step(s) of the job are recorded."
            ),
            RunKeyConflict {
                who,
                key,
                owner,
                balance,
            } => format!(
                "{who}'s INSERT of {key} into job_run conflicts: {owner} committed this run already. The whole transaction rolls back, the debit with it: the balance stays ₹{balance}."
            ),
            RunKeyInserted { who, key } => format!(
                "In the same transaction {who} inserts {key} into job_run: the key and the debit commit together, or neither does."
            ),
            Debited {
                who,
                step,
                token,
                balance,
                debit,
            } => match debit {
                Debit::NoToken => format!(
                    "The ledger applies {who}'s step {step}, which carries no token: balance ₹{balance}."
                ),
                Debit::Fenced { highest } => format!(
                    "The ledger applies {who}'s step {step}: last_token was {highest}, and {highest} <= {token}, so the row matches. UPDATE 1: balance ₹{balance}, last_token {token}."
                ),
                Debit::Unchecked { last_token } => format!(
                    "The ledger applies {who}'s step {step}. It carries token {token}, but the statement does not check it: balance ₹{balance}, last_token {last_token}."
                ),
                Debit::StaleLanded { highest } => format!(
                    "{who}'s write carries token {token}, older than {highest} — but nothing checks it, so it lands: balance ₹{balance}. A stale holder just changed the account."
                ),
                Debit::Refused {
                    highest,
                    balance_before,
                } => format!(
                    "The ledger refuses {who}'s step {step}: last_token is {highest}, and {highest} <= {token} is false, so the statement matches no row. UPDATE 0: the balance stays ₹{balance_before}."
                ),
            },
            WhyLessOrEqual { token } => format!(
                "Why <= where the curriculum writes <: last_token is already {token}, from this holder's own mark or earlier write. With < a holder would lock itself out after its first write. <= refuses every older token but lets an equal one through, so no two grants may share a number."
            ),
            AppliedTwice {
                step,
                earlier,
                token,
            } => {
                let carried = match token {
                    None => "with no token".to_string(),
                    Some(token) => format!("with token {token}"),
                };
                format!(
                    "Step {step} had already been applied by {earlier} {carried}: the account is now debited for it twice."
                )
            }
        }
    }
}
