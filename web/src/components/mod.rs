//! View components. Each renders part of a snapshot or dispatches player actions.

#[cfg(feature = "player")]
pub mod beat_list;
#[cfg(feature = "choosing")]
pub mod choose;
#[cfg(feature = "compare")]
pub mod compare_view;
#[cfg(feature = "player")]
pub mod embed_dialog;
#[cfg(feature = "embed")]
pub mod embed_view;
#[cfg(feature = "player")]
pub mod event_log;
#[cfg(feature = "player")]
pub mod fault_button;
#[cfg(feature = "player")]
pub mod fault_panel;
#[cfg(any(feature = "player", feature = "compare"))]
pub mod help;
#[cfg(feature = "player")]
pub mod inspector;
#[cfg(feature = "lesson")]
pub mod lesson_page;
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
#[cfg(feature = "player")]
pub mod run_settings;
#[cfg(any(feature = "player", feature = "embed", feature = "trace"))]
pub mod spacetime;
#[cfg(feature = "player")]
pub mod story;
#[cfg(feature = "choosing")]
pub mod throughput_chart;
#[cfg(feature = "player")]
pub mod timeline;
pub mod topology;
#[cfg(feature = "trace")]
pub mod trace_viewer;
#[cfg(feature = "player")]
pub mod transport_bar;
#[cfg(any(feature = "player", feature = "compare", feature = "embed", feature = "trace"))]
pub mod transport_buttons;

/// A class attribute: `base`, then each name whose flag is set, in order, space-separated.
/// What `classes!` writes, from one string: the macro pushes each part into the class set
/// (code at every use), which cost the consensus bundle 0.45 KB gzipped.
pub fn class_list(base: &str, extra: &[(&str, bool)]) -> String {
    let mut out = base.to_string();
    for (name, on) in extra {
        if *on {
            out.push(' ');
            out.push_str(name);
        }
    }
    out
}
