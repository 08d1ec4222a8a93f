//! How [`ExpiryTimer`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::durations::seconds;
use crate::protocols::lease::lease_msg::ReleaseMode;
use crate::protocols::lease::lease_store::{
    sequence_name, ExpiryTimer, LeaseStore, ReleaseStyle, TokenSource,
};

impl Label for ExpiryTimer {
    fn label(&self) -> String {
        format!("{} (token {}) reaches its expiry", self.lease, self.token)
    }
}

/// The statements the store runs, with their values bound, as the narration and the
/// statements table show them.
impl LeaseStore {
    /// The acquisition statement with its values bound, one clause per line.
    pub fn acquire_sql(&self, lease: &str, me: &str, ttl_ms: u64) -> Vec<String> {
        let ttl = format!("interval '{}'", seconds(ttl_ms));
        let (first, next) = match self.config.tokens {
            TokenSource::Row => ("1".to_string(), "lease.fence_token + 1".to_string()),
            TokenSource::Sequence => (
                format!("nextval('{}')", sequence_name(lease)),
                "excluded.fence_token".to_string(),
            ),
        };
        let token = if self.config.renewal_increments_token {
            format!("       fence_token = {next},")
        } else {
            format!(
                "       fence_token = CASE WHEN lease.owner = '{me}' THEN lease.fence_token ELSE {next} END,"
            )
        };
        vec![
            "INSERT INTO lease (name, owner, fence_token, acquired_at, expires_at)".to_string(),
            format!("VALUES ('{lease}', '{me}', {first}, now(), now() + {ttl})"),
            "ON CONFLICT (name) DO UPDATE".to_string(),
            format!("   SET owner = '{me}',"),
            token,
            format!("       acquired_at = now(), expires_at = now() + {ttl}"),
            format!(" WHERE lease.expires_at < now() OR lease.owner = '{me}'"),
            "RETURNING fence_token;".to_string(),
        ]
    }

    /// The release statement with its values bound, and its command tag (`DELETE`/`UPDATE`).
    pub fn release_sql(&self, lease: &str, me: &str, mode: ReleaseMode) -> (String, &'static str) {
        let owner = match mode {
            ReleaseMode::CompareAndDelete => format!(" AND owner = '{me}'"),
            ReleaseMode::NaiveDelete => String::new(),
        };
        match self.config.release {
            ReleaseStyle::Delete => (
                format!("DELETE FROM lease WHERE name = '{lease}'{owner};"),
                "DELETE",
            ),
            ReleaseStyle::Expire => (
                format!("UPDATE lease SET expires_at = now() WHERE name = '{lease}'{owner};"),
                "UPDATE",
            ),
        }
    }
}
