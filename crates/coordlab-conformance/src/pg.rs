//! The PostgreSQL checks: `lost-update` (the account row), and the lease chapter's lease
//! table and ledger (`zombie-worker`, `wrong-release`).
//!
//! Each worker is one connection. The harness's clock: the lease statements say `now()`,
//! which must be the lease store's clock in the model, not the wall clock (a 30 s TTL has to
//! lapse in a run that takes a second). So the fixture puts a `sim.now()` ahead of
//! `pg_catalog.now()` on each session's `search_path` (PostgreSQL searches `pg_catalog`
//! where the path names it, here last) that reads `coordlab.now_us`, and before each lease
//! statement the session sets it to the store's clock at that step.

use crate::connection::{Connection, ANSWER_WITHIN, BLOCKED_FOR};
use crate::trace_walk::{answer, delivered, full_trace, local_time_us, node, rupees, table};
use crate::Report;
use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::participant::Label;
use coordlab_sim::presentation::durations::seconds;
use coordlab_sim::protocols::database::sql::{SqlMsg, SqlReply};
use coordlab_sim::trace::Trace;
use postgres::{Client, NoTls, SimpleQueryMessage};
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

/// The tables the scenarios' statements name, and the harness's clock.
const SCHEMA: &str = "
DROP TABLE IF EXISTS accounts, lease, account_state;
DROP SCHEMA IF EXISTS sim CASCADE;
CREATE SCHEMA sim;
CREATE FUNCTION sim.now() RETURNS timestamptz LANGUAGE sql STABLE
    AS $$ SELECT to_timestamp(current_setting('coordlab.now_us')::bigint / 1000000.0) $$;
CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL, version bigint NOT NULL);
CREATE TABLE lease (name text PRIMARY KEY, owner text NOT NULL, fence_token bigint NOT NULL,
                    acquired_at timestamptz NOT NULL, expires_at timestamptz NOT NULL);
CREATE TABLE account_state (account_id int PRIMARY KEY, balance_minor bigint NOT NULL,
                            last_token bigint NOT NULL);
";

/// What a statement returned: its rows (as text) and the count of its command tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub rows: Vec<Vec<Option<String>>>,
    pub count: Option<u64>,
}

type Answer = Result<Outcome, String>;

/// A worker's connection. `now_us`, when given, sets the harness's clock first.
struct Session {
    conn: Connection<(Option<u64>, String), Answer>,
    in_transaction: bool,
}

fn connect(url: &str) -> Result<Client, String> {
    let mut client = Client::connect(url, NoTls).map_err(|e| format!("connect {url}: {e}"))?;
    client
        .batch_execute("SET search_path = sim, pg_catalog, public; SET coordlab.now_us = '0'")
        .map_err(|e| e.to_string())?;
    Ok(client)
}

fn simple(client: &mut Client, sql: &str) -> Answer {
    let messages = client.simple_query(sql).map_err(|e| match e.as_db_error() {
        Some(db) => format!("ERROR {}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    })?;
    let mut out = Outcome {
        rows: Vec::new(),
        count: None,
    };
    for m in messages {
        match m {
            SimpleQueryMessage::Row(row) => {
                out.rows
                    .push((0..row.len()).map(|i| row.get(i).map(str::to_string)).collect());
            }
            SimpleQueryMessage::CommandComplete(n) => out.count = Some(n),
            _ => {}
        }
    }
    Ok(out)
}

impl Session {
    fn open(url: &str) -> Result<Session, String> {
        let mut client = connect(url)?;
        let conn = Connection::spawn(move |(now_us, sql): (Option<u64>, String)| {
            if let Some(now_us) = now_us {
                simple(&mut client, &format!("SET coordlab.now_us = '{now_us}'"))?;
            }
            simple(&mut client, &sql)
        });
        Ok(Session {
            conn,
            in_transaction: false,
        })
    }
}

/// How the lost-update workers' connections run their statements. The model's row-lock and
/// read-then-write workers work inside a transaction that their COMMIT ends ("opens a
/// transaction and reads the balance"); its version-checked worker sends single statements,
/// each atomic on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnMode {
    /// `BEGIN` before the first statement after a COMMIT (a driver with autocommit off).
    Transaction,
    /// Every statement is its own transaction.
    Autocommit,
}

/// The real answer in the model's words, for the statement `sql` of a lost-update worker.
fn account_reply(sql: &str, in_transaction: bool, got: &Outcome) -> String {
    let reply = if sql.starts_with("SELECT") {
        match got.rows.first().map(|r| &r[..]) {
            Some([Some(b), Some(v)]) => SqlReply::Row {
                balance: b.parse().unwrap_or(i64::MIN),
                version: v.parse().unwrap_or(u64::MAX),
            },
            _ => return format!("{} row(s)", got.rows.len()),
        }
    } else if sql == "COMMIT" {
        SqlReply::Committed
    } else if in_transaction {
        match got.count {
            Some(1) => SqlReply::Updated,
            n => return format!("UPDATE {n:?} inside the transaction"),
        }
    } else {
        SqlReply::VersionChecked {
            rows: got.count.unwrap_or(0) as u32,
        }
    };
    SqlMsg::Reply(reply).label()
}

/// The real answer in the words of the lease store's result line (`fence_token 33`,
/// `0 rows`, `UPDATE 1`), compared with the start of the model's.
fn lease_result(sql: &str, got: &Outcome) -> String {
    if sql.starts_with("INSERT") {
        match got.rows.first().and_then(|r| r.first()) {
            Some(Some(token)) => format!("fence_token {token}"),
            _ => "0 rows".to_string(),
        }
    } else {
        let tag = sql.split(' ').next().unwrap_or("?");
        format!("{tag} {}", got.count.unwrap_or(0))
    }
}

/// A ledger statement is its message label's tail, after the step, amount and token.
fn ledger_sql(label: &str) -> Option<&str> {
    label.find("UPDATE account_state").map(|at| &label[at..])
}

/// Labels of messages to the ledger that carry no SQL: the job's progress is bookkeeping the
/// model keeps on the ledger node, not a statement it shows.
const LEDGER_NOT_SQL: [&str; 1] = ["how far has the job got?"];

/// Replays a scenario's SQL on the database at `url` and compares every answer and the final
/// rows with the model's.
pub fn check(url: &str, scenario: &str, params: &[(&str, &str)], mode: TxnMode) -> Report {
    let trace = full_trace(scenario, params, 1);
    let mut report = Report::default();
    let fail = |mut r: Report, e: String| {
        r.mismatch(e);
        r
    };
    let mut admin = match connect(url) {
        Ok(c) => c,
        Err(e) => return fail(report, e),
    };
    if let Err(e) = admin
        .batch_execute(SCHEMA)
        .map_err(|e| e.to_string())
        .and_then(|_| fixture(&mut admin, &trace))
    {
        return fail(report, format!("fixture: {e}"));
    }
    let names: BTreeMap<NodeId, String> = trace.nodes.iter().map(|n| (n.id, n.name.clone())).collect();
    let servers: BTreeMap<NodeId, &str> = ["database", "lease-store", "ledger"]
        .into_iter()
        .filter(|n| trace.nodes.iter().any(|i| i.name == *n))
        .map(|n| (node(&trace, n), n))
        .collect();
    let mut sessions: BTreeMap<NodeId, Session> = BTreeMap::new();
    // Statements the model left waiting: (worker, step the model answers at, its answer, SQL).
    let mut waiting: Vec<(NodeId, usize, String, String)> = Vec::new();
    let mut blocked = 0u32;
    for (at, entry) in trace.entries.iter().enumerate() {
        let Some(msg) = delivered(entry) else { continue };
        let Some(&server) = servers.get(&msg.to) else {
            continue;
        };
        let worker = msg.from;
        let who = &names[&worker];
        let (sql, now_us) = match server {
            "database" => (msg.label.clone(), None),
            "lease-store" => {
                let t = table(&trace, at, "last statement on lease");
                let lines: Vec<&str> = t.rows[..t.rows.len() - 1].iter().map(|r| r[0].as_str()).collect();
                (lines.join("\n"), Some(local_time_us(&trace, at, msg.to)))
            }
            _ => match ledger_sql(&msg.label) {
                Some(sql) => (sql.to_string(), None),
                None if LEDGER_NOT_SQL.contains(&msg.label.as_str()) => continue,
                None => return fail(report, format!("step {}: no SQL in `{}`", entry.seq, msg.label)),
            },
        };
        let session = match sessions.entry(worker) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => match Session::open(url) {
                Ok(s) => v.insert(s),
                Err(e) => return fail(report, e),
            },
        };
        if server == "database" && mode == TxnMode::Transaction && !session.in_transaction {
            session.conn.send((None, "BEGIN".to_string()));
            match session.conn.reply(ANSWER_WITHIN) {
                Some(Ok(_)) => {}
                other => return fail(report, format!("{who}: BEGIN failed: {other:?}")),
            }
            session.in_transaction = true;
        }
        let in_transaction = session.in_transaction;
        session.conn.send((now_us, sql.clone()));
        if sql == "COMMIT" {
            session.in_transaction = false;
        }
        let model = answer(&trace, at);
        let one_line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
        match model {
            Some((sent_at, reply)) if sent_at > at => {
                // The model's database leaves this statement waiting (a row lock).
                match session.conn.reply(BLOCKED_FOR) {
                    Some(got) => report.mismatch(format!(
                        "step {} {who}: `{one_line}` returned {got:?} at once; the model leaves it waiting until step {}",
                        entry.seq, trace.entries[sent_at].seq
                    )),
                    None => {
                        blocked += 1;
                        report.step(format!("step {:>3} {who}: {one_line} … blocks (as in the model)", entry.seq));
                        waiting.push((worker, sent_at, reply.label.clone(), sql.clone()));
                    }
                }
            }
            _ => {
                let got = session.conn.reply(ANSWER_WITHIN);
                let real = match (&got, server) {
                    (None, _) => "no answer within 10 s".to_string(),
                    (Some(Err(e)), _) => e.clone(),
                    (Some(Ok(o)), "database") => account_reply(&sql, in_transaction, o),
                    (Some(Ok(o)), "lease-store") => lease_result(&sql, o),
                    (Some(Ok(o)), _) => format!("UPDATE {}", o.count.unwrap_or(0)),
                };
                let expected = match (server, model) {
                    ("database", Some((_, reply))) => reply.label.clone(),
                    ("lease-store", _) => {
                        let t = table(&trace, at, "last statement on lease");
                        let last = &t.rows[t.rows.len() - 1][0];
                        let result = last.split(" — ").next().unwrap_or(last).trim_start_matches("→ ");
                        // `→ fence_token 33 (takeover)`, `→ 0 rows (worker-A holds it)`: the
                        // part in brackets is the model's commentary.
                        result.split(" (").next().unwrap_or(result).to_string()
                    }
                    // `step 2: UPDATE 0 (rejected)`; a heartbeat mark has no answer.
                    (_, Some((_, reply))) if reply.sent_us == entry.time_us => {
                        let tail = reply.label.split(": ").nth(1).unwrap_or(&reply.label);
                        tail.split(" (").next().unwrap_or(tail).to_string()
                    }
                    _ => real.clone(),
                };
                report.step(format!("step {:>3} {who}: {one_line} → {real}", entry.seq));
                report.expect_eq(&format!("step {} {who}: {one_line}", entry.seq), &real, &expected);
            }
        }
        // Statements the model answers at this step, now that this one ran.
        for (w, sent_at, model_label, wsql) in std::mem::take(&mut waiting) {
            if sent_at != at {
                waiting.push((w, sent_at, model_label, wsql));
                continue;
            }
            let wname = &names[&w];
            let s = &sessions[&w];
            let real = match s.conn.reply(ANSWER_WITHIN) {
                Some(Ok(o)) => account_reply(&wsql, s.in_transaction, &o),
                Some(Err(e)) => e,
                None => "still blocked after 10 s".to_string(),
            };
            report.step(format!("step {:>3} {wname}: … unblocks → {real}", entry.seq));
            report.expect_eq(
                &format!("step {} {wname}'s waiting `{wsql}`", entry.seq),
                &real,
                &model_label,
            );
        }
    }
    for (w, _, _, wsql) in &waiting {
        report.mismatch(format!("{}'s `{wsql}`: the model never answered it", names[w]));
    }
    compare_final(&mut admin, &trace, blocked, &mut report);
    report
}

/// The opening rows, as the first snapshot's tables show them.
fn fixture(admin: &mut Client, trace: &Trace) -> Result<(), String> {
    let snapshot = trace.entries[0].snapshot.as_ref().ok_or("no snapshot")?;
    let mut sql = String::new();
    for t in &snapshot.tables {
        match t.title.as_str() {
            "accounts" => {
                let r = &t.rows[0];
                sql += &format!(
                    "INSERT INTO accounts VALUES ({}, {}, {});",
                    r[0],
                    rupees(&r[1]),
                    r[2]
                );
            }
            "lease" => {
                for r in t.rows.iter().filter(|r| r[2] != "—") {
                    // A row an earlier run left: acquired and expired at time 0 of the store's clock.
                    sql += &format!(
                        "INSERT INTO lease VALUES ('{}', '{}', {}, to_timestamp(0), to_timestamp(0));",
                        r[0], r[1], r[2]
                    );
                }
            }
            "account_state" => {
                let r = &t.rows[0];
                sql += &format!(
                    "INSERT INTO account_state VALUES ({}, {}, {});",
                    r[0],
                    rupees(&r[1]) * 100,
                    r[2]
                );
            }
            _ => {}
        }
    }
    admin.batch_execute(&sql).map_err(|e| e.to_string())
}

/// The rows at the end against the last snapshot's tables.
fn compare_final(admin: &mut Client, trace: &Trace, blocked: u32, report: &mut Report) {
    let last = trace.entries.len() - 1;
    let snapshot = trace.entries[last].snapshot.as_ref().expect("full recording");
    let mut query = |sql: &str| -> Vec<Vec<Option<String>>> {
        simple(admin, sql)
            .map(|o| o.rows)
            .unwrap_or_else(|e| vec![vec![Some(e)]])
    };
    for t in &snapshot.tables {
        match t.title.as_str() {
            "accounts" => {
                let real = query("SELECT id, balance, version FROM accounts ORDER BY id");
                let r = &t.rows[0];
                let model = format!("{} ₹{} v{}", r[0], rupees(&r[1]), r[2]);
                let real = match &real[..] {
                    [row] => format!(
                        "{} ₹{} v{}",
                        row[0].clone().unwrap_or_default(),
                        row[1].clone().unwrap_or_default(),
                        row[2].clone().unwrap_or_default()
                    ),
                    rows => format!("{rows:?}"),
                };
                report.step(format!("final accounts row: {real}"));
                report.expect_eq("final accounts row", &real, &model);
                if let Some(waits) = trace.outcome.get("lock_waits") {
                    report.expect_eq(
                        "statements that waited for the row lock",
                        &blocked.to_string(),
                        &waits.to_string(),
                    );
                }
            }
            "lease" => {
                let real: Vec<String> = query(
                    "SELECT name, owner, fence_token, (extract(epoch FROM expires_at) * 1000)::bigint FROM lease ORDER BY name",
                )
                .into_iter()
                .map(|r| {
                    let ms: u64 = r[3].as_deref().and_then(|s| s.parse().ok()).unwrap_or(0);
                    let expires = if ms == 0 { "earlier".to_string() } else { seconds(ms) };
                    format!(
                        "{} {} {} expires {expires}",
                        r[0].clone().unwrap_or_default(),
                        r[1].clone().unwrap_or_default(),
                        r[2].clone().unwrap_or_default()
                    )
                })
                .collect();
                let model: Vec<String> = t
                    .rows
                    .iter()
                    .filter(|r| r[2] != "—")
                    .map(|r| format!("{} {} {} expires {}", r[0], r[1], r[2], r[4]))
                    .collect();
                report.step(format!("final lease rows: {}", real.join("; ")));
                report.expect_eq("final lease rows", &real.join("; "), &model.join("; "));
            }
            "account_state" => {
                let real = query("SELECT account_id, balance_minor, last_token FROM account_state");
                let real = match &real[..] {
                    [row] => format!(
                        "{} {} paise, last_token {}",
                        row[0].clone().unwrap_or_default(),
                        row[1].clone().unwrap_or_default(),
                        row[2].clone().unwrap_or_default()
                    ),
                    rows => format!("{rows:?}"),
                };
                let r = &t.rows[0];
                let model = format!("{} {} paise, last_token {}", r[0], rupees(&r[1]) * 100, r[2]);
                report.step(format!("final account_state: {real}"));
                report.expect_eq("final account_state", &real, &model);
            }
            _ => {}
        }
    }
}
