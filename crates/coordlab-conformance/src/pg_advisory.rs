//! The PostgreSQL checks of `advisory-locks`. The job names, keys and SQL all come from the
//! model ([`coordlab_sim::protocols::database::advisory_sql`]), so the two cannot drift.
//!
//! [`check_statements`] asks the server directly: `hashtext` of each name equals the model's
//! key (the two colliding names share one); a second session's `pg_try_advisory_xact_lock` on
//! the other name returns false while the first holds; the transaction-scoped lock ends at
//! COMMIT; a session-scoped one survives COMMIT and ROLLBACK and ends at `pg_advisory_unlock`
//! or when its connection closes. [`check_trace`] replays a run: every statement a worker sent
//! the model's database, on that worker's own connection (a new one after the pool closes
//! it), in the trace's order; each answer, each statement that blocks, and the keys
//! `pg_locks` shows held after every step must equal the model's.

use crate::connection::{Connection, ANSWER_WITHIN, BLOCKED_FOR};
use crate::trace_walk::{answer, delivered, full_trace, node, table};
use crate::Report;
use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::participant::Label;
use coordlab_sim::protocols::database::advisory_sql::{
    key_of, AdvisoryMsg, AdvisoryReply, AdvisoryRequest, Scope, Wait, COLLIDING_INVOICE_JOB, INVOICE_JOB,
    REPORT_JOB,
};
use coordlab_sim::scenarios::ch1_locks::advisory_locks;
use postgres::{Client, NoTls, SimpleQueryMessage};
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The first column of the first row, or `ERROR <sqlstate>`.
type Answer = Result<Option<String>, String>;

fn first(client: &mut Client, sql: &str) -> Answer {
    let messages = client.simple_query(sql).map_err(|e| match e.as_db_error() {
        Some(db) => format!("ERROR {}", db.code().code()),
        None => e.to_string(),
    })?;
    Ok(messages.into_iter().find_map(|m| match m {
        SimpleQueryMessage::Row(row) => Some(row.get(0).unwrap_or_default().to_string()),
        _ => None,
    }))
}

/// The real answer to `request` in the model's words.
fn model_words(request: &AdvisoryRequest, got: &Answer) -> String {
    let reply = match (request, got) {
        (_, Err(e)) => return e.clone(),
        (AdvisoryRequest::Begin, _) => AdvisoryReply::Begun,
        (AdvisoryRequest::Commit, _) => AdvisoryReply::Committed,
        (AdvisoryRequest::Rollback, _) => AdvisoryReply::RolledBack,
        (
            AdvisoryRequest::Lock {
                wait: Wait::Block, ..
            },
            Ok(_),
        ) => AdvisoryReply::Granted,
        (_, Ok(Some(b))) if b == "t" || b == "f" => AdvisoryReply::Bool(b == "t"),
        (_, Ok(other)) => return format!("{other:?}"),
    };
    AdvisoryMsg::Reply { conn: 0, reply }.label()
}

/// The statement a model label stands for (every request the worker can send).
fn request_of(label: &str) -> Option<AdvisoryRequest> {
    let mut all = vec![
        AdvisoryRequest::Begin,
        AdvisoryRequest::Commit,
        AdvisoryRequest::Rollback,
        AdvisoryRequest::Close,
    ];
    for name in [REPORT_JOB, INVOICE_JOB, COLLIDING_INVOICE_JOB] {
        all.push(AdvisoryRequest::Unlock { name });
        for scope in [Scope::Xact, Scope::Session] {
            for wait in [Wait::Try, Wait::Block] {
                all.push(AdvisoryRequest::Lock { name, scope, wait });
            }
        }
    }
    all.into_iter().find(|r| r.sql_text() == label)
}

/// Advisory keys held (granted) in this database, as pg_locks encodes a bigint key: the high
/// half in `classid`, the low half in `objid`.
fn held_keys(admin: &mut Client) -> Result<String, String> {
    let rows = admin
        .simple_query(
            "SELECT held.k::text AS key FROM (SELECT (classid::bigint << 32) | objid::bigint AS k FROM pg_locks \
             WHERE locktype = 'advisory' AND granted AND objsubid = 1 \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) held ORDER BY held.k",
        )
        .map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(", "))
}

/// Waits until backend `pid` has exited (closing a connection is asynchronous on the server).
fn wait_gone(admin: &mut Client, pid: &str) -> bool {
    let deadline = Instant::now() + ANSWER_WITHIN;
    while Instant::now() < deadline {
        let sql = format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}");
        if first(admin, &sql).ok().flatten().as_deref() == Some("0") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn open(url: &str) -> Result<(Client, String), String> {
    let mut c = Client::connect(url, NoTls).map_err(|e| format!("connect {url}: {e}"))?;
    let pid = first(&mut c, "SELECT pg_backend_pid()")?.unwrap_or_default();
    Ok((c, pid))
}

/// The direct checks of the scenario's statements.
pub fn check_statements(url: &str) -> Report {
    let mut report = Report::default();
    if let Err(e) = statements(url, &mut report) {
        report.mismatch(e);
    }
    report
}

fn statements(url: &str, report: &mut Report) -> Result<(), String> {
    let (mut admin, _) = open(url)?;
    for name in [REPORT_JOB, INVOICE_JOB, COLLIDING_INVOICE_JOB] {
        let real = first(&mut admin, &format!("SELECT hashtext('{name}')"))?.unwrap_or_default();
        report.step(format!("hashtext('{name}') = {real}"));
        report.expect_eq(&format!("hashtext('{name}')"), &real, &key_of(name).to_string());
    }
    report.expect_eq(
        "the colliding names share a key",
        &first(
            &mut admin,
            &format!("SELECT hashtext('{REPORT_JOB}') = hashtext('{COLLIDING_INVOICE_JOB}')"),
        )?
        .unwrap_or_default(),
        "t",
    );
    let lock = |name, scope| {
        AdvisoryRequest::Lock {
            name,
            scope,
            wait: Wait::Try,
        }
        .sql_text()
    };
    let unlock = |name| AdvisoryRequest::Unlock { name }.sql_text();
    let (mut a, a_pid) = open(url)?;
    let (mut b, _) = open(url)?;
    let expect =
        |report: &mut Report, who: &str, c: &mut Client, sql: &str, want: &str| -> Result<(), String> {
            let got = first(c, sql)?.unwrap_or_default();
            report.step(format!("{who}: {sql} → {got}"));
            report.expect_eq(&format!("{who}: {sql}"), &got, want);
            Ok(())
        };
    // Transaction scope: the collision refuses B until A's COMMIT.
    first(&mut a, "BEGIN")?;
    expect(report, "A", &mut a, &lock(REPORT_JOB, Scope::Xact), "t")?;
    let held = held_keys(&mut admin)?;
    report.expect_eq("pg_locks while A holds", &held, &key_of(REPORT_JOB).to_string());
    first(&mut b, "BEGIN")?;
    expect(
        report,
        "B",
        &mut b,
        &lock(COLLIDING_INVOICE_JOB, Scope::Xact),
        "f",
    )?;
    expect(report, "B", &mut b, &lock(INVOICE_JOB, Scope::Xact), "t")?;
    first(&mut b, "ROLLBACK")?;
    first(&mut a, "COMMIT")?;
    report.expect_eq("pg_locks after A's COMMIT", &held_keys(&mut admin)?, "");
    first(&mut b, "BEGIN")?;
    expect(
        report,
        "B after A's COMMIT",
        &mut b,
        &lock(COLLIDING_INVOICE_JOB, Scope::Xact),
        "t",
    )?;
    first(&mut b, "COMMIT")?;
    // Session scope: COMMIT and ROLLBACK leave it; unlock ends it.
    expect(report, "A", &mut a, &lock(REPORT_JOB, Scope::Session), "t")?;
    first(&mut a, "BEGIN; COMMIT; BEGIN; ROLLBACK")?;
    expect(
        report,
        "B after A's COMMIT and ROLLBACK",
        &mut b,
        &lock(REPORT_JOB, Scope::Session),
        "f",
    )?;
    expect(report, "A", &mut a, &unlock(REPORT_JOB), "t")?;
    expect(
        report,
        "B after A's unlock",
        &mut b,
        &lock(REPORT_JOB, Scope::Session),
        "t",
    )?;
    expect(report, "B", &mut b, &unlock(REPORT_JOB), "t")?;
    // … and so does closing the connection.
    expect(report, "A", &mut a, &lock(REPORT_JOB, Scope::Session), "t")?;
    expect(
        report,
        "B",
        &mut b,
        &lock(COLLIDING_INVOICE_JOB, Scope::Session),
        "f",
    )?;
    drop(a);
    if !wait_gone(&mut admin, &a_pid) {
        report.mismatch(format!(
            "A's backend {a_pid} did not exit after its connection closed"
        ));
    }
    expect(
        report,
        "B after A's connection closed",
        &mut b,
        &lock(COLLIDING_INVOICE_JOB, Scope::Session),
        "t",
    )?;
    expect(report, "B", &mut b, &unlock(COLLIDING_INVOICE_JOB), "t")?;
    Ok(())
}

struct Session {
    conn: Connection<String, Answer>,
    pid: String,
}

/// Replays the scenario's run for `params` at seed 1 on the database at `url`.
pub fn check_trace(url: &str, params: &[(&str, &str)]) -> Report {
    let trace = full_trace(advisory_locks::ID, params, 1);
    let mut report = Report::default();
    let mut admin = match open(url) {
        Ok((c, _)) => c,
        Err(e) => {
            report.mismatch(e);
            return report;
        }
    };
    let database = node(&trace, "database");
    let names: BTreeMap<NodeId, String> = trace.nodes.iter().map(|n| (n.id, n.name.clone())).collect();
    let mut sessions: BTreeMap<NodeId, Session> = BTreeMap::new();
    // Statements the model left waiting: (worker, step it answers at, its answer, request).
    let mut waiting: Vec<(NodeId, usize, String, AdvisoryRequest)> = Vec::new();
    for (at, entry) in trace.entries.iter().enumerate() {
        if let Some(msg) = delivered(entry).filter(|m| m.to == database) {
            let who = &names[&msg.from];
            let Some(request) = request_of(&msg.label) else {
                report.mismatch(format!(
                    "step {} {who}: no statement for `{}`",
                    entry.seq, msg.label
                ));
                return report;
            };
            if request == AdvisoryRequest::Close {
                if let Some(s) = sessions.remove(&msg.from) {
                    let pid = s.pid.clone();
                    drop(s);
                    report.step(format!(
                        "step {:>3} {who}: closes its connection (pid {pid})",
                        entry.seq
                    ));
                    if !wait_gone(&mut admin, &pid) {
                        report.mismatch(format!("{who}'s backend {pid} did not exit"));
                    }
                }
            } else {
                let session = match sessions.entry(msg.from) {
                    Entry::Occupied(o) => o.into_mut(),
                    Entry::Vacant(v) => match open(url) {
                        Ok((mut client, pid)) => {
                            let conn = Connection::spawn(move |sql: String| first(&mut client, &sql));
                            v.insert(Session { conn, pid })
                        }
                        Err(e) => {
                            report.mismatch(format!("{who}: {e}"));
                            return report;
                        }
                    },
                };
                let sql = request.sql_text();
                session.conn.send(sql.clone());
                match answer(&trace, at) {
                    Some((sent_at, reply)) if sent_at > at => match session.conn.reply(BLOCKED_FOR) {
                        Some(got) => report.mismatch(format!(
                            "step {} {who}: `{sql}` returned {got:?} at once; the model leaves it waiting until step {}",
                            entry.seq, trace.entries[sent_at].seq
                        )),
                        None => {
                            report.step(format!("step {:>3} {who}: {sql} … blocks (as in the model)", entry.seq));
                            waiting.push((msg.from, sent_at, reply.label.clone(), request.clone()));
                        }
                    },
                    model => {
                        let real = match session.conn.reply(ANSWER_WITHIN) {
                            Some(a) => model_words(&request, &a),
                            None => "no answer within 10 s".to_string(),
                        };
                        report.step(format!("step {:>3} {who}: {sql} → {real}", entry.seq));
                        let expected = model.map_or("no answer".to_string(), |(_, r)| r.label.clone());
                        report.expect_eq(&format!("step {} {who}: {sql}", entry.seq), &real, &expected);
                    }
                }
            }
        }
        for (w, sent_at, model_label, request) in std::mem::take(&mut waiting) {
            if sent_at != at {
                waiting.push((w, sent_at, model_label, request));
                continue;
            }
            let real = match sessions.get(&w).and_then(|s| s.conn.reply(ANSWER_WITHIN)) {
                Some(a) => model_words(&request, &a),
                None => "still blocked after 10 s".to_string(),
            };
            report.step(format!("step {:>3} {}: … returns → {real}", entry.seq, names[&w]));
            report.expect_eq(
                &format!("step {} {}'s waiting call", entry.seq, names[&w]),
                &real,
                &model_label,
            );
        }
        if delivered(entry).is_some_and(|m| m.to == database) {
            let model: Vec<String> = table(&trace, at, "advisory locks (pg_locks)")
                .rows
                .iter()
                .map(|r| r[0].clone())
                .filter(|k| k != "—")
                .collect();
            match held_keys(&mut admin) {
                Ok(real) => {
                    report.expect_eq(&format!("step {} keys held", entry.seq), &real, &model.join(", "))
                }
                Err(e) => report.mismatch(e),
            }
        }
    }
    for (w, _, _, request) in &waiting {
        report.mismatch(format!(
            "{}'s `{}`: the model never answered it",
            names[w],
            request.sql_text()
        ));
    }
    report
}
