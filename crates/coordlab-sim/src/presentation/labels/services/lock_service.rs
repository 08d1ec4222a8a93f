//! How [`EtcdMsg`] and [`LockServerTimer`] read on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::presentation::durations::seconds;
use crate::protocols::services::lock_service::{EtcdMsg, LockServerTimer};

impl Label for EtcdMsg {
    fn label(&self) -> String {
        match self {
            EtcdMsg::KeepAlive { lease, .. } => format!("LeaseKeepAlive {lease}"),
            EtcdMsg::KeepAliveReply { lease, ttl_ms: 0, .. } => format!("lease {lease} not found"),
            EtcdMsg::KeepAliveReply { lease, ttl_ms, .. } => {
                format!("lease {lease} ttl {}", seconds(*ttl_ms))
            }
            EtcdMsg::Range { prefix, below, .. } => {
                format!("Get {prefix}/ last created before rev {below}, and my key")
            }
            EtcdMsg::RangeReply {
                header,
                ahead,
                mine_exists,
                ..
            } => match ahead {
                Some((key, rev)) => format!("rev {header}: {key} (rev {rev}) is ahead"),
                None if *mine_exists => format!("rev {header}: none ahead; your key exists"),
                None => format!("rev {header}: your key is gone"),
            },
            EtcdMsg::Watch { key, from } => format!("Watch {key} from rev {from}"),
            EtcdMsg::Deleted { key, revision } => format!("DELETE {key} at rev {revision}"),
            EtcdMsg::NotLeader { leader: Some(l), .. } => format!("not the leader, try S{}", l.0 + 1),
            EtcdMsg::NotLeader { leader: None, .. } => "not the leader, leader unknown".into(),
            EtcdMsg::ReadCheck { term, .. } => format!("ReadIndex: do I still lead term {term}?"),
            EtcdMsg::ReadCheckAck { term, ok: true, .. } => format!("yes, term {term}"),
            EtcdMsg::ReadCheckAck { ok: false, .. } => "no: a newer term".into(),
        }
    }
}

impl Label for LockServerTimer {
    fn label(&self) -> String {
        match self {
            LockServerTimer::Raft(t) => Label::label(t),
            LockServerTimer::LeaseDue { lease } => format!("the count of lease {lease} runs out"),
        }
    }
}
