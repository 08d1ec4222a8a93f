//! The diagram's colours: the Okabe–Ito palette, which stays distinct under the common kinds
//! of colour blindness, with darker shades for text so it keeps 4.5:1 on white. No meaning
//! rests on colour alone: every kind of mark has its own shape, and spans carry labels.

pub const FONTS: &str =
    "system-ui, -apple-system, &#39;Segoe UI&#39;, Roboto, &#39;Helvetica Neue&#39;, Arial, sans-serif";
pub const PAPER: &str = "#ffffff";
pub const INK: &str = "#14213d";
pub const MUTED: &str = "#4a5670";
pub const LANE: &str = "#8a97b3";
pub const LANE_SHADE: &str = "#f3f5f9";
/// Okabe–Ito blue.
pub const MESSAGE: &str = "#0072b2";
pub const MESSAGE_TEXT: &str = "#005a8c";
/// Okabe–Ito vermillion: loss, violations, the unsafe window.
pub const UNSAFE: &str = "#d55e00";
pub const UNSAFE_TEXT: &str = "#a23f00";
/// Okabe–Ito orange, light, for a pause.
pub const PAUSE: &str = "#f6d38a";
pub const PAUSE_EDGE: &str = "#e69f00";
pub const CRASH: &str = "#4a4a4a";
/// Okabe–Ito reddish purple, light, for a partition.
pub const CUT: &str = "#efcfe0";
pub const CUT_EDGE: &str = "#cc79a7";
/// Okabe–Ito yellow for a slowed node or a drifting clock.
pub const SLOW: &str = "#f8f2a6";
pub const SLOW_EDGE: &str = "#9c8f00";
/// Okabe–Ito bluish green for holding the lock.
pub const HOLD: &str = "#009e73";
/// The beat being told: the app's accent, as on the story's current beat (its marker is also
/// ringed and numbered as the title above the lanes, so colour is not its only sign).
pub const NOW: &str = "#1d4ed8";
