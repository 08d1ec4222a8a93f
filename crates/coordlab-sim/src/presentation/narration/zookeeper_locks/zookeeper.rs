//! What the ZooKeeper service saw of sessions, znodes and watches, and the sentences it reads
//! as. `who` is the client a request came from.

use crate::kernel::time::MS_US;
use crate::presentation::durations::seconds;
use crate::protocols::zookeeper_locks::zookeeper::{SessionId, WatchEvent};

/// One thing the service saw while handling a request, a session timer or its start.
pub enum ZkServiceSaw<'a> {
    Up {
        lock_path: &'a str,
    },
    RequestOnExpiredSession {
        who: &'a str,
        session: SessionId,
    },
    SessionOpened {
        who: &'a str,
        session: SessionId,
        timeout_ms: u64,
    },
    /// It created `path`, numbered `seq` from `parent`'s change counter.
    NodeCreated {
        who: &'a str,
        path: &'a str,
        session: SessionId,
        seq: u64,
        parent: &'a str,
    },
    /// `client` was quiet for `quiet_us` by the service's clock; its `owned` nodes go.
    SessionExpired {
        client: &'a str,
        quiet_us: u64,
        session: SessionId,
        owned: &'a [String],
    },
    /// The watches of `event`'s kind on `path` fired for these clients.
    WatchFired {
        path: &'a str,
        event: WatchEvent,
        woken: &'a [&'a str],
        /// The session whose own change fired the watch, notified too by a watch it set
        /// earlier (not counted as woken).
        also: Option<&'a str>,
    },
}

impl From<ZkServiceSaw<'_>> for String {
    fn from(saw: ZkServiceSaw<'_>) -> String {
        use ZkServiceSaw::*;
        match saw {
            Up { lock_path } => format!(
                "ZooKeeper is up: a replicated ensemble, drawn here as one service because its servers agree on one order of every change — how they agree is what the Raft chapter shows. {lock_path} exists and has no children."
            ),
            RequestOnExpiredSession { who, session } => format!(
                "ZooKeeper refuses {who}'s request: session {session} has expired, and with it everything the session owned."
            ),
            SessionOpened {
                who,
                session,
                timeout_ms,
            } => format!(
                "ZooKeeper opens session {session} for {who}. If it hears nothing from {who} for {} by its own clock, the session expires and its ephemeral nodes go with it.",
                seconds(timeout_ms)
            ),
            NodeCreated {
                who,
                path,
                session,
                seq,
                parent,
            } => format!(
                "ZooKeeper creates {path} for {who}: ephemeral (it lives only as long as session {session}) and numbered {seq} from {parent}'s change counter, which never goes back."
            ),
            SessionExpired {
                client,
                quiet_us,
                session,
                owned,
            } => {
                let quiet = seconds(quiet_us / MS_US);
                let deleted = if owned.is_empty() {
                    String::new()
                } else {
                    format!(", and its ephemeral node {} is deleted", owned.join(", "))
                };
                format!("ZooKeeper has heard nothing from {client} for {quiet} by its own clock: session {session} expires{deleted}.")
            }
            WatchFired {
                path,
                event: WatchEvent::NodeDeleted,
                woken,
                ..
            } => format!(
                "The watch on {path} fires for {}: a one-shot notification, gone once sent.",
                woken.join(", ")
            ),
            WatchFired {
                path,
                event: WatchEvent::ChildrenChanged,
                woken,
                also,
            } => format!(
                "The watch on {path}'s children fires for {} client(s) at once ({}); every one of them that is waiting lists {path} again.{}",
                woken.len(),
                woken.join(", "),
                also.map(|who| format!(" {who}, whose own change fired it, is notified too, by the watch it set when it last listed {path}; it is not waiting, so that changes nothing."))
                    .unwrap_or_default()
            ),
        }
    }
}
