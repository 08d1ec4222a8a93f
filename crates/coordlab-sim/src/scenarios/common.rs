//! What scenarios of every chapter share: the faults a user may inject on each kind of node.

use crate::kernel::faults::FaultKind;

/// Faults a user may inject on a worker: everything, including its clock.
pub const WORKER_FAULTS: [FaultKind; 5] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
    FaultKind::Clock,
];

/// Faults a user may inject on a node whose clock plays no part: all but a clock fault.
pub const CLOCKLESS_FAULTS: [FaultKind; 4] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
];
