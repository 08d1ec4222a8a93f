//! The Redis check: `redis-failover` on three real servers, one per model store: store-1
//! (the primary), store-2 and store-3 (its replicas).
//!
//! A replica follows its primary through a small proxy on loopback that this check owns, so
//! the replication stream reaches a replica exactly when the model's does: the proxy holds
//! the primary's bytes until the trace delivers a `stream …` message to that replica, then
//! lets them through and waits until the replica has applied them; likewise it holds the
//! replica's acknowledgements until the trace delivers its `REPLCONF ACK`, so a `WAIT`
//! counts the replicas the model's does. When the model's store-1
//! crashes, its proxies drop what they hold and close, and the workers' connections to it are
//! dropped: the write the primary acknowledged is lost with it, deterministically, as in the
//! model. (The primary process stays up, unreachable to the story; the next check resets it.)
//! The sentinels' decision is the model's: where the trace delivers `REPLICAOF NO ONE` or
//! `REPLICAOF store-2` to a store, its server is sent the same (a replica told to follow a
//! node that is not a primary yet follows it once it is promoted). The sentinels have no real
//! counterpart.

use crate::connection::{Connection, ANSWER_WITHIN};
use crate::trace_walk::{answer, delivered, full_trace, node, table};
use crate::Report;
use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::participant::Label;
use coordlab_sim::protocols::redis_locks::redis_msg::RedisMsg;
use coordlab_sim::trace::{EventKind, Trace};
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The replication link: primary → replica bytes (the stream) wait while `held`, replica →
/// primary bytes (its acknowledgements) while `acks_held`; `cut` ends the link.
#[derive(Default)]
struct LinkState {
    held: bool,
    acks_held: bool,
    cut: bool,
    sockets: Vec<TcpStream>,
}

struct Link {
    state: Arc<(Mutex<LinkState>, Condvar)>,
    port: u16,
}

impl Link {
    /// Listens on a loopback port; each connection (the replica's) is joined to the primary.
    fn open(primary: &str) -> Result<Link, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let state: Arc<(Mutex<LinkState>, Condvar)> = Arc::default();
        let (shared, primary) = (state.clone(), primary.to_string());
        std::thread::spawn(move || {
            for replica in listener.incoming() {
                let Ok(replica) = replica else { return };
                if shared.0.lock().expect("link").cut {
                    return;
                }
                let Ok(upstream) = TcpStream::connect(&primary) else {
                    return;
                };
                let sockets = [&replica, &upstream].map(|s| s.try_clone().expect("clone"));
                shared.0.lock().expect("link").sockets.extend(sockets);
                let (r2, u2) = (
                    replica.try_clone().expect("clone"),
                    upstream.try_clone().expect("clone"),
                );
                let s = shared.clone();
                std::thread::spawn(move || pump(r2, u2, s, Direction::Acks));
                let s = shared.clone();
                std::thread::spawn(move || pump(upstream, replica, s, Direction::Stream));
            }
        });
        Ok(Link { state, port })
    }

    fn set_held(&self, held: bool) {
        self.state.0.lock().expect("link").held = held;
        self.state.1.notify_all();
    }

    fn set_acks_held(&self, held: bool) {
        self.state.0.lock().expect("link").acks_held = held;
        self.state.1.notify_all();
    }

    /// The primary is gone: what the link holds is never delivered.
    fn cut(&self) {
        let mut s = self.state.0.lock().expect("link");
        s.cut = true;
        for socket in s.sockets.drain(..) {
            let _ = socket.shutdown(Shutdown::Both);
        }
        drop(s);
        self.state.1.notify_all();
        // Wake the accept loop so it sees the cut.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Copies bytes from `from` to `to`; with a link state, waits while it is held and stops
/// (dropping the bytes in hand) when it is cut.
type Shared = Arc<(Mutex<LinkState>, Condvar)>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Stream,
    Acks,
}

fn pump(mut from: TcpStream, mut to: TcpStream, link: Shared, direction: Direction) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        {
            let mut s = link.0.lock().expect("link");
            let held = |s: &LinkState| match direction {
                Direction::Stream => s.held,
                Direction::Acks => s.acks_held,
            };
            while held(&s) && !s.cut {
                s = link.1.wait(s).expect("link");
            }
            if s.cut {
                break;
            }
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

fn connect(addr: &str) -> Result<redis::Connection, String> {
    redis::Client::open(format!("redis://{addr}/"))
        .and_then(|c| c.get_connection())
        .map_err(|e| format!("connect {addr}: {e}"))
}

fn command(con: &mut redis::Connection, args: &[String]) -> Result<redis::Value, String> {
    let mut cmd = redis::Cmd::new();
    for a in args {
        cmd.arg(a);
    }
    cmd.query::<redis::Value>(con).map_err(|e| e.to_string())
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// `master_repl_offset` from `INFO replication`: how far a node has got in the stream.
fn offset(con: &mut redis::Connection) -> Result<u64, String> {
    let info = redis::cmd("INFO")
        .arg("replication")
        .query::<String>(con)
        .map_err(|e| e.to_string())?;
    info.lines()
        .find_map(|l| l.trim().strip_prefix("master_repl_offset:"))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no master_repl_offset in {info}"))
}

fn link_up(con: &mut redis::Connection) -> bool {
    redis::cmd("INFO")
        .arg("replication")
        .query::<String>(con)
        .is_ok_and(|i| i.contains("master_link_status:up"))
}

/// `blocked_clients` from `INFO clients`: connections waiting in a `WAIT` (or another
/// blocking command).
fn blocked_clients(con: &mut redis::Connection) -> Result<u64, String> {
    let info = redis::cmd("INFO")
        .arg("clients")
        .query::<String>(con)
        .map_err(|e| e.to_string())?;
    info.lines()
        .find_map(|l| l.trim().strip_prefix("blocked_clients:"))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no blocked_clients in {info}"))
}

/// How long a `WAIT` that finds its replicas already acknowledged takes to answer at most; a
/// `WAIT` that blocks shows in `blocked_clients` well within it.
const WAIT_SETTLES_WITHIN: Duration = Duration::from_millis(200);

/// Lets a `WAIT` just sent reach its primary before the walk goes on. A `WAIT` that blocks
/// makes the primary put `REPLCONF GETACK` into the replication stream before it next reads a
/// command, so once `INFO` shows it blocked, the request for acknowledgements travels with
/// the stream the trace delivers next. Without this, a stream delivered a moment after the
/// `WAIT` was sent could leave without the `GETACK`; the replica would then acknowledge only
/// on its once-a-second timer, and the `WAIT` could time out with 0 where the model's counts
/// the replica (seen once in CI; a 60 ms delay before the worker thread sends its `WAIT` reproduces it every time, and this wait mends it). A `WAIT` answered at once never blocks: after
/// `WAIT_SETTLES_WITHIN` the walk goes on and its answer is judged where the model answers.
fn wait_blocks(primary: &mut redis::Connection, before: u64) -> Result<(), String> {
    let deadline = Instant::now() + WAIT_SETTLES_WITHIN;
    while Instant::now() < deadline {
        if blocked_clients(primary)? > before {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// How long an acknowledgement the replica has sent takes to land, at most, on loopback.
const ACK_LANDS_WITHIN: Duration = Duration::from_millis(100);

/// Gives the acknowledgement of the replica listening on `port` for offset `want` time to
/// reach the primary (`slaveN:…,port=P,…,offset=O` in its `INFO replication`). A real replica
/// acknowledges when asked (a `WAIT` sends `REPLCONF GETACK`) and once a second, the model's
/// after every stream: an acknowledgement the model sends and the real replica has not sent
/// yet is nothing to wait for, and a `WAIT` still waiting on it is judged by its answer.
fn let_ack_land(primary: &mut redis::Connection, port: &str, want: u64) -> Result<(), String> {
    let deadline = Instant::now() + ACK_LANDS_WITHIN;
    let needle = format!("port={port},");
    while Instant::now() < deadline {
        let info = redis::cmd("INFO")
            .arg("replication")
            .query::<String>(primary)
            .map_err(|e| e.to_string())?;
        let got = info
            .lines()
            .filter(|l| l.starts_with("slave") && l.contains(&needle))
            .find_map(|l| l.split(',').find_map(|f| f.strip_prefix("offset=")))
            .and_then(|o| o.parse::<u64>().ok());
        if got.is_some_and(|o| o >= want) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// Waits until the replica has applied everything the primary has written.
fn caught_up(primary: &mut redis::Connection, replica: &mut redis::Connection) -> Result<(), String> {
    let deadline = Instant::now() + ANSWER_WITHIN;
    let target = offset(primary)?;
    while Instant::now() < deadline {
        if link_up(replica) && offset(replica)? >= target {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Err(format!("the replica did not reach offset {target} within 10 s"))
}

/// The real answer in the model's words.
fn model_words(request: &RedisMsg, got: &Result<redis::Value, String>) -> String {
    use redis::Value as V;
    let reply = match (request, got) {
        (_, Err(e)) => RedisMsg::Error { text: e.clone() },
        (RedisMsg::Set { key, incr, .. }, Ok(v)) => match (incr, v) {
            (Some(_), V::Int(n)) => RedisMsg::SetReply {
                key: key.clone(),
                ok: true,
                counter: u64::try_from(*n).ok(),
            },
            (None, V::Okay) => RedisMsg::SetReply {
                key: key.clone(),
                ok: true,
                counter: None,
            },
            (_, V::Nil) => RedisMsg::SetReply {
                key: key.clone(),
                ok: false,
                counter: None,
            },
            (_, other) => return format!("{other:?}"),
        },
        (RedisMsg::Del { key } | RedisMsg::CompareAndDelete { key, .. }, Ok(V::Int(n))) => {
            RedisMsg::DelReply {
                key: key.clone(),
                deleted: *n > 0,
            }
        }
        (RedisMsg::Wait { .. }, Ok(V::Int(n))) => RedisMsg::WaitReply {
            acked: u32::try_from(*n).unwrap_or(u32::MAX),
        },
        (RedisMsg::Get { key }, Ok(V::BulkString(b))) => RedisMsg::GetReply {
            key: key.clone(),
            value: Some(String::from_utf8_lossy(b).into_owned()),
        },
        (RedisMsg::Get { key }, Ok(V::Nil)) => RedisMsg::GetReply {
            key: key.clone(),
            value: None,
        },
        (_, Ok(other)) => return format!("{other:?}"),
    };
    reply.label()
}

/// The step of a command the model never answers.
const NEVER: usize = usize::MAX;

type Worker = Connection<Vec<String>, Result<redis::Value, String>>;

fn worker_connection(addr: &str) -> Result<Worker, String> {
    let mut con = connect(addr)?;
    Ok(Connection::spawn(move |args: Vec<String>| {
        command(&mut con, &args)
    }))
}

/// `lock` and the token counter on a real node, as the model's table shows them.
fn keys(con: &mut redis::Connection) -> String {
    let get = |con: &mut redis::Connection, key: &str| {
        redis::cmd("GET")
            .arg(key)
            .query::<Option<String>>(con)
            .map(|v| v.unwrap_or_else(|| "(none)".to_string()))
            .unwrap_or_else(|e| e.to_string())
    };
    format!("lock {}, fence {}", get(con, "lock"), get(con, "fence"))
}

/// `lock` and the counter of a store in the model's table after entry `at`.
fn model_keys(trace: &Trace, at: usize, store: &str) -> String {
    let t = table(trace, at, "the lock on every node (TTL by that node's clock)");
    match t.rows.iter().find(|r| r[0] == store) {
        Some(r) if r.len() >= 5 => format!("lock {}, fence {}", r[2], r[4]),
        _ => format!("{store}: no row"),
    }
}

/// The real servers playing store-1 (the primary), store-2 and store-3 (its replicas).
pub struct Servers {
    pub primary: String,
    pub replicas: [String; 2],
}

/// Replays `redis-failover` with `params` on the real servers.
pub fn check(servers: &Servers, params: &[(&str, &str)]) -> Report {
    let trace = full_trace("redis-failover", params, 1);
    let mut report = Report::default();
    if let Err(e) = replay(&trace, servers, &mut report) {
        report.mismatch(e);
    }
    report
}

/// A model store and its real server.
struct Store {
    name: &'static str,
    id: NodeId,
    addr: String,
    admin: redis::Connection,
}

fn replay(trace: &Trace, servers: &Servers, report: &mut Report) -> Result<(), String> {
    let addrs = [&servers.primary, &servers.replicas[0], &servers.replicas[1]];
    let mut stores = Vec::new();
    for (name, addr) in ["store-1", "store-2", "store-3"].into_iter().zip(addrs) {
        stores.push(Store {
            name,
            id: node(trace, name),
            addr: addr.clone(),
            admin: connect(addr)?,
        });
    }
    let ids: Vec<NodeId> = stores.iter().map(|s| s.id).collect();
    let index = |id: NodeId| ids.iter().position(|s| *s == id);
    // Fresh servers: the replicas follow the primary through links that start open.
    for s in stores.iter_mut().rev() {
        command(&mut s.admin, &words(&["REPLICAOF", "NO", "ONE"]))?;
        command(&mut s.admin, &words(&["FLUSHALL"]))?;
    }
    let first = model_keys(trace, 0, "store-1");
    if let Some(fence) = first.split("fence ").nth(1).filter(|f| *f != "(none)") {
        command(&mut stores[0].admin, &words(&["SET", "fence", fence]))?;
    }
    // Replication links by (primary, replica) index.
    let mut links: BTreeMap<(usize, usize), Link> = BTreeMap::new();
    let follow = |stores: &mut Vec<Store>, links: &mut BTreeMap<(usize, usize), Link>, p: usize, r: usize| {
        let link = Link::open(&stores[p].addr)?;
        command(
            &mut stores[r].admin,
            &words(&["REPLICAOF", "127.0.0.1", &link.port.to_string()]),
        )?;
        let (a, b) = stores.split_at_mut(r.max(p));
        let (primary, replica) = if p < r {
            (&mut a[p].admin, &mut b[0].admin)
        } else {
            (&mut b[0].admin, &mut a[r].admin)
        };
        caught_up(primary, replica)?;
        link.set_held(true);
        link.set_acks_held(true);
        links.insert((p, r), link);
        Ok::<(), String>(())
    };
    follow(&mut stores, &mut links, 0, 1)?;
    follow(&mut stores, &mut links, 0, 2)?;
    for r in [1, 2] {
        let real = keys(&mut stores[r].admin);
        report.expect_eq(
            &format!("opening keys on {}", stores[r].name),
            &real,
            &model_keys(trace, 0, stores[r].name),
        );
    }

    let names: BTreeMap<NodeId, String> = trace.nodes.iter().map(|n| (n.id, n.name.clone())).collect();
    let mut workers: BTreeMap<(NodeId, NodeId), Worker> = BTreeMap::new();
    let mut waiting: Vec<(NodeId, NodeId, usize, String, RedisMsg)> = Vec::new();
    let mut primary = 0usize;
    // A replica told to follow a node that is not the primary yet follows it once it is.
    let mut deferred: Vec<(usize, usize)> = Vec::new();
    for (at, entry) in trace.entries.iter().enumerate() {
        if entry.kind == EventKind::Fault && entry.text.contains("crashes") {
            if let Some(k) = entry.nodes.first().copied().and_then(index) {
                let real = keys(&mut stores[k].admin);
                report.expect_eq(
                    &format!("step {} {}'s keys when it crashes", entry.seq, stores[k].name),
                    &real,
                    &model_keys(trace, at, stores[k].name),
                );
                links.retain(|(p, _), link| {
                    let keep = *p != k;
                    if !keep {
                        link.cut();
                    }
                    keep
                });
                let id = stores[k].id;
                for (w, server, sent_at, _, request) in &waiting {
                    if *server != id || *sent_at != NEVER {
                        continue;
                    }
                    let shown = request.label();
                    match workers[&(*w, *server)].reply(Duration::ZERO) {
                        None => report.step(format!(
                            "step {:>3} {}'s {shown} is still waiting when {} goes (as in the model)",
                            entry.seq, names[w], stores[k].name
                        )),
                        Some(got) => report.mismatch(format!(
                            "step {} {}'s {shown}: answered {} before {} went; the model never answers it",
                            entry.seq,
                            names[w],
                            model_words(request, &got),
                            stores[k].name
                        )),
                    }
                }
                waiting.retain(|(_, server, _, _, _)| *server != id);
                workers.retain(|(_, server), _| *server != id);
                report.step(format!(
                    "step {:>3} {} crashes: its links drop what they hold",
                    entry.seq, stores[k].name
                ));
            }
        }
        let Some(msg) = delivered(entry) else { continue };
        let (from, to) = (index(msg.from), index(msg.to));
        if let (Some(p), Some(r), true) = (from, to, msg.label.starts_with("stream")) {
            let link = links
                .get(&(p, r))
                .ok_or_else(|| format!("step {}: no link {p}→{r}", entry.seq))?;
            link.set_held(false);
            let (a, b) = stores.split_at_mut(r.max(p));
            let (pc, rc) = if p < r {
                (&mut a[p].admin, &mut b[0].admin)
            } else {
                (&mut b[0].admin, &mut a[r].admin)
            };
            caught_up(pc, rc)?;
            link.set_held(true);
            let real = keys(&mut stores[r].admin);
            report.step(format!(
                "step {:>3} {} → {}: {} (it has {real})",
                entry.seq, stores[p].name, stores[r].name, msg.label
            ));
            report.expect_eq(
                &format!("step {} {}'s keys", entry.seq, stores[r].name),
                &real,
                &model_keys(trace, at, stores[r].name),
            );
        } else if let (Some(r), Some(p), true) = (from, to, msg.label.starts_with("REPLCONF ACK")) {
            // The replica's acknowledgement reaches the primary where the model's does (a
            // WAIT counts the replicas whose acknowledgements are in).
            if let Some(link) = links.get(&(p, r)) {
                link.set_acks_held(false);
                let port = stores[r].addr.rsplit(':').next().unwrap_or("").to_string();
                let want = offset(&mut stores[r].admin)?;
                let_ack_land(&mut stores[p].admin, &port, want)?;
                link.set_acks_held(true);
            }
        } else if let (Some(r), true) = (to, msg.label.starts_with("REPLICAOF")) {
            links.retain(|(_, rr), link| {
                let keep = *rr != r;
                if !keep {
                    link.cut();
                }
                keep
            });
            if msg.label == "REPLICAOF NO ONE" {
                command(&mut stores[r].admin, &words(&["REPLICAOF", "NO", "ONE"]))?;
                primary = r;
                let has = keys(&mut stores[r].admin);
                report.step(format!(
                    "step {:>3} {}: REPLICAOF NO ONE (it has {has})",
                    entry.seq, stores[r].name
                ));
                for (p, rr) in std::mem::take(&mut deferred) {
                    if p == r {
                        follow(&mut stores, &mut links, p, rr)?;
                        report.step(format!(
                            "step {:>3} {} follows {}",
                            entry.seq, stores[rr].name, stores[p].name
                        ));
                    } else {
                        deferred.push((p, rr));
                    }
                }
            } else {
                let target = msg.label.trim_start_matches("REPLICAOF ");
                let p = stores
                    .iter()
                    .position(|s| s.name == target)
                    .ok_or_else(|| format!("unknown store {target}"))?;
                if p == primary {
                    follow(&mut stores, &mut links, p, r)?;
                } else {
                    deferred.push((p, r));
                }
                report.step(format!("step {:>3} {}: {}", entry.seq, stores[r].name, msg.label));
            }
        } else if let (Some(k), true) = (to, names[&msg.from].starts_with("worker")) {
            let request = RedisMsg::parse_client_command(&msg.label)
                .ok_or_else(|| format!("step {}: not a client command: {}", entry.seq, msg.label))?;
            let args = request.command_args().ok_or("no command")?;
            let worker = match workers.entry((msg.from, msg.to)) {
                Entry::Occupied(o) => o.into_mut(),
                Entry::Vacant(v) => v.insert(worker_connection(&stores[k].addr)?),
            };
            let blocked_before = matches!(request, RedisMsg::Wait { .. })
                .then(|| blocked_clients(&mut stores[k].admin))
                .transpose()?;
            worker.send(args);
            if let Some(before) = blocked_before {
                wait_blocks(&mut stores[k].admin, before)?;
            }
            match answer(trace, at) {
                Some((sent_at, reply)) => {
                    waiting.push((msg.from, msg.to, sent_at, reply.label.clone(), request))
                }
                // Unanswered in the model (a WAIT on a primary that crashes first): the real
                // command must still be waiting when its server goes.
                None => waiting.push((msg.from, msg.to, NEVER, String::new(), request)),
            }
        }
        // Commands the model answers at this step (WAIT answers once an ack is in).
        for (w, server, sent_at, model_label, request) in std::mem::take(&mut waiting) {
            if sent_at != at {
                waiting.push((w, server, sent_at, model_label, request));
                continue;
            }
            let got = workers[&(w, server)]
                .reply(ANSWER_WITHIN)
                .unwrap_or_else(|| Err("no answer within 10 s".to_string()));
            let real = model_words(&request, &got);
            let shown = request.label();
            report.step(format!(
                "step {:>3} {} → {}: {shown} → {real}",
                entry.seq, names[&w], names[&server]
            ));
            report.expect_eq(
                &format!("step {} {}'s {shown}", entry.seq, names[&w]),
                &real,
                &model_label,
            );
        }
    }
    for (w, _, _, _, request) in &waiting {
        report.mismatch(format!(
            "{}'s {}: left without an answer",
            names[w],
            request.label()
        ));
    }
    for link in links.values() {
        link.cut();
    }
    let last = trace.entries.len() - 1;
    let final_primary = trace
        .outcome
        .get("final_primary")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    report.expect_eq("the final primary", stores[primary].name, final_primary);
    for s in stores.iter_mut() {
        let real = keys(&mut s.admin);
        report.step(format!("end: {} has {real}", s.name));
        report.expect_eq(
            &format!("{}'s keys at the end", s.name),
            &real,
            &model_keys(trace, last, s.name),
        );
    }
    Ok(())
}
