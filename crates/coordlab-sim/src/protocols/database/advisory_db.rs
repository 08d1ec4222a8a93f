//! A database that keeps PostgreSQL's advisory locks: exclusive locks on 64-bit keys, owned
//! by a connection (a session). A transaction-scoped lock ends at COMMIT or ROLLBACK; a
//! session-scoped one at `pg_advisory_unlock` or when the connection closes. A session that
//! already holds a key gets it again (the holds stack, as in PostgreSQL); another session is
//! refused (`pg_try_…`) or queued (the blocking calls), oldest first.

use super::advisory_sql::{key_of, AdvisoryMsg, AdvisoryReply, AdvisoryRequest, Scope, Wait};
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, NoTimer, Participant};
use crate::presentation::narration::database::advisory_db::{AdvisoryDbSaw, HeldBy};

/// A client connection: the worker and its connection number.
pub type Conn = (NodeId, u32);

/// The first backend process id the database hands out.
pub const FIRST_PID: u32 = 4101;

/// What a restart cannot undo: which connections were ever opened (a statement on one of
/// them later finds it gone) and the process ids used.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdvisoryDbDurable {
    pub last_conn: VecMap<NodeId, u32>,
    pub pids_used: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub pid: u32,
    pub in_txn: bool,
}

/// One held key: its owner and how many times it holds it in each scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub conn: Conn,
    pub session: u32,
    pub xact: u32,
    /// The job names whose `hashtext` asked for this key.
    pub names: Vec<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiter {
    pub conn: Conn,
    pub key: i64,
    pub name: &'static str,
    pub scope: Scope,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdvisoryStats {
    /// `pg_try_…` calls that returned false.
    pub refusals: u32,
    /// Blocking calls that had to wait.
    pub waits: u32,
    /// Refusals and waits where the holder held the key for another job's name.
    pub unrelated: u32,
    /// Locks that ended because their connection closed.
    pub released_at_close: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdvisoryDb {
    pub durable: AdvisoryDbDurable,
    pub sessions: VecMap<Conn, Session>,
    pub locks: VecMap<i64, Held>,
    pub waiters: Vec<Waiter>,
    pub stats: AdvisoryStats,
}

impl AdvisoryDb {
    /// The backend process id of a connection, if it is open.
    pub fn pid(&self, conn: Conn) -> Option<u32> {
        self.sessions.get(&conn).map(|s| s.pid)
    }

    fn reply(ctx: &mut Ctx<'_, Self>, conn: Conn, reply: AdvisoryReply) {
        ctx.send(conn.0, AdvisoryMsg::Reply { conn: conn.1, reply });
    }

    pub fn handle(&mut self, ctx: &mut Ctx<'_, Self>, conn: Conn, request: AdvisoryRequest) {
        if !self.sessions.contains_key(&conn) {
            if request == AdvisoryRequest::Close {
                return;
            }
            if self
                .durable
                .last_conn
                .get(&conn.0)
                .is_some_and(|last| *last >= conn.1)
            {
                // Sent on a connection that is gone (the database restarted meanwhile).
                Self::reply(ctx, conn, AdvisoryReply::NoConnection);
                return;
            }
            let pid = FIRST_PID + self.durable.pids_used;
            self.durable.pids_used += 1;
            self.durable.last_conn.insert(conn.0, conn.1);
            ctx.persist(self.durable.clone());
            self.sessions.insert(conn, Session { pid, in_txn: false });
            ctx.note(AdvisoryDbSaw::Connects {
                who: ctx.name(conn.0),
                pid,
            });
        }
        match request {
            AdvisoryRequest::Begin => {
                if let Some(s) = self.sessions.get_mut(&conn) {
                    s.in_txn = true;
                }
                Self::reply(ctx, conn, AdvisoryReply::Begun);
            }
            AdvisoryRequest::Lock { name, scope, wait } => self.lock(ctx, conn, name, scope, wait),
            AdvisoryRequest::Unlock { name } => {
                let key = key_of(name);
                let mine = self
                    .locks
                    .get_mut(&key)
                    .filter(|h| h.conn == conn && h.session > 0);
                let ok = match mine {
                    Some(h) => {
                        h.session -= 1;
                        true
                    }
                    None => false,
                };
                if ok {
                    self.drop_if_free(ctx, key);
                } else {
                    ctx.note(AdvisoryDbSaw::NotHeldInSession {
                        who: ctx.name(conn.0),
                        key,
                    });
                }
                Self::reply(ctx, conn, AdvisoryReply::Bool(ok));
            }
            AdvisoryRequest::Commit | AdvisoryRequest::Rollback => {
                if let Some(s) = self.sessions.get_mut(&conn) {
                    s.in_txn = false;
                }
                self.end_xact(ctx, conn);
                Self::reply(
                    ctx,
                    conn,
                    if request == AdvisoryRequest::Commit {
                        AdvisoryReply::Committed
                    } else {
                        AdvisoryReply::RolledBack
                    },
                );
            }
            AdvisoryRequest::Close => self.close(ctx, conn),
        }
    }

    fn lock(&mut self, ctx: &mut Ctx<'_, Self>, conn: Conn, name: &'static str, scope: Scope, wait: Wait) {
        let key = key_of(name);
        let who = ctx.name(conn.0);
        let in_txn = self.sessions.get(&conn).is_some_and(|s| s.in_txn);
        let holder = self.locks.get(&key).map(|h| (h.conn, h.names.clone()));
        match holder {
            Some((owner, names)) if owner != conn => {
                let unrelated = !names.contains(&name);
                if unrelated {
                    self.stats.unrelated += 1;
                }
                let held = if unrelated {
                    HeldBy::Collision {
                        name,
                        key,
                        owner: ctx.name(owner.0),
                        names: &names,
                    }
                } else {
                    HeldBy::Connection {
                        owner: ctx.name(owner.0),
                        pid: self.pid(owner).unwrap_or(0),
                        key,
                    }
                };
                match wait {
                    Wait::Try => {
                        self.stats.refusals += 1;
                        ctx.note(AdvisoryDbSaw::Refused { held, who });
                        Self::reply(ctx, conn, AdvisoryReply::Bool(false));
                    }
                    Wait::Block => {
                        self.stats.waits += 1;
                        ctx.note(AdvisoryDbSaw::Waits { held, who });
                        self.waiters.push(Waiter {
                            conn,
                            key,
                            name,
                            scope,
                        });
                    }
                }
            }
            _ if scope == Scope::Xact && !in_txn => {
                // Outside BEGIN … COMMIT the statement is its own transaction: held, then gone.
                ctx.note(AdvisoryDbSaw::OutsideTransaction { who });
                Self::reply(ctx, conn, Self::granted(wait));
            }
            _ => {
                self.grant(conn, key, name, scope);
                ctx.note(AdvisoryDbSaw::Holds {
                    who,
                    key,
                    scope,
                    name,
                });
                Self::reply(ctx, conn, Self::granted(wait));
            }
        }
    }

    fn granted(wait: Wait) -> AdvisoryReply {
        match wait {
            Wait::Try => AdvisoryReply::Bool(true),
            Wait::Block => AdvisoryReply::Granted,
        }
    }

    fn grant(&mut self, conn: Conn, key: i64, name: &'static str, scope: Scope) {
        let held = self.locks.get_or_insert_with(key, || Held {
            conn,
            session: 0,
            xact: 0,
            names: Vec::new(),
        });
        match scope {
            Scope::Xact => held.xact += 1,
            Scope::Session => held.session += 1,
        }
        if !held.names.contains(&name) {
            held.names.push(name);
        }
    }

    /// Removes `key` if nobody holds it any more, and hands it to the oldest waiter.
    fn drop_if_free(&mut self, ctx: &mut Ctx<'_, Self>, key: i64) {
        if self.locks.get(&key).is_some_and(|h| h.session + h.xact == 0) {
            self.locks.remove(&key);
            if let Some(i) = self.waiters.iter().position(|w| w.key == key) {
                let w = self.waiters.remove(i);
                self.grant(w.conn, key, w.name, w.scope);
                ctx.note(AdvisoryDbSaw::FreedForWaiter {
                    key,
                    who: ctx.name(w.conn.0),
                });
                Self::reply(ctx, w.conn, AdvisoryReply::Granted);
            }
        }
    }

    fn end_xact(&mut self, ctx: &mut Ctx<'_, Self>, conn: Conn) {
        let keys: Vec<i64> = self
            .locks
            .iter()
            .filter(|(_, h)| h.conn == conn && h.xact > 0)
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            if let Some(h) = self.locks.get_mut(&key) {
                h.xact = 0;
                ctx.note(AdvisoryDbSaw::TxnEnds {
                    key,
                    session_held: h.session > 0,
                });
            }
            self.drop_if_free(ctx, key);
        }
    }

    /// The connection is gone: its waits and every lock it held, in either scope.
    pub fn close(&mut self, ctx: &mut Ctx<'_, Self>, conn: Conn) {
        let Some(session) = self.sessions.remove(&conn) else {
            return;
        };
        self.waiters.retain(|w| w.conn != conn);
        let keys: Vec<i64> = self
            .locks
            .iter()
            .filter(|(_, h)| h.conn == conn)
            .map(|(k, _)| *k)
            .collect();
        if keys.is_empty() {
            ctx.note(AdvisoryDbSaw::ClosesHoldingNothing { pid: session.pid });
        }
        for key in keys {
            self.stats.released_at_close += 1;
            ctx.note(AdvisoryDbSaw::ClosesReleasing {
                pid: session.pid,
                key,
            });
            if let Some(h) = self.locks.get_mut(&key) {
                (h.session, h.xact) = (0, 0);
            }
            self.drop_if_free(ctx, key);
        }
    }
}

impl Participant for AdvisoryDb {
    type Msg = AdvisoryMsg;
    type Timer = NoTimer;
    type Durable = AdvisoryDbDurable;
    type Config = ();

    fn on_start(&mut self, _ctx: &mut Ctx<'_, Self>) {}

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: AdvisoryMsg) {
        if let AdvisoryMsg::Request { conn, request } = msg {
            self.handle(ctx, (from, conn), request);
        }
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        let conns: Vec<Conn> = self.sessions.keys().filter(|c| c.0 == peer).copied().collect();
        for conn in conns {
            self.close(ctx, conn);
        }
    }

    fn watches(&self, peer: NodeId) -> bool {
        self.sessions.keys().any(|c| c.0 == peer)
    }

    fn recover(_config: &(), _id: NodeId, durable: &AdvisoryDbDurable) -> Self {
        AdvisoryDb {
            durable: durable.clone(),
            ..AdvisoryDb::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::testing::{sent, Harness};
    use crate::protocols::database::advisory_sql::{COLLIDING_INVOICE_JOB, REPORT_JOB};

    const W1: NodeId = NodeId(1);
    const W2: NodeId = NodeId(2);

    fn db() -> Harness<AdvisoryDb> {
        Harness::new(
            NodeId(0),
            AdvisoryDb::recover(&(), NodeId(0), &AdvisoryDbDurable::default()),
            &["db", "w1", "w2"],
        )
    }

    fn feed(
        d: &mut Harness<AdvisoryDb>,
        conn: Conn,
        request: AdvisoryRequest,
    ) -> Vec<(NodeId, AdvisoryReply)> {
        let fx = d.call(|db, ctx| db.handle(ctx, conn, request));
        sent::<_, AdvisoryMsg>(&fx)
            .into_iter()
            .filter_map(|(to, m)| match m {
                AdvisoryMsg::Reply { reply, .. } => Some((to, reply)),
                AdvisoryMsg::Request { .. } => None,
            })
            .collect()
    }

    fn lock(name: &'static str, scope: Scope, wait: Wait) -> AdvisoryRequest {
        AdvisoryRequest::Lock { name, scope, wait }
    }

    #[test]
    fn a_colliding_name_is_refused_and_a_commit_frees_the_key() {
        let mut d = db();
        feed(&mut d, (W1, 1), AdvisoryRequest::Begin);
        assert_eq!(
            feed(&mut d, (W1, 1), lock(REPORT_JOB, Scope::Xact, Wait::Try)),
            vec![(W1, AdvisoryReply::Bool(true))]
        );
        feed(&mut d, (W2, 1), AdvisoryRequest::Begin);
        assert_eq!(
            feed(
                &mut d,
                (W2, 1),
                lock(COLLIDING_INVOICE_JOB, Scope::Xact, Wait::Try)
            ),
            vec![(W2, AdvisoryReply::Bool(false))]
        );
        assert_eq!(d.node.stats.unrelated, 1);
        feed(&mut d, (W1, 1), AdvisoryRequest::Commit);
        assert!(d.node.locks.is_empty());
    }

    #[test]
    fn a_session_lock_survives_commit_and_ends_with_unlock_or_close() {
        let mut d = db();
        feed(&mut d, (W1, 1), lock(REPORT_JOB, Scope::Session, Wait::Try));
        feed(&mut d, (W1, 1), AdvisoryRequest::Begin);
        feed(&mut d, (W1, 1), AdvisoryRequest::Commit);
        assert_eq!(d.node.locks.len(), 1, "COMMIT does not end a session lock");
        assert_eq!(
            feed(&mut d, (W2, 1), lock(REPORT_JOB, Scope::Session, Wait::Block)),
            vec![]
        );
        assert_eq!(
            feed(&mut d, (W1, 1), AdvisoryRequest::Close),
            vec![(W2, AdvisoryReply::Granted)],
            "closing the connection hands the key to the waiter"
        );
        assert_eq!(
            feed(&mut d, (W2, 1), AdvisoryRequest::Unlock { name: REPORT_JOB }),
            vec![(W2, AdvisoryReply::Bool(true))]
        );
        assert!(d.node.locks.is_empty());
        assert_eq!(
            feed(&mut d, (W1, 1), AdvisoryRequest::Begin),
            vec![(W1, AdvisoryReply::NoConnection)],
            "a closed connection does not come back"
        );
    }
}
