//! How [`PlacedMsg`] and [`PlacedTimer`] read on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::lease::placed_lease::{PlacedMsg, PlacedTimer, TokenSource};

impl Label for PlacedMsg {
    fn label(&self) -> String {
        match self {
            PlacedMsg::Acquire { source, .. } => match source {
                TokenSource::LeaseTable => "INSERT … ON CONFLICT … RETURNING fence_token",
                TokenSource::PostgresSequence => "UPDATE lease SET fence_token = nextval(…)",
                TokenSource::DynamoDb => "UpdateItem … ReturnValues: UPDATED_NEW",
                TokenSource::K8sLease => "PUT Lease (resourceVersion)",
                TokenSource::Etcd => "Txn If CreateRevision == 0 Then Put",
                TokenSource::ZooKeeper => "create EPHEMERAL_SEQUENTIAL",
                TokenSource::RedisLua => "EVAL: SET NX PX + INCR",
            }
            .into(),
            PlacedMsg::Read => "SELECT owner, fence_token, expires_at FROM lease".into(),
            PlacedMsg::Claim { .. } => "UPDATE lease SET owner = :me, fence_token = fence_token + 1".into(),
            PlacedMsg::Granted { token, .. } => format!("fence_token {token}"),
            PlacedMsg::Denied { .. } => "not granted: held".into(),
            PlacedMsg::Row { token, free } => format!(
                "row: fence_token {token}, {}",
                if *free { "expired" } else { "held" }
            ),
            PlacedMsg::Wal { row, .. } => format!("replicate: token {}", row.token),
            PlacedMsg::WalAck => "replicated".into(),
            PlacedMsg::Rejoin => "rejoin as a replica".into(),
            PlacedMsg::Sync => "what do you hold?".into(),
            PlacedMsg::Synced { row, .. } => format!("I hold token {}", row.token),
        }
    }
}

impl Label for PlacedTimer {
    fn label(&self) -> String {
        match self {
            PlacedTimer::Ship => "streams its writes to the replicas".into(),
            PlacedTimer::SessionExpiry => "the holder's session times out".into(),
        }
    }
}
