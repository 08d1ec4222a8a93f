//! View components. Each renders part of a snapshot or dispatches player actions.

#[cfg(feature = "compare")]
pub mod compare_view;
pub mod controls;
pub mod event_log;
pub mod fault_button;
pub mod fault_panel;
pub mod inspector;
pub mod library;
pub mod narration;
pub mod network_panel;
pub mod notices;
pub mod player;
pub mod property_panel;
pub mod topology;
