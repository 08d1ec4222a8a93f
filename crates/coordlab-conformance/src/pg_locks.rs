//! The PostgreSQL checks of the chapter-1 lock scenarios: `skip-locked-queue` (the claims
//! with `SKIP LOCKED`, plain `FOR UPDATE` and `NOWAIT`) and `deadlock` (two transfers in
//! opposite orders: one gets SQLSTATE 40P01, the survivor commits).
//!
//! Every statement a client sends the model's database — its label is
//! [`coordlab_sim::protocols::database::db_sql::DbRequest::sql_text`], the one source of the SQL — runs on
//! that client's own connection in the order of the model's trace. A statement the model
//! leaves waiting must block on the real server; it must come back at the step where the
//! model answers it, with the same answer. The final rows are compared with the model's.

use crate::connection::{Connection, ANSWER_WITHIN, BLOCKED_FOR};
use crate::trace_walk::{answer, delivered, full_trace, node};
use crate::Report;
use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::participant::Label;
use coordlab_sim::protocols::database::db_sql::{DbMsg, DbReply, DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE};
use coordlab_sim::protocols::database::row_lock_db::LockDbDurable;
use coordlab_sim::trace::Trace;
use postgres::{Client, NoTls, SimpleQueryMessage};
use std::collections::BTreeMap;

const SCHEMA: &str = "
DROP TABLE IF EXISTS jobs, accounts;
CREATE TABLE jobs (id int PRIMARY KEY, status text NOT NULL, runs int NOT NULL);
CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL, version bigint NOT NULL);
";

/// A real answer: rows (as text) and the command tag's count, or `ERROR <sqlstate>`.
type Answer = Result<(Vec<Vec<Option<String>>>, Option<u64>), String>;

fn simple(client: &mut Client, sql: &str) -> Answer {
    let messages = client.simple_query(sql).map_err(|e| match e.as_db_error() {
        Some(db) => format!("ERROR {}", db.code().code()),
        None => e.to_string(),
    })?;
    let mut rows = Vec::new();
    let mut count = None;
    for m in messages {
        match m {
            SimpleQueryMessage::Row(row) => {
                rows.push((0..row.len()).map(|i| row.get(i).map(str::to_string)).collect())
            }
            SimpleQueryMessage::CommandComplete(n) => count = Some(n),
            _ => {}
        }
    }
    Ok((rows, count))
}

/// The real answer in the model's words (the label of the matching [`DbReply`]).
fn model_words(sql: &str, got: &Answer) -> String {
    let reply = match got {
        Err(e) if e == &format!("ERROR {LOCK_NOT_AVAILABLE}") => DbReply::Error {
            sqlstate: LOCK_NOT_AVAILABLE,
        },
        Err(e) if e == &format!("ERROR {DEADLOCK_DETECTED}") => DbReply::Error {
            sqlstate: DEADLOCK_DETECTED,
        },
        Err(e) => return e.clone(),
        Ok((rows, count)) => {
            if sql.starts_with("SELECT id FROM jobs") {
                match rows.first().and_then(|r| r.first()).cloned().flatten() {
                    Some(id) => DbReply::Job(id.parse().ok()),
                    None => DbReply::Job(None),
                }
            } else if sql == "BEGIN" {
                DbReply::Begun
            } else if sql == "COMMIT" {
                DbReply::Committed
            } else if sql == "ROLLBACK" {
                DbReply::RolledBack
            } else {
                DbReply::Rows(count.unwrap_or(0) as u32)
            }
        }
    };
    DbMsg::Reply(reply).label()
}

/// A client's connection; the model's client sends its own BEGIN.
struct Session {
    conn: Connection<String, Answer>,
}

fn fixture(db: &LockDbDurable) -> String {
    let mut sql = String::from(SCHEMA);
    for (id, job) in &db.jobs {
        let status = if job.done { "done" } else { "pending" };
        sql += &format!("INSERT INTO jobs VALUES ({id}, '{status}', {});", job.runs);
    }
    for (id, a) in &db.accounts {
        sql += &format!(
            "INSERT INTO accounts VALUES ({id}, {}, {});",
            a.balance, a.version
        );
    }
    sql
}

/// The model's final rows in the form the real ones are printed in.
fn model_rows(trace: &Trace) -> (String, String) {
    let snapshot = trace
        .entries
        .last()
        .and_then(|e| e.snapshot.as_ref())
        .expect("full recording");
    let table = |title: &str| snapshot.tables.iter().find(|t| t.title == title);
    let jobs = table("jobs").map_or(String::new(), |t| {
        t.rows
            .iter()
            .map(|r| format!("{} {} {}", r[0], r[1], r[2]))
            .collect::<Vec<_>>()
            .join("; ")
    });
    let accounts = table("accounts").map_or(String::new(), |t| {
        t.rows
            .iter()
            .map(|r| format!("{} {} {}", r[0], r[1].trim_start_matches('₹'), r[2]))
            .collect::<Vec<_>>()
            .join("; ")
    });
    (jobs, accounts)
}

/// Replays the scenario's statements on the database at `url`; `initial` is the model's
/// opening rows and `deadlock_timeout_ms` the model's setting, given to each session.
pub fn check(
    url: &str,
    scenario: &str,
    params: &[(&str, &str)],
    initial: &LockDbDurable,
    deadlock_timeout_ms: u64,
) -> Report {
    let trace = full_trace(scenario, params, 1);
    let mut report = Report::default();
    let mut admin = match Client::connect(url, NoTls) {
        Ok(c) => c,
        Err(e) => {
            report.mismatch(format!("connect {url}: {e}"));
            return report;
        }
    };
    if let Err(e) = admin.batch_execute(&fixture(initial)) {
        report.mismatch(format!("fixture: {e}"));
        return report;
    }
    let database = node(&trace, "database");
    let names: BTreeMap<NodeId, String> = trace.nodes.iter().map(|n| (n.id, n.name.clone())).collect();
    let mut sessions: BTreeMap<NodeId, Session> = BTreeMap::new();
    // Statements the model left waiting: (client, step it answers at, its answer, SQL).
    let mut waiting: Vec<(NodeId, usize, String, String)> = Vec::new();
    let mut blocked = 0u32;
    for (at, entry) in trace.entries.iter().enumerate() {
        if let Some(msg) = delivered(entry).filter(|m| m.to == database) {
            let who = &names[&msg.from];
            let sql = msg.label.clone();
            let session = match sessions.entry(msg.from) {
                std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::btree_map::Entry::Vacant(v) => {
                    let opened = Client::connect(url, NoTls)
                        .map_err(|e| e.to_string())
                        .and_then(|mut c| {
                            c.batch_execute(&format!("SET deadlock_timeout = '{deadlock_timeout_ms}ms'"))
                                .map_err(|e| e.to_string())?;
                            Ok(c)
                        });
                    let mut client = match opened {
                        Ok(c) => c,
                        Err(e) => {
                            report.mismatch(format!("{who}: connect: {e}"));
                            return report;
                        }
                    };
                    v.insert(Session {
                        conn: Connection::spawn(move |sql: String| simple(&mut client, &sql)),
                    })
                }
            };
            session.conn.send(sql.clone());
            match answer(&trace, at) {
                Some((sent_at, reply)) if sent_at > at => match session.conn.reply(BLOCKED_FOR) {
                    Some(got) => report.mismatch(format!(
                        "step {} {who}: `{sql}` returned {got:?} at once; the model leaves it waiting until step {}",
                        entry.seq, trace.entries[sent_at].seq
                    )),
                    None => {
                        blocked += 1;
                        report.step(format!("step {:>3} {who}: {sql} … blocks (as in the model)", entry.seq));
                        waiting.push((msg.from, sent_at, reply.label.clone(), sql.clone()));
                    }
                },
                model => {
                    let got = session.conn.reply(ANSWER_WITHIN);
                    let real = match &got {
                        Some(a) => model_words(&sql, a),
                        None => "no answer within 10 s".to_string(),
                    };
                    report.step(format!("step {:>3} {who}: {sql} → {real}", entry.seq));
                    let expected = model.map_or("no answer".to_string(), |(_, r)| r.label.clone());
                    report.expect_eq(&format!("step {} {who}: {sql}", entry.seq), &real, &expected);
                }
            }
        }
        // Statements the model answers at this step (a grant, or a deadlock abort).
        for (w, sent_at, model_label, wsql) in std::mem::take(&mut waiting) {
            if sent_at != at {
                waiting.push((w, sent_at, model_label, wsql));
                continue;
            }
            let s = &sessions[&w];
            let real = match s.conn.reply(ANSWER_WITHIN) {
                Some(a) => model_words(&wsql, &a),
                None => "still blocked after 10 s".to_string(),
            };
            report.step(format!("step {:>3} {}: … returns → {real}", entry.seq, names[&w]));
            report.expect_eq(
                &format!("step {} {}'s waiting `{wsql}`", entry.seq, names[&w]),
                &real,
                &model_label,
            );
        }
    }
    for (w, _, _, wsql) in &waiting {
        report.mismatch(format!("{}'s `{wsql}`: the model never answered it", names[w]));
    }
    let (model_jobs, model_accounts) = model_rows(&trace);
    let rows = |admin: &mut Client, sql: &str| -> String {
        match simple(admin, sql) {
            Ok((rows, _)) => rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|c| c.clone().unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join("; "),
            Err(e) => e,
        }
    };
    let real_jobs = rows(&mut admin, "SELECT id, status, runs FROM jobs ORDER BY id");
    let real_accounts = rows(
        &mut admin,
        "SELECT id, balance, version FROM accounts ORDER BY id",
    );
    report.step(format!("final jobs: {real_jobs}"));
    report.expect_eq("final jobs", &real_jobs, &model_jobs);
    report.step(format!("final accounts: {real_accounts}"));
    report.expect_eq("final accounts", &real_accounts, &model_accounts);
    if let Some(waits) = trace.outcome.get("lock_waits") {
        report.expect_eq(
            "statements that waited for a row lock",
            &blocked.to_string(),
            &waits.to_string(),
        );
    }
    report
}
