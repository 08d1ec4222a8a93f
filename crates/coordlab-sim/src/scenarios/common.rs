//! What scenarios of every chapter share: the faults a user may inject on each kind of node,
//! and the integer parameter.

use super::{ParamKind, ParamSpec};
use crate::kernel::faults::FaultKind;
use crate::properties::{PropertyKind, PropertySpec};

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

/// An integer parameter from `min` to `max`, in `unit`.
pub fn int_param(
    key: &'static str,
    label: &'static str,
    help: &'static str,
    default: &'static str,
    min: i64,
    max: i64,
    unit: &'static str,
) -> ParamSpec {
    ParamSpec {
        variant_defaults: &[],
        key,
        label,
        help,
        default,
        kind: ParamKind::Int { min, max, unit },
    }
}

/// A property that must hold after every event.
pub const fn always(name: &'static str, description: &'static str) -> PropertySpec {
    PropertySpec {
        name,
        kind: PropertyKind::Always,
        description,
    }
}

/// A property that must have held by the end of the run.
pub const fn eventually(name: &'static str, description: &'static str) -> PropertySpec {
    PropertySpec {
        name,
        kind: PropertyKind::Eventually,
        description,
    }
}
