//! View components. Each renders part of a snapshot or dispatches player actions.

#[cfg(feature = "compare")]
pub mod compare_view;
#[cfg(feature = "player")]
pub mod controls;
#[cfg(feature = "player")]
pub mod event_log;
#[cfg(feature = "player")]
pub mod fault_button;
#[cfg(feature = "player")]
pub mod fault_panel;
#[cfg(feature = "player")]
pub mod inspector;
#[cfg(feature = "library")]
pub mod library;
pub mod narration;
#[cfg(feature = "player")]
pub mod network_panel;
pub mod notices;
#[cfg(feature = "player")]
pub mod player;
#[cfg(feature = "player")]
pub mod property_panel;
pub mod topology;
