//! Fuzzing the command line's `--set KEY=VALUE` (and the rest of `run`, `check` and `sweep`'s
//! arguments): parsing and the simulator's validation of the parameters, as `coordlab` does
//! before it simulates. It never panics; a refusal quotes the argument (or the part of it)
//! that was wrong; accepted parameters are complete and within each one's allowed values.
//!
//! In the binary's unit tests (the CLI has no library): `cargo test` runs 20,000 inputs,
//! `scripts/fuzz.sh` a million (`COORDLAB_FUZZ_INPUTS`).

use crate::args::{parse, Command, UsageError};
use coordlab_fuzz::{grammar, messages, mutate, Campaign, Choices, Verdict};
use coordlab_sim::scenarios::{self, ParamKind, ParamSpec, Params};

/// Separates arguments in an input, so that a mutation can also move, split or join them.
const SEPARATOR: char = '\u{1f}';

/// Command lines from the docs (docs/cli.md) and the tests: the mutation corpus.
const CORPUS: &[&str] = &[
    "run\u{1f}lost-update\u{1f}--set\u{1f}lock=none\u{1f}--format\u{1f}jsonl",
    "run\u{1f}lost-update\u{1f}--set\u{1f}lock=row-lock\u{1f}--seed\u{1f}7\u{1f}--format\u{1f}mermaid",
    "check\u{1f}lost-update\u{1f}--seeds\u{1f}0..10000\u{1f}--set\u{1f}lock=conditional-update",
    "sweep\u{1f}zombie-worker\u{1f}--seeds\u{1f}0..5000\u{1f}--set\u{1f}fencing=none\u{1f}--property\u{1f}fence-monotonic",
    "run\u{1f}redis-failover\u{1f}--set\u{1f}wait=wait-1\u{1f}--set\u{1f}failure=other-replica-promoted",
    "run\u{1f}zombie-worker\u{1f}--set=fencing=write-predicate\u{1f}--set=pause_start_ms=5000",
    "run\u{1f}zombie-worker\u{1f}--format\u{1f}svg\u{1f}--step\u{1f}40\u{1f}--axis\u{1f}order",
    "run\u{1f}lost-update\u{1f}--actions\u{1f}8@crash:2",
];

/// Pieces a mutation may insert.
const TOKENS: &[&str] = &[
    "\u{1f}", "--set", "=", "--seed", "--seeds", "..", "..=", "-", ",", "lock", "ttl_ms",
];

fn value_for(c: &mut Choices, spec: &ParamSpec) -> String {
    match &spec.kind {
        _ if c.chance(1, 8) => grammar::noise(c),
        _ if c.chance(1, 8) => grammar::number(c),
        ParamKind::Choice { options } => c.pick(options).value.to_string(),
        ParamKind::Int { min, max, .. } => match c.below(3) {
            0 => grammar::near(c, i128::from(*min)),
            1 => grammar::near(c, i128::from(*max)),
            _ => (min + i64::from(c.below(1000)) % (max - min + 1)).to_string(),
        },
    }
}

/// One `--set` argument for `params`: mostly a real key and a plausible value.
fn set_argument(c: &mut Choices, params: &[ParamSpec]) -> String {
    match c.below(12) {
        0 => grammar::noise(c),
        1 => format!("={}", grammar::number(c)),
        2 => format!("{}={}", grammar::noise(c), grammar::noise(c)),
        3 if !params.is_empty() => c.pick(params).key.to_string(),
        _ if params.is_empty() => format!("lock={}", grammar::noise(c)),
        _ => {
            let spec = c.pick(params);
            format!("{}={}", spec.key, value_for(c, spec))
        }
    }
}

/// A command line in the CLI's grammar, mostly `run`, `check` or `sweep` with `--set`s.
fn command_line(c: &mut Choices) -> Vec<String> {
    let ids: Vec<&str> = scenarios::registry().iter().map(|d| d.id).collect();
    let command = *c.pick(&[
        "run", "run", "run", "check", "sweep", "search", "describe", "list", "help", "runn", "",
    ]);
    let id = if c.chance(1, 10) {
        grammar::noise(c)
    } else {
        c.pick(&ids).to_string()
    };
    let params = scenarios::find(&id).map(|d| d.info().params).unwrap_or_default();
    let mut args = vec![command.to_string(), id];
    for _ in 0..c.below(7) {
        let (option, value) = match c.below(15) {
            0..=6 => ("--set", set_argument(c, &params)),
            7 => ("--seed", grammar::number(c)),
            8 => (
                "--seeds",
                format!(
                    "{}{}{}",
                    grammar::number(c),
                    c.pick(&["..", "..=", "."]),
                    grammar::number(c)
                ),
            ),
            9 => ("--actions", grammar::script(c)),
            10 => (
                "--format",
                c.pick(&["text", "jsonl", "mermaid", "svg", "pdf"]).to_string(),
            ),
            11 => (*c.pick(&["--step", "--axis", "--property"]), grammar::number(c)),
            12 => (*c.pick(&["--sett", "-s", "--", "--help"]), grammar::noise(c)),
            13 => (
                *c.pick(&["--faults", "--kinds", "--shard", "--pause-ms"]),
                c.pick(&[
                    "1",
                    "0",
                    "4",
                    "pause",
                    "crash,pause",
                    "flood",
                    "0/2",
                    "2/2",
                    "5000,36000",
                    "-1",
                ])
                .to_string(),
            ),
            _ => ("--set", String::new()),
        };
        match c.below(8) {
            // A value missing at the end of the line.
            0 => args.push(option.to_string()),
            1 => args.push(format!("{option}={value}")),
            _ => args.extend([option.to_string(), value]),
        }
    }
    args
}

fn make(c: &mut Choices) -> String {
    match c.below(10) {
        0..=5 => command_line(c).join(&SEPARATOR.to_string()),
        6..=8 => {
            let base = if c.chance(1, 2) {
                c.pick(CORPUS).to_string()
            } else {
                command_line(c).join(&SEPARATOR.to_string())
            };
            let other = *c.pick(CORPUS);
            mutate(c, &base, other, TOKENS)
        }
        _ => grammar::noise(c),
    }
}

/// Whether every parameter has a value, each within what its spec allows, and each `--set`
/// the user gave is the value used.
fn within_bounds(specs: &[ParamSpec], given: &Params, resolved: &Params) -> Result<(), String> {
    for spec in specs {
        let Some(value) = resolved.get(spec.key) else {
            return Err(format!("`{}` has no value after resolving", spec.key));
        };
        let ok = match &spec.kind {
            ParamKind::Choice { options } => options.iter().any(|o| o.value == value),
            ParamKind::Int { min, max, .. } => value.parse::<i64>().is_ok_and(|v| (*min..=*max).contains(&v)),
        };
        if !ok {
            return Err(format!(
                "accepted `{}={value}`, outside {}",
                spec.key,
                spec.allowed()
            ));
        }
    }
    match given.iter().find(|(k, v)| resolved.get(*k) != Some(v)) {
        Some((k, v)) => Err(format!("`--set {k}={v}` was accepted but not used")),
        None => Ok(()),
    }
}

fn refused(message: &str, args: &[String]) -> Verdict {
    // An empty command has nothing to quote; the message says which argument is empty.
    if args.first().is_some_and(String::is_empty) && message.contains("the first argument is empty") {
        return Verdict::Rejected;
    }
    // An inline value (`--set=KEY=VALUE`) is a piece a message may quote on its own.
    let inline = args
        .iter()
        .filter_map(|a| a.split_once('=').map(|(_, value)| value));
    let typed: Vec<&str> = args.iter().map(String::as_str).chain(inline).collect();
    match messages::check_names_input(message, &typed) {
        Ok(()) => Verdict::Rejected,
        Err(what) => Verdict::Broken(what),
    }
}

fn check(input: &str) -> Verdict {
    let args: Vec<String> = if input.is_empty() {
        Vec::new()
    } else {
        input.split(SEPARATOR).map(str::to_string).collect()
    };
    let request = match parse(&args) {
        Err(UsageError(message)) => return refused(&message, &args),
        Ok(
            Command::Run { request, .. } | Command::Check { request, .. } | Command::Sweep { request, .. },
        ) => request,
        Ok(Command::Search(crate::search::SearchCommand::Run { spec, .. })) => spec.base,
        Ok(_) => return Verdict::Accepted,
    };
    // What `coordlab` does next with the request: the simulator validates the parameters.
    let def = match scenarios::find(&request.scenario) {
        Ok(def) => def,
        Err(e) => return refused(&e.to_string(), &args),
    };
    let info = def.info();
    match scenarios::resolve_params(&info, &request.params) {
        Err(e) => refused(&e.to_string(), &args),
        Ok(resolved) => match within_bounds(&info.params, &request.params, &resolved) {
            Ok(()) => Verdict::Accepted,
            Err(what) => Verdict::Broken(what),
        },
    }
}

#[test]
fn set_parameters() {
    Campaign::from_env(
        "cli-set",
        20_000,
        "cargo test -p coordlab-cli --bin coordlab args_fuzz::set_parameters",
    )
    .run(make, check)
    .assert_clean();
}
