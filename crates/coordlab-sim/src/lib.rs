//! # coordlab-sim
//!
//! A deterministic simulator of distributed coordination. A run is a pure function of
//! *(scenario, parameters, seed, action script)* and produces a [`trace::Trace`]: every
//! processed event with its one-line text, narration, property verdicts and the full state
//! after it.
//!
//! ## Architecture invariants
//! - This crate depends on no web crate and never reads a clock, the OS's randomness or any
//!   global state. All randomness comes from seeded ChaCha8 streams ([`kernel::rng`]).
//! - Same inputs ⇒ byte-identical trace, natively and on wasm32 (tests prove it with
//!   [`trace::Trace::fingerprint`]). Only ordered collections in simulation state (`Vec`, and
//!   [`kernel::collections::VecMap`]/`VecSet` rather than `BTreeMap`/`BTreeSet`, whose code
//!   every distinct type would add to the browser bundles anew); no floating point in any
//!   decision.
//! - Participants are pure state machines ([`kernel::participant::Participant`]); they emit
//!   effects, the kernel applies them. Persisted state is separate from volatile state.
//! - Faults are data ([`kernel::faults::Fault`]): scripted and injected faults take one path.
//! - User input (parameters, action scripts, trace files read by [`trace_file::parse`]) is
//!   validated with an error naming the valid choices or the bad line and field; it never
//!   panics. `assert!` guards only internal invariants.
//! - Every run is bounded ([`kernel::engine::Limits`]).

pub mod bundles;
pub mod choosing;
pub mod experiments;
pub mod glossary;
pub mod json;
pub mod kernel;
pub mod presentation;
pub mod properties;
pub mod protocols;
pub mod scenarios;
pub mod search;
pub mod sweep;
pub mod trace;
pub mod trace_file;

pub use kernel::engine::{Limits, Recording};
pub use kernel::faults::{Action, Fault};
pub use kernel::ids::{MsgId, NodeId};
pub use scenarios::{catalog, run, RunRequest, SimError};
pub use trace::Trace;
