//! `coordlab`: the simulator on the command line. This file only dispatches; see
//! `args.rs` for the grammar and the `format_*` modules for the outputs (the JSONL trace file is
//! `coordlab_sim::trace_file`, since the player reads it too).

mod args;
#[cfg(test)]
mod args_fuzz;
mod check;
mod describe;
mod experiment;
mod format_mermaid;
mod format_text;
mod list;
mod search;
mod sweep;
mod throughput;
mod util;

use args::{Command, Format, UsageError, USAGE};
use coordlab_sim::scenarios::expectation_for;
use coordlab_sim::{Limits, Recording, RunRequest, SimError};
use std::io::Write;
use std::process::ExitCode;

/// What a command prints and the status it exits with.
struct Output {
    stdout: String,
    status: u8,
}

impl From<SimError> for UsageError {
    fn from(e: SimError) -> Self {
        UsageError(e.to_string())
    }
}

fn main() -> ExitCode {
    // `args_os` and a lossy conversion: `std::env::args` panics on arguments that are not UTF-8.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match dispatch(&args) {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`coordlab run … | head`) is not an error worth a message.
            let _ = stdout
                .write_all(output.stdout.as_bytes())
                .and_then(|()| stdout.flush());
            ExitCode::from(output.status)
        }
        Err(UsageError(message)) => {
            let text = format!("coordlab: error: {message}\n(see `coordlab --help` for usage)\n");
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
            ExitCode::from(2)
        }
    }
}

fn dispatch(args: &[String]) -> Result<Output, UsageError> {
    let ok = |stdout: String| Output { stdout, status: 0 };
    match args::parse(args)? {
        Command::Help => Ok(ok(USAGE.to_string())),
        Command::List => Ok(ok(list::list())),
        Command::Bundles => Ok(ok(list::bundles())),
        Command::Describe(id) => Ok(ok(describe::describe(&id)?)),
        Command::Run { request, format } => Ok(ok(run(&request, format)?)),
        Command::Sweep {
            request,
            seeds,
            properties,
        } => {
            let (stdout, clean) = sweep::sweep(&request, seeds, &properties)?;
            Ok(Output {
                stdout,
                status: if clean { 0 } else { 1 },
            })
        }
        Command::Experiment(command) => Ok(ok(experiment::execute(&command))),
        Command::Search(command) => {
            let (stdout, clean) = search::execute(&command)?;
            Ok(Output {
                stdout,
                status: if clean { 0 } else { 1 },
            })
        }
        Command::Check { request, seeds } => {
            let (stdout, all_met) = check::check(&request, seeds)?;
            Ok(Output {
                stdout,
                status: if all_met { 0 } else { 1 },
            })
        }
    }
}

/// The space-time diagram: the whole run, or the player's picture at one step.
fn svg(
    trace: &coordlab_sim::Trace,
    axis: coordlab_render::spacetime::Axis,
    step: Option<usize>,
) -> Result<String, UsageError> {
    use coordlab_render::spacetime::{self, Diagram, Options, Window};
    let last = trace.entries.len().saturating_sub(1);
    if let Some(s) = step.filter(|s| *s > last) {
        return Err(UsageError(format!(
            "--step {s} is past the end of the run: its last step is {last}"
        )));
    }
    let window = if step.is_some() {
        Window::Follow
    } else {
        Window::All
    };
    let diagram = Diagram::new(trace);
    let mut out = spacetime::svg(trace, &diagram, step.unwrap_or(last), Options { axis, window });
    out.push('\n');
    Ok(out)
}

fn run(request: &RunRequest, format: Format) -> Result<String, UsageError> {
    let expectation = expectation_for(request)?;
    let trace = coordlab_sim::run(request, Limits::default(), Recording::Lines)?;
    let mismatches = expectation.mismatches(&trace);
    Ok(match format {
        Format::Text => format_text::render(&trace, &expectation, &mismatches),
        Format::Jsonl => coordlab_sim::trace_file::write(&trace, &mismatches),
        Format::Mermaid => format_mermaid::render(&trace),
        Format::Svg(axis, step) => svg(&trace, axis, step)?,
    })
}
