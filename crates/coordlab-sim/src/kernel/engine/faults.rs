//! The one path every fault takes, scripted by a scenario or injected by a user, and the
//! check that an action script only names nodes and faults the scenario allows.

use super::events::{Event, PEER_DOWN_NOTICE_US};
use super::{Draft, Engine};
use crate::kernel::faults::{Action, Fault};
use crate::kernel::hosted::Input;
use crate::kernel::ids::NodeId;
use crate::trace::{EventKind, NodeInfo, NodeStatus};

impl Engine {
    pub(super) fn apply_fault(&mut self, fault: Fault) -> Draft {
        let names = |id: NodeId| self.names.get(id.index()).cloned().unwrap_or_default();
        let mut d = Draft::new(EventKind::Fault, fault.describe(&names), fault.nodes());
        d.fault = Some(fault.clone());
        match fault {
            Fault::Crash { node } => self.crash(node, &mut d),
            Fault::Restart { node } => {
                let i = node.index();
                if self.status[i] != NodeStatus::Crashed {
                    d.notes
                        .push(format!("{} is not down; nothing to restart.", self.name(node)));
                    return d;
                }
                self.slots[i].restart(node);
                self.status[i] = NodeStatus::Up;
                d.notes.push(format!(
                    "{} comes back from its persisted state.",
                    self.name(node)
                ));
                let _ = self.invoke(node, &mut d, Input::Start);
            }
            Fault::Pause { node, duration_ms } => {
                let i = node.index();
                if self.status[i] == NodeStatus::Crashed {
                    d.notes
                        .push(format!("{} is down; there is nothing to pause.", self.name(node)));
                    return d;
                }
                let mut until_us = self.now_us + duration_ms * 1_000;
                if let NodeStatus::Paused { until_us: already } = self.status[i] {
                    until_us = until_us.max(already);
                }
                let generation = self.bump_generation();
                self.pause_generation[i] = generation;
                self.status[i] = NodeStatus::Paused { until_us };
                self.queue.push(until_us, Event::Resume { node, generation });
                d.notes.push(format!(
                    "{} is frozen, not crashed: messages and timers for it wait, and nobody outside can tell the difference.",
                    self.name(node)
                ));
            }
            Fault::Partition { side } => {
                for a in 0..self.infos.len() as u32 {
                    for b in 0..self.infos.len() as u32 {
                        let (a, b) = (NodeId(a), NodeId(b));
                        if side.contains(&a) && !side.contains(&b) {
                            self.net.set_cut(a, b, true);
                            self.net.set_cut(b, a, true);
                        }
                    }
                }
            }
            Fault::CutLink { from, to } => self.net.set_cut(from, to, true),
            Fault::Heal => self.net.heal(),
            Fault::HoldLink { from, to } => self.net.hold(from, to),
            Fault::ReleaseLink { from, to } => {
                for (id, at) in self.net.release(self.now_us, from, to, &mut self.net_rng) {
                    self.queue.push(at, Event::Deliver(id));
                }
            }
            Fault::DropMessage { msg } => {
                if !self.net.drop_message(msg) {
                    d.notes.push(format!("Message {msg} was no longer in flight."));
                }
            }
            Fault::HoldMessage { msg } => {
                if !self.net.hold_message(msg) {
                    d.notes.push(format!(
                        "Message {msg} was no longer on its way (delivered, dropped or held)."
                    ));
                }
            }
            Fault::ClockJump { node, delta_ms } => {
                self.clocks[node.index()].jump(self.now_us, delta_ms * 1_000);
                d.notes.push(clock_jump_note(self.name(node), delta_ms));
            }
            Fault::ClockDrift { node, drift_ppm } => {
                self.clocks[node.index()].set_drift(self.now_us, drift_ppm);
                let applied = self.clocks[node.index()].drift_ppm();
                d.notes.push(clock_drift_note(self.name(node), applied));
            }
            Fault::SlowNode { node, extra_ms } => self.net.slow_sender(node, extra_ms * 1_000),
            Fault::Input { node, input } => self.apply_input(node, &input, &mut d),
        }
        d
    }

    fn crash(&mut self, node: NodeId, d: &mut Draft) {
        let i = node.index();
        if self.status[i] == NodeStatus::Crashed {
            d.notes.push(format!("{} is already down.", self.name(node)));
            return;
        }
        self.slots[i].crash();
        self.status[i] = NodeStatus::Crashed;
        self.timers[i].clear();
        self.waiting[i].clear();
        self.pause_generation[i] = self.bump_generation();
        d.notes.push(format!(
            "{} is gone: everything it held in memory is lost; only what it persisted survives.",
            self.name(node)
        ));
        for j in 0..self.slots.len() {
            let watcher = NodeId(j as u32);
            if watcher != node && self.slots[j].watches(node) {
                let at = self.now_us + PEER_DOWN_NOTICE_US;
                self.queue.push(
                    at,
                    Event::PeerDown {
                        node: watcher,
                        peer: node,
                    },
                );
            }
        }
    }

    /// Hands a user input to the node. A node that is not up, or refuses the input, leaves the
    /// run unchanged; the entry says why and the action is listed as refused.
    fn apply_input(&mut self, node: NodeId, input: &str, d: &mut Draft) {
        let name = self.name(node).to_string();
        let result = match self.status[node.index()] {
            NodeStatus::Up => self.invoke(node, d, Input::User(input)),
            NodeStatus::Crashed => Err(format!("{name} is down")),
            NodeStatus::Paused { .. } => Err(format!("{name} is frozen in a pause")),
        };
        if let Err(reason) = result {
            d.notes
                .push(format!("{name} does not act on `{input}`: {reason}."));
            d.refused = Some(reason);
        }
    }
}

/// Narration for a clock step: timers keep their real deadlines, measurements shift.
fn clock_jump_note(name: &str, delta_ms: i64) -> String {
    if delta_ms == 0 {
        return format!("{name}'s clock is stepped by nothing: no change.");
    }
    let size = decimal(delta_ms.unsigned_abs(), 3);
    // Only the direction's words differ; a step back is what an NTP correction does.
    let (direction, cause, looks) = if delta_ms < 0 {
        ("back", ", as an NTP correction can do", "shorter")
    } else {
        ("forward", "", "longer")
    };
    format!(
        "{name}'s clock is stepped {direction} {size} s{cause}. Its pending timers keep their real deadlines, but any interval it measures across this moment looks {size} s {looks} to it."
    )
}

/// Narration for a change of clock rate, in words and in real seconds.
fn clock_drift_note(name: &str, drift_ppm: i64) -> String {
    if drift_ppm == 0 {
        return format!("{name}'s clock now keeps true time.");
    }
    let percent = decimal(drift_ppm.unsigned_abs(), 4);
    let reads = decimal((1_000_000 + drift_ppm) as u64, 6);
    // Only the direction's words differ.
    let (pace, timers_fire, believes) = if drift_ppm < 0 {
        ("slow", "late", "less")
    } else {
        ("fast", "early", "more")
    };
    format!(
        "{name}'s clock now runs {percent}% {pace}: each real second reads as {reads} s on it. Its timers fire {timers_fire}, and it believes {believes} time has passed than really has."
    )
}

/// `value / 10^places` in decimal without trailing zeros, e.g. `decimal(800_000, 6)` = `0.8`.
fn decimal(value: u64, places: u32) -> String {
    let unit = 10u64.pow(places);
    let frac = format!("{:0width$}", value % unit, width = places as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{}", value / unit)
    } else {
        format!("{}.{frac}", value / unit)
    }
}

pub(super) fn validate_action(infos: &[NodeInfo], action: &Action) -> Result<(), String> {
    let kind = action.fault.kind();
    let nodes = action.fault.nodes();
    for n in &nodes {
        let Some(info) = infos.get(n.index()) else {
            let valid: Vec<String> = infos.iter().map(|i| format!("{} ({})", i.id.0, i.name)).collect();
            return Err(format!(
                "there is no node {}; nodes are {}",
                n.0,
                valid.join(", ")
            ));
        };
        if !info.faults.contains(&kind) {
            return Err(format!(
                "this scenario does not allow {} faults on {}",
                kind.name(),
                info.name.to_ascii_lowercase()
            ));
        }
    }
    if nodes.is_empty() && !infos.iter().any(|i| i.faults.contains(&kind)) {
        return Err("this scenario does not allow network faults".to_string());
    }
    Ok(())
}
