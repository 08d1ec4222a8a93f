//! Faults are data. A fault scripted by a scenario and a fault a user injects from the UI are
//! the same value, enter the engine through the same function and leave the same trace entry.

use super::engine::{MAX_ACTIONS, MAX_NODES};
use super::ids::{MsgId, NodeId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest pause or clock jump accepted from user input: ten minutes.
pub const MAX_FAULT_MS: u64 = 600_000;
/// Longest input word (`timeout`, `write`) accepted from user input.
pub const MAX_INPUT_LEN: usize = 24;

/// The names [`Fault::from_code`] reads, for its error messages.
const FAULT_NAMES: &str =
    "crash, restart, pause, partition, cut, heal, hold, release, drop, hold-msg, clock-jump, clock-drift, slow, input";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "kebab-case")]
pub enum Fault {
    /// The node stops; volatile state is lost, persisted state is kept.
    Crash { node: NodeId },
    /// A crashed node starts again from its persisted state.
    Restart { node: NodeId },
    /// A stop-the-world pause (GC, a frozen VM): nothing is processed until it ends, then the
    /// node carries on with the beliefs it had before.
    Pause { node: NodeId, duration_ms: u64 },
    /// Cuts every link between `side` and the other nodes, both directions.
    Partition { side: Vec<NodeId> },
    /// Cuts the single direction `from -> to`.
    CutLink { from: NodeId, to: NodeId },
    /// Restores every cut link.
    Heal,
    /// Messages on `from -> to` wait in the network until released.
    HoldLink { from: NodeId, to: NodeId },
    /// Sends everything held on `from -> to` on its way, with fresh latency.
    ReleaseLink { from: NodeId, to: NodeId },
    /// Loses one message in flight.
    DropMessage { msg: MsgId },
    /// Stops one message in flight where it is; it waits until its link is released.
    HoldMessage { msg: MsgId },
    /// Steps the node's clock by `delta_ms` (positive: forward).
    ClockJump { node: NodeId, delta_ms: i64 },
    /// Sets how fast the node's clock runs, in parts per million (positive: fast).
    ClockDrift { node: NodeId, drift_ppm: i64 },
    /// Everything `node` sends takes `extra_ms` longer (an overloaded store); 0 restores it.
    SlowNode { node: NodeId, extra_ms: u64 },
    /// A user pokes a node with one of the inputs it advertises (e.g. a Raft server's
    /// `timeout`, a client's `write`). Not a failure, but it forks the run the same way.
    Input { node: NodeId, input: String },
}

/// What kind of fault, without its arguments: what a scenario allows on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    Crash,
    Restart,
    Pause,
    Network,
    Clock,
    /// User inputs a node advertises (see `Participant::inputs`).
    Input,
}

impl FaultKind {
    /// The kind in words, lower case, e.g. `crash`.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Crash => "crash",
            FaultKind::Restart => "restart",
            FaultKind::Pause => "pause",
            FaultKind::Network => "network",
            FaultKind::Clock => "clock",
            FaultKind::Input => "input",
        }
    }
}

impl Fault {
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::Crash { .. } => FaultKind::Crash,
            Fault::Restart { .. } => FaultKind::Restart,
            Fault::Pause { .. } => FaultKind::Pause,
            Fault::ClockJump { .. } | Fault::ClockDrift { .. } => FaultKind::Clock,
            Fault::Input { .. } => FaultKind::Input,
            _ => FaultKind::Network,
        }
    }

    /// Every node the fault names.
    pub fn nodes(&self) -> Vec<NodeId> {
        match self {
            Fault::Crash { node }
            | Fault::Restart { node }
            | Fault::Pause { node, .. }
            | Fault::ClockJump { node, .. }
            | Fault::ClockDrift { node, .. }
            | Fault::SlowNode { node, .. }
            | Fault::Input { node, .. } => vec![*node],
            Fault::Partition { side } => side.clone(),
            Fault::CutLink { from, to } | Fault::HoldLink { from, to } | Fault::ReleaseLink { from, to } => {
                vec![*from, *to]
            }
            Fault::Heal | Fault::DropMessage { .. } | Fault::HoldMessage { .. } => vec![],
        }
    }

    /// Compact text form used in URLs and on the command line, e.g. `pause:1:40000`.
    pub fn to_code(&self) -> String {
        match self {
            Fault::Crash { node } => format!("crash:{}", node.0),
            Fault::Restart { node } => format!("restart:{}", node.0),
            Fault::Pause { node, duration_ms } => format!("pause:{}:{duration_ms}", node.0),
            Fault::Partition { side } => {
                let ids: Vec<String> = side.iter().map(|n| n.0.to_string()).collect();
                format!("partition:{}", ids.join("+"))
            }
            Fault::CutLink { from, to } => format!("cut:{}:{}", from.0, to.0),
            Fault::Heal => "heal".to_string(),
            Fault::HoldLink { from, to } => format!("hold:{}:{}", from.0, to.0),
            Fault::ReleaseLink { from, to } => format!("release:{}:{}", from.0, to.0),
            Fault::DropMessage { msg } => format!("drop:{}", msg.0),
            Fault::HoldMessage { msg } => format!("hold-msg:{}", msg.0),
            Fault::ClockJump { node, delta_ms } => format!("clock-jump:{}:{delta_ms}", node.0),
            Fault::ClockDrift { node, drift_ppm } => format!("clock-drift:{}:{drift_ppm}", node.0),
            Fault::SlowNode { node, extra_ms } => format!("slow:{}:{extra_ms}", node.0),
            Fault::Input { node, input } => format!("input:{}:{input}", node.0),
        }
    }

    /// Parses the compact text form. Checks syntax and bounds only; whether the nodes exist
    /// is checked against the scenario by the engine.
    pub fn from_code(code: &str) -> Result<Fault, String> {
        let parts: Vec<&str> = code.split(':').collect();
        let node = |i: usize| -> Result<NodeId, String> {
            parts
                .get(i)
                .and_then(|s| s.parse::<u32>().ok())
                .map(NodeId)
                .ok_or_else(|| format!("fault `{code}`: expected a node number in position {i}"))
        };
        let arity = |n: usize| -> Result<(), String> {
            if parts.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "fault `{code}`: expected {} argument(s), got {}",
                    n - 1,
                    parts.len() - 1
                ))
            }
        };
        let fault = match parts[0] {
            "crash" => {
                arity(2)?;
                Fault::Crash { node: node(1)? }
            }
            "restart" => {
                arity(2)?;
                Fault::Restart { node: node(1)? }
            }
            "pause" => {
                arity(3)?;
                let duration_ms = parts[2]
                    .parse::<u64>()
                    .ok()
                    .filter(|d| (1..=MAX_FAULT_MS).contains(d))
                    .ok_or_else(|| format!("fault `{code}`: pause length must be 1..={MAX_FAULT_MS} ms"))?;
                Fault::Pause {
                    node: node(1)?,
                    duration_ms,
                }
            }
            "partition" => {
                arity(2)?;
                let mut side = Vec::new();
                for part in parts[1].split('+') {
                    let id = part
                        .parse::<u32>()
                        .map_err(|_| format!("fault `{code}`: `{part}` is not a node number"))?;
                    // Bounded like every user input: no run has more nodes than that.
                    if side.len() == MAX_NODES as usize {
                        return Err(format!("fault `{code}`: a side names at most {MAX_NODES} nodes"));
                    }
                    if side.contains(&NodeId(id)) {
                        return Err(format!("fault `{code}`: node {id} is named twice"));
                    }
                    side.push(NodeId(id));
                }
                Fault::Partition { side }
            }
            "cut" => {
                arity(3)?;
                Fault::CutLink {
                    from: node(1)?,
                    to: node(2)?,
                }
            }
            "heal" => {
                arity(1)?;
                Fault::Heal
            }
            "hold" => {
                arity(3)?;
                Fault::HoldLink {
                    from: node(1)?,
                    to: node(2)?,
                }
            }
            "release" => {
                arity(3)?;
                Fault::ReleaseLink {
                    from: node(1)?,
                    to: node(2)?,
                }
            }
            "drop" => {
                arity(2)?;
                let msg = parts[1]
                    .parse::<u64>()
                    .map_err(|_| format!("fault `{code}`: `{}` is not a message number", parts[1]))?;
                Fault::DropMessage { msg: MsgId(msg) }
            }
            "hold-msg" => {
                arity(2)?;
                let msg = parts[1]
                    .parse::<u64>()
                    .map_err(|_| format!("fault `{code}`: `{}` is not a message number", parts[1]))?;
                Fault::HoldMessage { msg: MsgId(msg) }
            }
            "clock-jump" => {
                arity(3)?;
                let limit = MAX_FAULT_MS as i64;
                let delta_ms = parts[2]
                    .parse::<i64>()
                    .ok()
                    .filter(|d| (-limit..=limit).contains(d))
                    .ok_or_else(|| format!("fault `{code}`: clock jump must be within ±{limit} ms"))?;
                Fault::ClockJump {
                    node: node(1)?,
                    delta_ms,
                }
            }
            "clock-drift" => {
                arity(3)?;
                let limit = super::clock::MAX_DRIFT_PPM;
                let drift_ppm = parts[2]
                    .parse::<i64>()
                    .ok()
                    .filter(|d| (-limit..=limit).contains(d))
                    .ok_or_else(|| format!("fault `{code}`: drift must be within ±{limit} ppm"))?;
                Fault::ClockDrift {
                    node: node(1)?,
                    drift_ppm,
                }
            }
            "slow" => {
                arity(3)?;
                let extra_ms = parts[2]
                    .parse::<u64>()
                    .ok()
                    .filter(|d| *d <= MAX_FAULT_MS)
                    .ok_or_else(|| format!("fault `{code}`: extra latency must be 0..={MAX_FAULT_MS} ms"))?;
                Fault::SlowNode {
                    node: node(1)?,
                    extra_ms,
                }
            }
            "input" => {
                arity(3)?;
                Fault::Input {
                    node: node(1)?,
                    input: input_word(code, parts[2])?,
                }
            }
            "" if code.is_empty() => {
                return Err(format!("the fault is empty; expected one of {FAULT_NAMES}"))
            }
            "" => {
                return Err(format!(
                    "fault `{code}` has no name before its first `:`; expected one of {FAULT_NAMES}"
                ))
            }
            other => {
                return Err(format!(
                    "unknown fault `{other}` in `{code}`; expected one of {FAULT_NAMES}"
                ))
            }
        };
        Ok(fault)
    }

    /// Human text with node names, for the trace line.
    pub fn describe(&self, name: &dyn Fn(NodeId) -> String) -> String {
        match self {
            Fault::Crash { node } => format!("{} crashes", name(*node)),
            Fault::Restart { node } => format!("{} restarts", name(*node)),
            Fault::Pause { node, duration_ms } => {
                format!(
                    "{} freezes for {duration_ms} ms (stop-the-world pause)",
                    name(*node)
                )
            }
            Fault::Partition { side } => {
                let names: Vec<String> = side.iter().map(|n| name(*n)).collect();
                format!("network partition cuts off {{{}}}", names.join(", "))
            }
            Fault::CutLink { from, to } => format!("link {} -> {} is cut", name(*from), name(*to)),
            Fault::Heal => "the network heals".to_string(),
            Fault::HoldLink { from, to } => {
                format!("link {} -> {} holds its messages", name(*from), name(*to))
            }
            Fault::ReleaseLink { from, to } => {
                format!("link {} -> {} releases held messages", name(*from), name(*to))
            }
            Fault::DropMessage { msg } => format!("message {msg} is lost"),
            Fault::HoldMessage { msg } => format!("message {msg} is held where it is"),
            Fault::ClockJump { node, delta_ms } => {
                format!("{}'s clock jumps {delta_ms:+} ms", name(*node))
            }
            Fault::ClockDrift { node, drift_ppm } => {
                format!("{}'s clock now drifts {drift_ppm:+} ppm", name(*node))
            }
            Fault::SlowNode { node, extra_ms: 0 } => format!("{} answers at normal speed again", name(*node)),
            Fault::SlowNode { node, extra_ms } => {
                format!(
                    "{} slows down: everything it sends takes {extra_ms} ms longer",
                    name(*node)
                )
            }
            Fault::Input { node, input } => format!("user input `{input}` to {}", name(*node)),
        }
    }
}

/// Checks an input word: 1..=[`MAX_INPUT_LEN`] ASCII letters, digits or dashes. Bounded and
/// plain so that it can sit in a URL and a trace line unescaped.
fn input_word(code: &str, word: &str) -> Result<String, String> {
    let plain = word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if word.is_empty() || word.len() > MAX_INPUT_LEN || !plain {
        return Err(format!(
            "fault `{code}`: an input must be 1..={MAX_INPUT_LEN} letters, digits or dashes, e.g. input:2:timeout"
        ));
    }
    Ok(word.to_string())
}

/// A user action in the run's script: a fault applied when the trace has `at_step` entries.
/// Keying by step (not time) is what makes forking exact: every entry before `at_step` is
/// computed from the same inputs as before, so it is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    pub at_step: u32,
    pub fault: Fault,
}

impl Action {
    pub fn to_code(&self) -> String {
        format!("{}@{}", self.at_step, self.fault.to_code())
    }

    pub fn from_code(code: &str) -> Result<Action, String> {
        let (step, fault) = code
            .split_once('@')
            .ok_or_else(|| format!("action `{code}`: expected STEP@FAULT, e.g. 12@pause:1:400"))?;
        let at_step = step
            .parse::<u32>()
            .map_err(|_| format!("action `{code}`: `{step}` is not a step number"))?;
        if fault.is_empty() {
            return Err(format!(
                "action `{code}`: expected a fault after the `@`, e.g. 12@pause:1:400"
            ));
        }
        Ok(Action {
            at_step,
            fault: Fault::from_code(fault)?,
        })
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_code())
    }
}

/// Parses a `;`-separated action script of at most [`MAX_ACTIONS`] actions.
pub fn parse_script(text: &str) -> Result<Vec<Action>, String> {
    let mut actions = Vec::new();
    for code in text.split(';').filter(|s| !s.is_empty()) {
        // Refused here, not only by the engine, so that a long link is not read in full.
        if actions.len() == MAX_ACTIONS {
            return Err(format!(
                "action `{code}` is one too many: a script has at most {MAX_ACTIONS} actions"
            ));
        }
        actions.push(Action::from_code(code)?);
    }
    Ok(actions)
}

/// The `;`-separated text form of an action script.
pub fn script_code(actions: &[Action]) -> String {
    actions.iter().map(Action::to_code).collect::<Vec<_>>().join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_round_trips_through_its_code() {
        let faults = vec![
            Fault::Crash { node: NodeId(1) },
            Fault::Restart { node: NodeId(2) },
            Fault::Pause {
                node: NodeId(1),
                duration_ms: 40_000,
            },
            Fault::Partition {
                side: vec![NodeId(0), NodeId(3)],
            },
            Fault::CutLink {
                from: NodeId(0),
                to: NodeId(1),
            },
            Fault::Heal,
            Fault::HoldLink {
                from: NodeId(1),
                to: NodeId(0),
            },
            Fault::ReleaseLink {
                from: NodeId(1),
                to: NodeId(0),
            },
            Fault::DropMessage { msg: MsgId(7) },
            Fault::HoldMessage { msg: MsgId(8) },
            Fault::ClockJump {
                node: NodeId(2),
                delta_ms: -300,
            },
            Fault::ClockDrift {
                node: NodeId(2),
                drift_ppm: 2_000,
            },
            Fault::SlowNode {
                node: NodeId(0),
                extra_ms: 80,
            },
            Fault::Input {
                node: NodeId(3),
                input: "timeout".into(),
            },
        ];
        for f in faults {
            assert_eq!(Fault::from_code(&f.to_code()), Ok(f.clone()), "{}", f.to_code());
        }
    }

    #[test]
    fn bad_codes_are_explained() {
        assert!(Fault::from_code("explode:1")
            .unwrap_err()
            .contains("unknown fault"));
        assert!(Fault::from_code("pause:1:0")
            .unwrap_err()
            .contains("pause length"));
        assert!(Fault::from_code("crash").unwrap_err().contains("argument"));
        assert!(Action::from_code("x@crash:1")
            .unwrap_err()
            .contains("step number"));
        assert_eq!(
            parse_script("3@crash:1;9@restart:1").unwrap(),
            vec![
                Action {
                    at_step: 3,
                    fault: Fault::Crash { node: NodeId(1) }
                },
                Action {
                    at_step: 9,
                    fault: Fault::Restart { node: NodeId(1) }
                },
            ]
        );
    }
}

/// What fuzzing the parser found (crates/coordlab-sim/tests/fuzz_action_script.rs).
#[cfg(test)]
mod fuzz_findings {
    use super::*;

    #[test]
    fn a_missing_fault_name_is_explained_with_the_action() {
        let err = parse_script("3@").unwrap_err();
        assert!(err.contains("`3@`") && err.contains("after the `@`"), "{err}");
        let err = parse_script("3@:1").unwrap_err();
        assert!(err.contains("`:1`") && err.contains("no name"), "{err}");
    }

    #[test]
    fn the_list_of_faults_names_every_fault() {
        let err = Fault::from_code("nap:1").unwrap_err();
        assert!(err.contains("unknown fault `nap` in `nap:1`"), "{err}");
        assert!(err.contains("hold-msg"), "{err}");
    }

    #[test]
    fn a_partition_names_each_node_once_and_at_most_max_nodes() {
        let err = Fault::from_code("partition:1+2+1").unwrap_err();
        assert!(err.contains("node 1 is named twice"), "{err}");
        let all: Vec<String> = (0..MAX_NODES).map(|n| n.to_string()).collect();
        assert!(Fault::from_code(&format!("partition:{}", all.join("+"))).is_ok());
        let err = Fault::from_code(&format!("partition:{}+99", all.join("+"))).unwrap_err();
        assert!(err.contains("at most 16 nodes"), "{err}");
    }

    #[test]
    fn a_script_holds_at_most_max_actions() {
        let script = |n: usize| vec!["1@heal"; n].join(";");
        assert_eq!(
            parse_script(&script(MAX_ACTIONS)).map(|a| a.len()),
            Ok(MAX_ACTIONS)
        );
        let err = parse_script(&script(MAX_ACTIONS + 1)).unwrap_err();
        assert!(err.contains("`1@heal` is one too many"), "{err}");
    }
}

#[cfg(test)]
mod input_tests {
    use super::*;

    #[test]
    fn an_input_parses_from_its_code() {
        assert_eq!(
            Fault::from_code("input:2:timeout"),
            Ok(Fault::Input {
                node: NodeId(2),
                input: "timeout".into()
            })
        );
        assert_eq!(
            Action::from_code("14@input:5:write").map(|a| a.fault.kind()),
            Ok(FaultKind::Input)
        );
        assert_eq!(
            Fault::from_code("input:1:force-2").map(|f| f.to_code()),
            Ok("input:1:force-2".to_string())
        );
    }

    #[test]
    fn bad_inputs_are_explained() {
        for bad in [
            "input:1:",
            "input:1:a b",
            "input:1:<script>",
            "input:1:timeout%",
            "input:1:é",
        ] {
            let err = Fault::from_code(bad).unwrap_err();
            assert!(err.contains("letters, digits or dashes"), "{bad}: {err}");
        }
        let long = format!("input:1:{}", "x".repeat(MAX_INPUT_LEN + 1));
        assert!(Fault::from_code(&long).is_err());
        let longest = format!("input:1:{}", "x".repeat(MAX_INPUT_LEN));
        assert!(Fault::from_code(&longest).is_ok());
        assert!(Fault::from_code("input:x:timeout")
            .unwrap_err()
            .contains("node number"));
        assert!(Fault::from_code("input:1").unwrap_err().contains("argument"));
        assert!(Fault::from_code("input:1:a:b").unwrap_err().contains("argument"));
    }
}
