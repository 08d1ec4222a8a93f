//! # coordlab-render
//!
//! Pictures of a trace as SVG text, as pure functions of `(trace, cursor, view options)`.
//! The browser inserts the text, the CLI prints it and "Export SVG" saves it, so a figure in a
//! slide or a doc page is the very picture the player showed.
//!
//! Text from the trace is escaped ([`markup::escape`]): a trace may come from a file.
//! Coordinates are whole pixels, formatted as integers, so the output is the same on every
//! target and no float-printing code enters the browser bundle.

pub mod markup;
pub mod spacetime;
pub mod topology;
