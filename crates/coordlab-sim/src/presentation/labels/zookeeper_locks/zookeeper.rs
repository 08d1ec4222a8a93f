//! How [`ZkMsg`], [`SessionExpiry`] and a [`SessionId`] read on the picture's arrows and in
//! the event log.

use crate::kernel::participant::Label;
use crate::presentation::durations::seconds;
use crate::protocols::zookeeper_locks::zookeeper::{SessionExpiry, SessionId, WatchEvent, ZkMsg};
use std::fmt;

impl Label for ZkMsg {
    fn label(&self) -> String {
        match self {
            ZkMsg::Connect { timeout_ms } => format!("connect, session timeout {}", seconds(*timeout_ms)),
            ZkMsg::Connected { session, .. } => format!("session {session} open"),
            ZkMsg::Ping { session } => format!("ping {session}"),
            ZkMsg::Pong => "pong".into(),
            ZkMsg::CreateSequential { prefix, .. } => format!("create {prefix} ephemeral sequential"),
            ZkMsg::Created { path, zxid } => format!("created {path} (zxid {zxid})"),
            ZkMsg::GetChildren { path, watch, .. } => {
                format!("getChildren {path}{}", if *watch { " + watch" } else { "" })
            }
            ZkMsg::Children { children, .. } => match children.as_slice() {
                [] => "no children".into(),
                [one] => format!("[{one}]"),
                [first, .., last] => format!("[{first} … {last}] ({} nodes)", children.len()),
            },
            ZkMsg::Exists { path, watch, .. } => {
                format!("exists {path}{}", if *watch { " + watch" } else { "" })
            }
            ZkMsg::ExistsReply { exists: true, .. } => "exists: yes".into(),
            ZkMsg::ExistsReply { exists: false, .. } => "exists: no".into(),
            ZkMsg::Delete { path, .. } => format!("delete {path}"),
            ZkMsg::DeleteReply { deleted: true, .. } => "deleted".into(),
            ZkMsg::DeleteReply { deleted: false, .. } => "no such node".into(),
            ZkMsg::Close { session } => format!("close session {session}"),
            ZkMsg::Closed => "session closed".into(),
            ZkMsg::Watch {
                path,
                event: WatchEvent::NodeDeleted,
            } => format!("watch fired: {path} deleted"),
            ZkMsg::Watch {
                path,
                event: WatchEvent::ChildrenChanged,
            } => format!("watch fired: children of {path} changed"),
            ZkMsg::SessionExpired { session } => format!("session {session} expired"),
        }
    }
}

impl Label for SessionExpiry {
    fn label(&self) -> String {
        format!("session {} timeout check", self.session)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:x}", 0x100 + self.0)
    }
}
