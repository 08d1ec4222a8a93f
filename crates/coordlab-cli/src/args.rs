//! Hand-written argument parsing. Syntax only: whether a scenario, parameter or node exists
//! is checked by the simulator, whose errors already name the valid choices.

use coordlab_sim::kernel::faults::parse_script;
use coordlab_sim::scenarios::{catalog, Params};
use coordlab_sim::{Action, RunRequest};

/// Most seeds one `check` may run.
pub const MAX_SEEDS: u64 = 1_000_000;

pub const USAGE: &str = "\
coordlab — a deterministic simulator of distributed coordination

USAGE:
    coordlab list
    coordlab bundles
    coordlab describe <scenario>
    coordlab run <scenario> [--seed N] [--set KEY=VALUE]... [--actions SCRIPT] [--format text|jsonl|mermaid|svg]
        [--step N] [--axis time|order]
    coordlab check <scenario> --seeds A..B [--set KEY=VALUE]... [--actions SCRIPT]
    coordlab sweep <scenario> --seeds A..B [--set KEY=VALUE]... [--property NAME]...
    coordlab search <scenario> --faults K [--kinds pause,crash] [--set KEY=VALUE]... [--seed N]
        [--actions SCRIPT] [--property NAME]... [--pause-ms MS,MS...] [--shard I/N]
    coordlab search --merge FILE...
    coordlab experiment election-downtime --timeout-ms MIN-MAX --trials N [--seed S]
        [--latency-ms MIN-MAX] [--durable-ms D] [--jitter-ms J] [--format text|json]
    coordlab experiment consensus-throughput [--seed S] [--duration-ms D] [--format text|json]
    coordlab help

COMMANDS:
    list        every scenario with its chapter and title
    bundles     how the browser build splits the library into bundles, as JSON (for
                cargo xtask dist reads the same table): each bundle's cargo features, chapters, scenarios
    describe    a scenario's summary, parameters and declared expectations
    run         simulate one seed and print the trace (default seed 1, format text)
    check       run many seeds and count those that reach the declared expectation;
                exits 1 if any does not
    sweep       run many seeds, each with random faults (crash+restart, pauses, held links)
                and random values for every integer parameter not fixed with --set;
                report every violated safety property with a command that reproduces
                it; exits 1 if any was violated
    search      every schedule of up to K faults (pauses of lengths taken from the
                scenario's timing, crashes) on every participant that offers them, at every
                step, fewest faults first, on all cores: per safety property the first
                schedule that breaks it, shortened and explained step by step, or the claim
                that none of up to K faults does; exits 1 if a property broke.
                --shard I/N runs the I-th of N disjoint parts and prints it as JSON;
                --merge combines the parts into the answer one run would give
    experiment  repeat a measurement over many trials and print its distribution;
                `election-downtime` times Raft's leader election after a crash
                (`coordlab experiment election-downtime --help` describes the model);
                `consensus-throughput` measures Raft's committed writes per second and
                commit latency against cluster size and number of groups

OPTIONS:
    --seed N            the seed of the run, 0..=18446744073709551615
    --set KEY=VALUE     a scenario parameter (see `coordlab describe <scenario>`); repeatable
    --actions SCRIPT    faults to inject, `;`-separated STEP@FAULT, e.g. '12@pause:1:400;15@restart:2'
                        faults: crash:N restart:N pause:N:MS partition:N+M cut:A:B heal hold:A:B
                        release:A:B drop:MSG clock-jump:N:MS clock-drift:N:PPM slow:N:MS
                        input:N:WORD (a user input the node offers, e.g. input:2:timeout
                        on a Raft server, input:5:write on the Raft client)
    --format FORMAT     text (default), jsonl (one JSON object per event, then a summary)
                        mermaid (a sequenceDiagram) or svg (a space-time diagram: a lane per
                        participant, messages as arrows, faults and the lock's holders as spans)
    --step N            svg: draw the run up to step N as the player shows it there (960 wide,
                        following step N) — what the player's Export SVG saves; without it, the
                        whole run
    --axis AXIS         svg: time (default; long quiet gaps drawn shorter, marked) or order
                        (one column per event)
    --seeds RANGE       A..B runs seeds A through B-1; A..=B includes B; at most 1000000 seeds
    --property NAME     sweep, search: check only this safety property; repeatable
    --faults K          search: at most K faults in a schedule, 0..=3
    --kinds KINDS       search: which faults to place, from pause and crash (default both)
    --pause-ms LIST     search: the pause lengths to try, e.g. 15000,36000 (default: half of
                        and a fifth past each of the scenario's timing parameters)
    --shard I/N         search: run only the schedules numbered I mod N, print JSON for --merge
    --export-test       search: print each witness as a Rust #[test] (public API only) that
                        fails once the schedule no longer breaks the property

EXIT STATUS:
    0 success, 1 `check` found seeds that missed the expectation, or `sweep` or `search`
    found a violation, 2 usage error
";

/// A mistake in what the user typed; exits with status 2.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Jsonl,
    Mermaid,
    Svg(coordlab_render::spacetime::Axis, Option<usize>),
}

/// Seeds `start`, `start + 1`, … (`count` of them, at least one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub start: u64,
    pub count: u64,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    List,
    Bundles,
    Describe(String),
    Run {
        request: RunRequest,
        format: Format,
    },
    Check {
        request: RunRequest,
        seeds: SeedRange,
    },
    Sweep {
        request: RunRequest,
        seeds: SeedRange,
        properties: Vec<String>,
    },
    Experiment(crate::experiment::ExperimentCommand),
    Search(crate::search::SearchCommand),
}

const RUN_OPTIONS: &[&str] = &["--seed", "--set", "--actions", "--format", "--step", "--axis"];
const CHECK_OPTIONS: &[&str] = &["--seeds", "--set", "--actions"];
const SWEEP_OPTIONS: &[&str] = &["--seeds", "--set", "--actions", "--property"];
const SEARCH_OPTIONS: &[&str] = &[
    "--seed",
    "--set",
    "--actions",
    "--property",
    "--faults",
    "--kinds",
    "--pause-ms",
    "--shard",
    "--export-test",
];

pub fn parse(args: &[String]) -> Result<Command, UsageError> {
    // An experiment has its own help, describing its model.
    if args.first().is_some_and(|a| a == "experiment") {
        return crate::experiment::parse(&args[1..]).map(Command::Experiment);
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Command::Help);
    }
    let Some((command, rest)) = args.split_first() else {
        return Err(UsageError(
            "missing command; expected one of list, bundles, describe, run, check, sweep, search, experiment, help"
                .into(),
        ));
    };
    if command.is_empty() {
        return Err(UsageError(
            "missing command (the first argument is empty); expected one of list, bundles, describe, run, check, sweep, search, experiment, help"
                .into(),
        ));
    }
    match command.as_str() {
        "help" => Ok(Command::Help),
        "list" => {
            no_more(command, rest)?;
            Ok(Command::List)
        }
        "bundles" => {
            no_more(command, rest)?;
            Ok(Command::Bundles)
        }
        "describe" => {
            let (id, rest) = scenario_id(command, rest)?;
            no_more(command, rest)?;
            Ok(Command::Describe(id))
        }
        "run" => {
            let (id, rest) = scenario_id(command, rest)?;
            let opts = options(command, rest, RUN_OPTIONS)?;
            let request = opts.request(id)?;
            let format = match opts.format.as_deref() {
                None | Some("text") => Format::Text,
                Some("jsonl") => Format::Jsonl,
                Some("mermaid") => Format::Mermaid,
                Some("svg") => svg_format(&opts)?,
                Some(other) => {
                    return Err(UsageError(format!(
                        "bad --format `{other}`; choose one of text, jsonl, mermaid, svg"
                    )))
                }
            };
            if !matches!(format, Format::Svg(..)) {
                let drawing_only = [("--step", &opts.step), ("--axis", &opts.axis)];
                if let Some((name, _)) = drawing_only.iter().find(|(_, given)| given.is_some()) {
                    return Err(UsageError(format!(
                        "`{name}` goes with --format svg (--step and --axis say what to draw)"
                    )));
                }
            }
            Ok(Command::Run { request, format })
        }
        "check" => {
            let (id, rest) = scenario_id(command, rest)?;
            let opts = options(command, rest, CHECK_OPTIONS)?;
            let Some(range) = opts.seeds.as_deref() else {
                return Err(UsageError(
                    "`check` needs --seeds A..B, e.g. --seeds 0..200".into(),
                ));
            };
            let seeds = parse_seeds(range)?;
            let request = opts.request(id)?;
            Ok(Command::Check { request, seeds })
        }
        "sweep" => {
            let (id, rest) = scenario_id(command, rest)?;
            let opts = options(command, rest, SWEEP_OPTIONS)?;
            let Some(range) = opts.seeds.as_deref() else {
                return Err(UsageError(
                    "`sweep` needs --seeds A..B, e.g. --seeds 0..5000".into(),
                ));
            };
            let seeds = parse_seeds(range)?;
            let request = opts.request(id)?;
            Ok(Command::Sweep {
                request,
                seeds,
                properties: opts.properties,
            })
        }
        "search" => {
            use crate::search::{parse_kinds, parse_pauses, parse_shard, SearchCommand};
            if rest.first().is_some_and(|a| a == "--merge") {
                return Ok(Command::Search(SearchCommand::Merge(rest[1..].to_vec())));
            }
            let (id, rest) = scenario_id(command, rest)?;
            let opts = options(command, rest, SEARCH_OPTIONS)?;
            let Some(faults) = opts.faults.as_deref() else {
                return Err(UsageError(
                    "`search` needs --faults K (at most K faults in a schedule), e.g. --faults 1".into(),
                ));
            };
            let max_faults = faults.parse::<u32>().ok().filter(|k| *k <= coordlab_sim::search::MAX_SEARCH_FAULTS).ok_or_else(|| {
                UsageError(format!(
                    "bad --faults `{faults}`; expected 0, 1, 2 or 3"
                ))
            })?;
            let kinds = parse_kinds(opts.kinds.as_deref().unwrap_or("pause,crash"))?;
            let pause_ms = opts.pause_ms.as_deref().map(parse_pauses).transpose()?;
            let shard = opts.shard.as_deref().map(parse_shard).transpose()?;
            let (base, story_off) = coordlab_sim::search::without_story_faults(&opts.request(id)?)?;
            if opts.export_test && shard.is_some() {
                return Err(UsageError(
                    "--export-test goes without --shard: export from the merged search or a whole one".into(),
                ));
            }
            Ok(Command::Search(SearchCommand::Run {
                story_off,
                export_test: opts.export_test,
                spec: coordlab_sim::search::SearchSpec {
                    base,
                    max_faults,
                    kinds,
                    properties: opts.properties,
                    pause_ms,
                },
                shard,
            }))
        }
        other => Err(UsageError(format!(
            "unknown command `{other}`; expected one of list, bundles, describe, run, check, sweep, search, experiment, help"
        ))),
    }
}

fn svg_format(opts: &Options) -> Result<Format, UsageError> {
    use coordlab_render::spacetime::Axis;
    let axis = match opts.axis.as_deref() {
        None => Axis::Time,
        Some(a) => {
            Axis::from_code(a).ok_or_else(|| UsageError(format!("bad --axis `{a}`; choose time or order")))?
        }
    };
    let step = match opts.step.as_deref() {
        None => None,
        Some(s) => Some(s.parse::<usize>().map_err(|_| {
            UsageError(format!(
                "bad --step `{s}`; expected a step number, e.g. --step 34"
            ))
        })?),
    };
    Ok(Format::Svg(axis, step))
}

fn scenario_names() -> String {
    catalog().iter().map(|s| s.id).collect::<Vec<_>>().join(", ")
}

fn scenario_id<'a>(command: &str, rest: &'a [String]) -> Result<(String, &'a [String]), UsageError> {
    match rest.split_first() {
        Some((id, rest)) if !id.is_empty() && !id.starts_with('-') => Ok((id.clone(), rest)),
        _ => Err(UsageError(format!(
            "`{command}` needs a scenario id, e.g. `coordlab {command} lost-update`; available: {}",
            scenario_names()
        ))),
    }
}

fn no_more(command: &str, rest: &[String]) -> Result<(), UsageError> {
    match rest.first() {
        None => Ok(()),
        Some(extra) => Err(UsageError(format!(
            "unexpected argument `{extra}` for `{command}`"
        ))),
    }
}

/// The options of `run` and `check`, as typed.
#[derive(Default)]
struct Options {
    seed: Option<String>,
    seeds: Option<String>,
    format: Option<String>,
    step: Option<String>,
    axis: Option<String>,
    sets: Vec<String>,
    actions: Vec<String>,
    properties: Vec<String>,
    faults: Option<String>,
    kinds: Option<String>,
    pause_ms: Option<String>,
    shard: Option<String>,
    export_test: bool,
}

fn options(command: &str, rest: &[String], valid: &[&str]) -> Result<Options, UsageError> {
    let mut opts = Options::default();
    let mut args = rest.iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        if !valid.contains(&name) {
            return Err(UsageError(if name.starts_with('-') {
                format!(
                    "unknown option `{name}` for `{command}`; its options are: {}",
                    valid.join(", ")
                )
            } else {
                format!(
                    "unexpected argument `{arg}` for `{command}`; its options are: {}",
                    valid.join(", ")
                )
            }));
        }
        if name == "--export-test" {
            opts.export_test = true;
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => args
                .next()
                .cloned()
                .ok_or_else(|| UsageError(format!("`{name}` needs a value after it")))?,
        };
        // An empty script is a script without faults; any other empty value names nothing.
        if value.is_empty() && name != "--actions" {
            return Err(UsageError(format!("`{arg}` was given an empty value")));
        }
        match name {
            "--seed" => opts.seed = Some(value),
            "--seeds" => opts.seeds = Some(value),
            "--format" => opts.format = Some(value),
            "--step" => opts.step = Some(value),
            "--axis" => opts.axis = Some(value),
            "--set" => opts.sets.push(value),
            "--property" => opts.properties.push(value),
            "--faults" => opts.faults = Some(value),
            "--kinds" => opts.kinds = Some(value),
            "--pause-ms" => opts.pause_ms = Some(value),
            "--shard" => opts.shard = Some(value),
            _ => opts.actions.push(value),
        }
    }
    Ok(opts)
}

impl Options {
    fn request(&self, scenario: String) -> Result<RunRequest, UsageError> {
        let seed = match self.seed.as_deref() {
            None => 1,
            Some(s) => s.parse::<u64>().map_err(|_| {
                UsageError(format!(
                    "bad --seed `{s}`; expected a whole number 0..={}",
                    u64::MAX
                ))
            })?,
        };
        let mut params = Params::new();
        for set in &self.sets {
            let (key, value) = set.split_once('=').ok_or_else(|| {
                UsageError(format!(
                    "bad --set `{set}`; expected KEY=VALUE, e.g. --set lock=row-lock"
                ))
            })?;
            if key.is_empty() {
                return Err(UsageError(format!(
                    "bad --set `{set}`: the key before `=` is empty; expected KEY=VALUE, e.g. --set lock=row-lock"
                )));
            }
            params.insert(key.to_string(), value.to_string());
        }
        let mut actions: Vec<Action> = Vec::new();
        for script in &self.actions {
            actions.extend(parse_script(script).map_err(|e| UsageError(format!("bad --actions: {e}")))?);
        }
        Ok(RunRequest {
            scenario,
            params,
            seed,
            actions,
        })
    }
}

pub fn parse_seeds(text: &str) -> Result<SeedRange, UsageError> {
    let bad = |why: &str| {
        UsageError(format!(
            "bad --seeds `{text}`: {why}; expected A..B (B excluded) or A..=B (B included), e.g. 0..200"
        ))
    };
    let (a, b, inclusive) = if let Some((a, b)) = text.split_once("..=") {
        (a, b, true)
    } else if let Some((a, b)) = text.split_once("..") {
        (a, b, false)
    } else {
        return Err(bad("no `..`"));
    };
    let a = a
        .parse::<u64>()
        .map_err(|_| bad(&format!("`{a}` is not a whole number")))?;
    let b = b
        .parse::<u64>()
        .map_err(|_| bad(&format!("`{b}` is not a whole number")))?;
    if b < a || (b == a && !inclusive) {
        return Err(bad("the range is empty"));
    }
    // Both ends are u64, so the inclusive count can only overflow for 0..=u64::MAX.
    let count = (b - a).saturating_add(u64::from(inclusive));
    if count > MAX_SEEDS {
        return Err(bad(&format!(
            "{count} seeds is more than the limit of {MAX_SEEDS}"
        )));
    }
    Ok(SeedRange { start: a, count })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges_are_half_open_or_inclusive() {
        assert_eq!(parse_seeds("0..200"), Ok(SeedRange { start: 0, count: 200 }));
        assert_eq!(parse_seeds("5..=5"), Ok(SeedRange { start: 5, count: 1 }));
        assert!(parse_seeds("5..5").is_err());
        assert!(parse_seeds("9..3").is_err());
        assert!(parse_seeds("0..=18446744073709551615").is_err());
        assert!(parse_seeds("0..1000001").is_err());
        assert!(parse_seeds("a..b").is_err());
    }

    /// What fuzzing `--set` found (args_fuzz.rs): messages that quoted nothing or named no
    /// option.
    #[test]
    fn empty_arguments_and_stray_options_are_named() {
        let error = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            parse(&args).expect_err("a usage error").0
        };
        assert!(error(&["", "lost-update"]).contains("the first argument is empty"));
        assert!(error(&["run", ""]).contains("`run` needs a scenario id"));
        assert_eq!(
            error(&["run", "lost-update", "--set="]),
            "`--set=` was given an empty value"
        );
        assert_eq!(
            error(&["run", "lost-update", "--seed", ""]),
            "`--seed` was given an empty value"
        );
        assert_eq!(
            error(&["run", "lost-update", "--set"]),
            "`--set` needs a value after it"
        );
        assert!(error(&["run", "lost-update", "--set", "=5"])
            .contains("bad --set `=5`: the key before `=` is empty"));
        assert!(
            error(&["run", "lost-update", "--axis", "order"]).starts_with("`--axis` goes with --format svg")
        );
    }

    #[test]
    fn options_take_separate_or_inline_values() {
        let args: Vec<String> = [
            "run",
            "lost-update",
            "--seed=7",
            "--set",
            "lock=row-lock",
            "--format",
            "jsonl",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let Ok(Command::Run { request, format }) = parse(&args) else {
            panic!("should parse")
        };
        assert_eq!(request.seed, 7);
        assert_eq!(request.params.get("lock").map(String::as_str), Some("row-lock"));
        assert_eq!(format, Format::Jsonl);
    }
}
