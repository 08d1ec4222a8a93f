//! Conformance: the statements coordlab's scenarios show, run against a real PostgreSQL and
//! a real Redis in the order the scenario's trace gives, with each worker played by its own
//! connection. Every reply, row, token and final state must equal the model's.
//!
//! One source: the SQL a lost-update worker sends is its message's label
//! ([`coordlab_sim::protocols::database::sql::SqlRequest::sql_text`]); the lease table's statement is
//! the one the player's "last statement on lease" table shows; a ledger write's SQL is the
//! tail of its label ([`coordlab_sim::presentation::labels::lease::lease_msg::debit_sql`]); a Redis command is
//! read back from its label ([`coordlab_sim::protocols::redis_locks::redis_msg::RedisMsg::parse_client_command`]).
//! Nothing here writes a statement of its own except the fixture (tables and the opening rows,
//! read from the first snapshot) and the harness's clock (`SET coordlab.now_us`).
//!
//! The tests skip, saying why, unless the servers' addresses are in the environment
//! (`COORDLAB_PG_URL`, `COORDLAB_REDIS_PRIMARY`, `COORDLAB_REDIS_REPLICA`,
//! `COORDLAB_REDIS_REPLICA_2`);
//! `scripts/conformance.sh` starts the servers, sets them and `COORDLAB_CONFORMANCE_REQUIRED=1`,
//! under which a missing address fails instead.

use std::io::Write;

pub mod connection;
pub mod pg;
pub mod pg_advisory;
pub mod pg_conflicts;
pub mod pg_locks;
pub mod redis_check;
pub mod trace_walk;

/// What a check found: the steps it replayed (for the log) and every disagreement.
#[derive(Debug, Default)]
pub struct Report {
    pub log: Vec<String>,
    pub mismatches: Vec<String>,
}

impl Report {
    pub fn step(&mut self, line: String) {
        self.log.push(line);
    }

    pub fn expect_eq(&mut self, what: &str, real: &str, model: &str) {
        if real != model {
            self.mismatches
                .push(format!("{what}: real `{real}`, model `{model}`"));
        }
    }

    pub fn mismatch(&mut self, text: String) {
        self.mismatches.push(text);
    }

    /// The log and the mismatches as one text, for a test's output.
    pub fn text(&self) -> String {
        let mut out = self.log.join("\n");
        for m in &self.mismatches {
            out.push_str("\nMISMATCH ");
            out.push_str(m);
        }
        out
    }
}

/// A server address from the environment. `None` (the test skips) when it is absent, unless
/// `COORDLAB_CONFORMANCE_REQUIRED=1`, when its absence is a failure.
pub fn server_env(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => Some(v),
        _ if std::env::var("COORDLAB_CONFORMANCE_REQUIRED").is_ok_and(|v| v == "1") => {
            panic!("{name} is not set, and COORDLAB_CONFORMANCE_REQUIRED=1: run scripts/conformance.sh")
        }
        _ => {
            // Straight to stderr: the test harness captures eprintln!, and a skip should show.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: {name} is not set; scripts/conformance.sh starts the servers and sets it"
            );
            None
        }
    }
}
