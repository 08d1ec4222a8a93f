//! Newtype ids, so that a node id can never be mixed up with a message id.

use serde::{Deserialize, Serialize};

/// Implements `Display` for newtype ids, writing the number inside with a format:
/// `display_ids!(NodeId => "n{}", MsgId => "m{}");`.
#[macro_export]
macro_rules! display_ids {
    ($($t:ty => $f:literal),+ $(,)?) => {
        $(impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, $f, self.0)
            }
        })+
    };
}

/// A participant in the simulation; indexes every per-node `Vec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A message sent on the simulated network. Ids only grow within a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MsgId(pub u64);

/// A fencing token: issued by the lease authority, strictly increasing per lease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FencingToken(pub u64);

crate::display_ids!(NodeId => "n{}", MsgId => "m{}", FencingToken => "{}");
