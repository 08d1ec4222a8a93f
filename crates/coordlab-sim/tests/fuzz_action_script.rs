//! Fuzzing the action-script parser (`12@pause:1:400;15@restart:2`), which reads links,
//! `--actions` and trace files: it never panics, a rejection quotes the part that was wrong,
//! and an accepted script is within the documented bounds and reads back the same.
//!
//! `cargo test` runs 20,000 inputs; `scripts/fuzz.sh` a million (`COORDLAB_FUZZ_INPUTS`).

use coordlab_fuzz::{grammar, messages, mutate, Campaign, Choices, Verdict};
use coordlab_sim::kernel::clock::MAX_DRIFT_PPM;
use coordlab_sim::kernel::engine::{MAX_ACTIONS, MAX_NODES};
use coordlab_sim::kernel::faults::{parse_script, script_code, Action, MAX_FAULT_MS, MAX_INPUT_LEN};
use coordlab_sim::Fault;
use std::collections::BTreeSet;

/// Scripts the project itself uses (golden traces, docs, tests): the mutation corpus.
const CORPUS: &[&str] = &[
    "5@crash:2;15@restart:2;8@pause:0:500",
    "12@pause:1:400;15@restart:2",
    "6@pause:1:30",
    "3@crash:1;9@restart:1",
    "20@hold:0:2",
    "2@pause:2:5000",
    "3@input:1:write",
    "4@partition:0+1;9@heal;11@cut:2:0;12@release:1:0",
    "7@drop:31;8@hold-msg:40;9@clock-jump:2:-300;10@clock-drift:1:2000;11@slow:0:80",
];

/// Pieces a mutation may insert.
const TOKENS: &[&str] = &[
    "@",
    ":",
    ";",
    "+",
    "crash",
    "pause",
    "partition",
    "hold-msg",
    "clock-jump",
    "input",
    "heal",
    "600000",
    "600001",
    "-600001",
    "500001",
    "4294967296",
    "18446744073709551616",
    "-",
    "",
];

fn make(c: &mut Choices) -> String {
    match c.below(10) {
        0..=4 => grammar::script(c),
        5..=8 => {
            let base = if c.chance(1, 2) {
                c.pick(CORPUS).to_string()
            } else {
                grammar::script(c)
            };
            let other = *c.pick(CORPUS);
            mutate(c, &base, other, TOKENS)
        }
        _ => grammar::noise(c),
    }
}

/// The bounds `faults.rs` documents for each fault, as a reader of the docs would check them.
fn within_bounds(action: &Action) -> Result<(), String> {
    let ms = MAX_FAULT_MS as i64;
    let ok = match &action.fault {
        Fault::Pause { duration_ms, .. } => (1..=MAX_FAULT_MS).contains(duration_ms),
        Fault::SlowNode { extra_ms, .. } => *extra_ms <= MAX_FAULT_MS,
        Fault::ClockJump { delta_ms, .. } => (-ms..=ms).contains(delta_ms),
        Fault::ClockDrift { drift_ppm, .. } => (-MAX_DRIFT_PPM..=MAX_DRIFT_PPM).contains(drift_ppm),
        Fault::Input { input, .. } => {
            (1..=MAX_INPUT_LEN).contains(&input.len())
                && input.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
        }
        Fault::Partition { side } => {
            let distinct: BTreeSet<_> = side.iter().collect();
            (1..=MAX_NODES as usize).contains(&side.len()) && distinct.len() == side.len()
        }
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("accepted `{}`, which is out of bounds", action.to_code()))
    }
}

fn check(text: &str) -> Verdict {
    match parse_script(text) {
        Err(message) => match messages::check_names_input(&message, &text.split(';').collect::<Vec<_>>()) {
            Ok(()) => Verdict::Rejected,
            Err(what) => Verdict::Broken(what),
        },
        Ok(actions) => {
            if actions.len() > MAX_ACTIONS {
                return Verdict::Broken(format!(
                    "accepted {} actions; a run takes at most {MAX_ACTIONS}",
                    actions.len()
                ));
            }
            if let Some(what) = actions.iter().find_map(|a| within_bounds(a).err()) {
                return Verdict::Broken(what);
            }
            let code = script_code(&actions);
            match parse_script(&code) {
                Ok(again) if again == actions => Verdict::Accepted,
                again => Verdict::Broken(format!("its code `{code}` reads back as {again:?}")),
            }
        }
    }
}

#[test]
fn action_script() {
    Campaign::from_env(
        "action-script",
        20_000,
        "cargo test -p coordlab-sim --test fuzz_action_script",
    )
    .run(make, check)
    .assert_clean();
}
