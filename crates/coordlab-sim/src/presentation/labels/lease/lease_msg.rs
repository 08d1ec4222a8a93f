//! How [`LeaseMsg`] reads on the picture's arrows and in the event log.

use crate::kernel::ids::FencingToken;
use crate::kernel::participant::Label;
use crate::presentation::durations::seconds;
use crate::protocols::lease::lease_msg::{
    speaks, LeaseMsg, LeasePart, RejectReason, ReleaseMode, WriteCheck,
};

impl Label for LeaseMsg {
    fn label(&self) -> String {
        match self {
            LeaseMsg::Acquire { lease, ttl_ms } if speaks(LeasePart::Store) => {
                format!("acquire {lease}, ttl {}", seconds(*ttl_ms))
            }
            LeaseMsg::Granted { lease, token, .. } if speaks(LeasePart::Store) => {
                format!("granted {lease}, token {token}")
            }
            LeaseMsg::Denied { lease, .. } if speaks(LeasePart::Store) => {
                format!("{lease} is held: zero rows")
            }
            LeaseMsg::Release {
                lease,
                mode: ReleaseMode::NaiveDelete,
            } if speaks(LeasePart::Store) => format!("release {lease}, any owner"),
            LeaseMsg::Release {
                lease,
                mode: ReleaseMode::CompareAndDelete,
            } if speaks(LeasePart::Store) => format!("release {lease} WHERE owner = me"),
            LeaseMsg::Released { deleted: true, .. } if speaks(LeasePart::Store) => {
                "released: 1 row".to_string()
            }
            LeaseMsg::Released { deleted: false, .. } if speaks(LeasePart::Store) => {
                "released nothing: 0 rows".to_string()
            }
            LeaseMsg::Write {
                step,
                amount,
                token,
                check,
            } => {
                let carries = match check {
                    _ if check.no_token(*token) => "no token".to_string(),
                    WriteCheck::TokenPredicate => format!("token {token}"),
                    WriteCheck::Unfenced => format!("token {token} unchecked"),
                };
                format!(
                    "step {step}, ₹{amount}, {carries}: {}",
                    debit_sql(*amount, *token, *check)
                )
            }
            LeaseMsg::WriteWithRunKey {
                amount,
                token,
                check,
                key,
                ..
            } if speaks(LeasePart::RunKeys) => format!(
                "BEGIN; INSERT INTO job_run (job_key) VALUES ('{key}'); {}; COMMIT",
                debit_sql(*amount, *token, *check)
            ),
            LeaseMsg::Touch { token } if speaks(LeasePart::Marks) => {
                format!("heartbeat mark, token {token}: {}", mark_sql(*token))
            }
            LeaseMsg::WriteResult {
                step, accepted: true, ..
            } => format!("step {step}: UPDATE 1"),
            LeaseMsg::WriteResult {
                accepted: false,
                reason: Some(RejectReason::RunKeyTaken { .. }),
                ..
            } if speaks(LeasePart::RunKeys) => "duplicate key: ROLLBACK".to_string(),
            LeaseMsg::WriteResult {
                step,
                accepted: false,
                ..
            } => format!("step {step}: UPDATE 0 (rejected)"),
            LeaseMsg::Stamp { token } if speaks(LeasePart::Marks) => {
                format!("stamp: SET last_token = {token} WHERE last_token <= {token} RETURNING last_token")
            }
            LeaseMsg::ReadToken if speaks(LeasePart::Marks) => "SELECT last_token".to_string(),
            LeaseMsg::ReadProgress => "how far has the job got?".to_string(),
            LeaseMsg::Progress { steps_done } => format!("{steps_done} step(s) done"),
            LeaseMsg::TokenIs { last_token } if speaks(LeasePart::Marks) => {
                format!("last_token = {last_token}")
            }
            LeaseMsg::Pay {
                step,
                amount,
                idempotency_key: Some(key),
            } if speaks(LeasePart::Payments) => format!("pay ₹{amount} (step {step}, key {key})"),
            LeaseMsg::Pay {
                step,
                amount,
                idempotency_key: None,
            } if speaks(LeasePart::Payments) => format!("pay ₹{amount} (step {step})"),
            LeaseMsg::PayResult { applied: true, .. } if speaks(LeasePart::Payments) => {
                "payment sent".to_string()
            }
            LeaseMsg::PayResult { applied: false, .. } if speaks(LeasePart::Payments) => {
                "replay recognised".to_string()
            }
            LeaseMsg::InsertJobRow { key } if speaks(LeasePart::JobTable) => {
                format!("INSERT job_run ({key})")
            }
            LeaseMsg::ClaimJob { key } if speaks(LeasePart::JobTable) => {
                format!("UPDATE job SET state='running' WHERE key={key} AND state='pending'")
            }
            LeaseMsg::RowsChanged { rows } if speaks(LeasePart::JobTable) => format!("{rows} row(s)"),
            // A part no scenario of this build sends ([`speaks`]): its words stay out.
            _ => String::new(),
        }
    }
}

impl RejectReason {
    pub fn text(&self) -> String {
        match self {
            RejectReason::StaleToken { token, highest, .. } => {
                format!("token {token} < {highest}: a newer holder exists")
            }
            RejectReason::RunKeyTaken { key } if speaks(LeasePart::RunKeys) => {
                format!("run key {key} exists: this run already happened")
            }
            // No scenario of this build writes run keys ([`speaks`]).
            RejectReason::RunKeyTaken { .. } => String::new(),
        }
    }
}

/// The statement a step's debit runs on the ledger, with its values bound: amounts are in
/// paise (`balance_minor`), so ₹10 is `1000`.
pub fn debit_sql(amount: i64, token: FencingToken, check: WriteCheck) -> String {
    let set = format!(
        "UPDATE account_state SET balance_minor = balance_minor - {}",
        amount * 100
    );
    match check {
        WriteCheck::TokenPredicate => {
            format!("{set}, last_token = {token} WHERE account_id = 42 AND last_token <= {token}")
        }
        _ if check.no_token(token) => format!("{set} WHERE account_id = 42"),
        WriteCheck::Unfenced => {
            format!("{set}, last_token = GREATEST(last_token, {token}) WHERE account_id = 42")
        }
    }
}

/// The statement of a heartbeat mark, with its value bound.
pub fn mark_sql(token: FencingToken) -> String {
    format!("UPDATE account_state SET last_token = {token} WHERE account_id = 42 AND last_token < {token}")
}
