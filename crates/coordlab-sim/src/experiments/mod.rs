//! Experiments: many runs of one fixed setup, reduced to numbers. A scenario tells a story
//! one seed at a time; an experiment repeats a measurement over many trials and reports the
//! distribution, like the measurements in a paper's evaluation section.
//!
//! Like everything in this crate an experiment is pure: each trial is a function of the
//! experiment's inputs and the trial's index, so a printed table can always be reproduced.

pub mod consensus_throughput;
pub mod election_downtime;
pub mod summary;
pub mod trial_server;
