//! The one-line labels of each family's messages and timers, as the picture's arrows and the
//! event log show them.
