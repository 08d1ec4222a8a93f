//! Fuzzing coordlab's parsers of user input (the URL router, the action-script parser, the
//! command line's `--set`) without nightly or cargo-fuzz: every input is drawn from a seeded
//! ChaCha8 stream, half of them built from the parser's grammar and half by mutating valid
//! inputs, and run under `catch_unwind`.
//!
//! A harness is an ordinary `#[test]` that builds a [`Campaign`] from the environment and runs
//! it with two closures: one makes input number `i` from its [`Choices`], the other parses it and
//! checks the parser's properties ([`Verdict`]). In `cargo test` a campaign runs a short default
//! count; `scripts/fuzz.sh` sets `COORDLAB_FUZZ_INPUTS` for the long runs.
//!
//! Input `i` of seed `s` depends on `(s, i)` alone, so a failure is reproduced by running just
//! that input: the report prints the command.

mod campaign;
mod choices;
pub mod grammar;
pub mod messages;
mod mutate;

pub use campaign::{Campaign, Report, Verdict};
pub use choices::Choices;
pub use mutate::{mutate, MAX_INPUT_BYTES};
