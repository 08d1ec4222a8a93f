//! What the Redis scenarios share: the faults a Redis node takes, the fenced ledger's node,
//! the release property only Redis stories check, and the unsafe-window bookkeeping. The
//! ledger's views and the properties other chapters check too are in the property library.

use crate::kernel::collections::VecMap;
use crate::kernel::faults::FaultKind;
use crate::kernel::ids::NodeId;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::presentation::durations::tenths;
use crate::properties::PropertySpec;
use crate::protocols::lease::fenced_resource::LedgerIntro;
use crate::protocols::redis_locks::redis_msg::KeyEntry;
use crate::scenarios::common::always;
use crate::scenarios::property_library as library;

/// Faults a user may inject on a Redis node: everything, including its clock.
pub const STORE_FAULTS: [FaultKind; 5] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
    FaultKind::Clock,
];

/// Adds the fenced ledger row `ledger` with the chapter's opening balance.
pub fn add_ledger(setup: &mut Setup) -> NodeId {
    library::add_ledger(
        setup,
        LedgerIntro::RefusesStaleOrUnchecked,
        library::OPENING_BALANCE,
    )
}

/// The lock key's value and the time it has left by the node's clock, for a table.
pub fn lock_cells(data: &VecMap<String, KeyEntry>, key: &str, local_now_us: u64) -> (String, String) {
    match data.get(key) {
        Some(e) => (
            e.value.clone(),
            match e.expires_at_us {
                Some(at) if at > local_now_us => tenths((at - local_now_us) / MS_US),
                Some(_) => "expired".to_string(),
                None => "—".to_string(),
            },
        ),
        None => ("(none)".to_string(), "—".to_string()),
    }
}

pub fn releases_own_spec() -> PropertySpec {
    always(
        "releases-only-own-lock",
        "A release never deletes a lock value that belongs to another worker.",
    )
}
