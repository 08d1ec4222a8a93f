//! How [`LeaseMsg`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::lease::lease_msg::{
    debit_sql, mark_sql, seconds, LeaseMsg, RejectReason, ReleaseMode, WriteCheck,
};

impl Label for LeaseMsg {
    fn label(&self) -> String {
        match self {
            LeaseMsg::Acquire { lease, ttl_ms } => {
                format!("acquire {lease}, ttl {}", seconds(*ttl_ms))
            }
            LeaseMsg::Granted { lease, token, .. } => format!("granted {lease}, token {token}"),
            LeaseMsg::Denied { lease, .. } => format!("{lease} is held: zero rows"),
            LeaseMsg::Release {
                lease,
                mode: ReleaseMode::NaiveDelete,
            } => format!("release {lease}, any owner"),
            LeaseMsg::Release {
                lease,
                mode: ReleaseMode::CompareAndDelete,
            } => format!("release {lease} WHERE owner = me"),
            LeaseMsg::Released { deleted: true, .. } => "released: 1 row".to_string(),
            LeaseMsg::Released { deleted: false, .. } => "released nothing: 0 rows".to_string(),
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
            } => format!(
                "BEGIN; INSERT INTO job_run (job_key) VALUES ('{key}'); {}; COMMIT",
                debit_sql(*amount, *token, *check)
            ),
            LeaseMsg::Touch { token } => format!("heartbeat mark, token {token}: {}", mark_sql(*token)),
            LeaseMsg::WriteResult {
                step, accepted: true, ..
            } => format!("step {step}: UPDATE 1"),
            LeaseMsg::WriteResult {
                accepted: false,
                reason: Some(RejectReason::RunKeyTaken { .. }),
                ..
            } => "duplicate key: ROLLBACK".to_string(),
            LeaseMsg::WriteResult {
                step,
                accepted: false,
                ..
            } => format!("step {step}: UPDATE 0 (rejected)"),
            LeaseMsg::Stamp { token } => {
                format!("stamp: SET last_token = {token} WHERE last_token <= {token} RETURNING last_token")
            }
            LeaseMsg::ReadToken => "SELECT last_token".to_string(),
            LeaseMsg::ReadProgress => "how far has the job got?".to_string(),
            LeaseMsg::Progress { steps_done } => format!("{steps_done} step(s) done"),
            LeaseMsg::TokenIs { last_token } => format!("last_token = {last_token}"),
            LeaseMsg::Pay {
                step,
                amount,
                idempotency_key: Some(key),
            } => format!("pay ₹{amount} (step {step}, key {key})"),
            LeaseMsg::Pay {
                step,
                amount,
                idempotency_key: None,
            } => format!("pay ₹{amount} (step {step})"),
            LeaseMsg::PayResult { applied: true, .. } => "payment sent".to_string(),
            LeaseMsg::PayResult { applied: false, .. } => "replay recognised".to_string(),
            LeaseMsg::InsertJobRow { key } => format!("INSERT job_run ({key})"),
            LeaseMsg::ClaimJob { key } => {
                format!("UPDATE job SET state='running' WHERE key={key} AND state='pending'")
            }
            LeaseMsg::RowsChanged { rows } => format!("{rows} row(s)"),
        }
    }
}

impl RejectReason {
    pub fn text(&self) -> String {
        match self {
            RejectReason::StaleToken { token, highest } => {
                format!("token {token} < {highest}: a newer holder exists")
            }
            RejectReason::RunKeyTaken { key } => format!("run key {key} exists: this run already happened"),
        }
    }
}
