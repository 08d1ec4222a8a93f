//! How [`ShedMsg`] and [`InstanceTimer`] read on the picture's arrows and in the event log.

use crate::kernel::message::Label;
use crate::protocols::services::shedlock::{InstanceTimer, ShedMsg};

impl Label for ShedMsg {
    fn label(&self) -> String {
        match self {
            ShedMsg::TryLock { .. } => "UPDATE shedlock … WHERE lock_until <= :now".into(),
            ShedMsg::Locked { .. } => "1 row updated".into(),
            ShedMsg::NotLocked { .. } => "0 rows updated".into(),
            ShedMsg::Report { slot } => format!("INSERT report for run {slot}"),
            ShedMsg::Unlock { .. } => "UPDATE shedlock SET lock_until = …".into(),
        }
    }
}

impl Label for InstanceTimer {
    fn label(&self) -> String {
        match self {
            InstanceTimer::Boot => "scheduler starts".into(),
            InstanceTimer::Cron(slot) => format!("@Scheduled fires (run {slot})"),
            InstanceTimer::JobDone => "job finishes".into(),
        }
    }
}
