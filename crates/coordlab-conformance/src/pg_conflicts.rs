//! PostgreSQL's row-lock conflict table, checked on a real server against the one the
//! simulator decides with ([`CONFLICTS`], behind [`LockMode::conflicts_with`]).
//!
//! For every pair of `row-lock-modes` statements on customer 1 (`SELECT … FOR` each of the
//! four modes, the child `INSERT` whose foreign-key check locks the customer, the `UPDATE` of
//! its name and its `DELETE`), one connection runs the first and keeps its transaction open;
//! a second runs the other under `lock_timeout`. SQLSTATE 55P03 means it would have waited.
//! The statements are the simulator's own text ([`DbRequest::sql_text`]).

use crate::Report;
use coordlab_sim::protocols::database::db_sql::{DbRequest, RowAccess, LOCK_NOT_AVAILABLE};
use coordlab_sim::protocols::database::row_locks::{LockMode, CONFLICTS};
use postgres::{Client, NoTls};

const SCHEMA: &str = "
DROP TABLE IF EXISTS orders, customers;
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id serial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers (id));
INSERT INTO customers VALUES (1, 'Asha');
";

/// How long the second statement may wait before it counts as blocked.
const LOCK_TIMEOUT_MS: u32 = 200;

/// The statements of `row-lock-modes` that lock customer 1.
pub fn locking_accesses() -> Vec<RowAccess> {
    let mut out: Vec<RowAccess> = LockMode::ALL.into_iter().map(RowAccess::SelectFor).collect();
    out.extend([RowAccess::InsertChild, RowAccess::UpdateName, RowAccess::Delete]);
    out
}

fn sql(access: RowAccess) -> String {
    DbRequest::Customer { access }.sql_text()
}

/// Two connections to the server with the fixture loaded.
pub struct Pair {
    holder: Client,
    asker: Client,
}

impl Pair {
    pub fn connect(url: &str) -> Result<Pair, String> {
        let mut holder = Client::connect(url, NoTls).map_err(|e| format!("connect {url}: {e}"))?;
        holder
            .batch_execute(SCHEMA)
            .map_err(|e| format!("fixture: {e}"))?;
        let asker = Client::connect(url, NoTls).map_err(|e| format!("connect {url}: {e}"))?;
        Ok(Pair { holder, asker })
    }

    /// Whether `requested` waits on the real server while another transaction has run `held`.
    /// Both transactions are rolled back, so the fixture stays as it was.
    pub fn conflicts(&mut self, held: RowAccess, requested: RowAccess) -> Result<bool, String> {
        let first = sql(held);
        self.holder
            .batch_execute(&format!("BEGIN; {first}"))
            .map_err(|e| format!("`{first}`: {e}"))?;
        let second = sql(requested);
        self.asker
            .batch_execute(&format!("BEGIN; SET LOCAL lock_timeout = '{LOCK_TIMEOUT_MS}ms'"))
            .map_err(|e| e.to_string())?;
        let answer = match self.asker.batch_execute(&second) {
            Ok(()) => Ok(false),
            Err(e)
                if e.as_db_error()
                    .is_some_and(|d| d.code().code() == LOCK_NOT_AVAILABLE) =>
            {
                Ok(true)
            }
            Err(e) => Err(format!("`{second}` after `{first}`: {e}")),
        };
        self.asker.batch_execute("ROLLBACK").map_err(|e| e.to_string())?;
        self.holder.batch_execute("ROLLBACK").map_err(|e| e.to_string())?;
        answer
    }
}

fn word(waits: bool) -> &'static str {
    if waits {
        "waits"
    } else {
        "ok"
    }
}

/// The full table on the server at `url`: the 4×4 of the modes (against [`CONFLICTS`]) and
/// every pair of the scenario's locking statements (against the modes they take).
pub fn check(url: &str) -> Report {
    let mut report = Report::default();
    let mut pair = match Pair::connect(url) {
        Ok(p) => p,
        Err(e) => {
            report.mismatch(e);
            return report;
        }
    };
    let accesses = locking_accesses();
    for held in &accesses {
        for requested in &accesses {
            let (Some(h), Some(r)) = (held.lock(), requested.lock()) else {
                continue;
            };
            let model = match (held, requested) {
                (RowAccess::SelectFor(_), RowAccess::SelectFor(_)) => CONFLICTS[h as usize][r as usize],
                _ => h.conflicts_with(r),
            };
            let what = format!("`{}` then `{}`", sql(*held), sql(*requested));
            match pair.conflicts(*held, *requested) {
                Ok(real) => {
                    report.step(format!("{what}: {}", word(real)));
                    report.expect_eq(&what, word(real), word(model));
                }
                Err(e) => report.mismatch(e),
            }
        }
    }
    report
}
