//! The narration: for each participant kind, the typed observations its handlers emit and
//! the sentences they read as.

pub mod database;
pub mod lease;
pub mod services;
