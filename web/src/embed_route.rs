//! The embed link: `#/embed/<scenario>?<the run's settings>&from=…&to=…&controls=…&view=…&
//! theme=…&autoplay=1&origin=…`. The run's settings are a player link's (parameters, seed,
//! faults, step); the rest says what the frame shows and who may drive it. Parsing is total,
//! like the rest of the router: a bad value is dropped with a notice the frame shows.

#[cfg(feature = "embed")]
use crate::route::{decode, no_value, parse_play, Route};
use crate::route::{encode, play_link, PlayRoute};
#[cfg(feature = "embed")]
use coordlab_sim::trace::Trace;

/// One end of the range an embed is locked to: a step number or a beat's key
/// (`b-takes-over`), which survives a change of seed or parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    Step(u32),
    Beat(String),
}

/// How many controls the frame shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Controls {
    /// Back, next beat, step, play.
    #[default]
    Min,
    /// Every transport button and the step slider.
    Full,
    /// None: the host page drives the embed (postMessage) or it is a still picture.
    None,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    /// The reader's setting (prefers-color-scheme).
    #[default]
    Auto,
    Light,
    Dark,
}

impl Theme {
    pub fn name(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

impl Controls {
    pub fn name(self) -> &'static str {
        match self {
            Controls::Min => "min",
            Controls::Full => "full",
            Controls::None => "none",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct EmbedRoute {
    pub play: PlayRoute,
    pub from: Option<Bound>,
    pub to: Option<Bound>,
    pub controls: Controls,
    pub theme: Theme,
    /// `autoplay=1`: play once the frame is in view (never without it).
    pub autoplay: bool,
    /// A host page's origin allowed to drive the embed and hear its events, besides the
    /// embed's own origin.
    pub origin: Option<String>,
}

impl EmbedRoute {
    /// An embed of a run with every frame setting at its default.
    pub fn of(play: PlayRoute) -> EmbedRoute {
        EmbedRoute {
            play: PlayRoute {
                present: false,
                ..play
            },
            from: None,
            to: None,
            controls: Controls::default(),
            theme: Theme::default(),
            autoplay: false,
            origin: None,
        }
    }
}

/// Frame sizes the Embed dialog offers: the documented range of a frame in a docs page, from
/// the smallest an embed is designed for (400×300) to 960×540.
pub const SIZES: [(u32, u32); 3] = [(400, 300), (720, 405), (960, 540)];
/// The size the dialog starts with.
pub const DEFAULT_SIZE: (u32, u32) = SIZES[1];

/// The part of the run an embed from the Embed dialog shows, counted from the beat on screen.
/// Written with beat keys (`from=b-takes-over&to=a-write`), which survive a change of seed or
/// parameters where step numbers would not.
/// Only the player's Embed dialog writes one; an embed only keeps it in the shared reducer.
#[cfg_attr(not(feature = "player"), allow(dead_code))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Span {
    /// The beat on screen up to the next beat.
    #[default]
    Beat,
    /// The beat on screen to the end of the run.
    FromBeat,
    /// The whole run, opening at the step on screen.
    Whole,
}

#[cfg_attr(not(feature = "player"), allow(dead_code))]
impl Span {
    pub const ALL: [Span; 3] = [Span::Beat, Span::FromBeat, Span::Whole];

    pub fn label(self) -> &'static str {
        match self {
            Span::Beat => "This beat",
            Span::FromBeat => "This beat to the end",
            Span::Whole => "Whole run",
        }
    }
}

#[cfg(feature = "embed")]
fn bound(value: &str) -> Option<Bound> {
    let value = value.trim();
    if value.is_empty() {
        None
    } else if let Ok(step) = value.parse::<u32>() {
        Some(Bound::Step(step))
    } else {
        Some(Bound::Beat(value.to_ascii_lowercase()))
    }
}

/// `scheme://host[:port]`, the form `MessageEvent.origin` takes; anything else is refused.
#[cfg(feature = "embed")]
pub fn valid_origin(value: &str) -> Option<String> {
    let value = value.trim().trim_end_matches('/');
    let rest = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"))?;
    let ok = !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'));
    ok.then(|| value.to_ascii_lowercase())
}

/// Parses `<scenario>` and the query of an embed link.
#[cfg(feature = "embed")]
pub fn parse(id: &str, query: &str, mut notices: Vec<String>) -> (Route, Vec<String>) {
    let mut run = Vec::new();
    let mut route = EmbedRoute::of(PlayRoute {
        scenario: String::new(),
        params: Default::default(),
        seed: crate::route::DEFAULT_SEED,
        actions: Vec::new(),
        step: None,
        present: false,
        all_events: false,
        view: Default::default(),
    });
    for item in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        let (key, value) = (decode(key), decode(value));
        if value.is_empty() && matches!(key.as_str(), "controls" | "theme" | "origin") {
            notices.push(no_value(item));
            continue;
        }
        match key.as_str() {
            "from" => route.from = bound(&value),
            "to" => route.to = bound(&value),
            "controls" => match value.as_str() {
                "min" => route.controls = Controls::Min,
                "full" => route.controls = Controls::Full,
                "none" => route.controls = Controls::None,
                _ => notices.push(format!(
                    "“{value}” is not a choice of controls (min, full or none); showing the minimal bar."
                )),
            },
            "theme" => match value.as_str() {
                "auto" => route.theme = Theme::Auto,
                "light" => route.theme = Theme::Light,
                "dark" => route.theme = Theme::Dark,
                _ => notices.push(format!(
                    "“{value}” is not a theme (light, dark or auto); following the reader's setting."
                )),
            },
            "autoplay" => route.autoplay = value != "0",
            "origin" => match valid_origin(&value) {
                Some(o) => route.origin = Some(o),
                None => notices.push(format!(
                    "“{value}” is not an origin (like https://docs.example.com); only this site's own pages can drive the embed."
                )),
            },
            // Presenter mode is the full player's; an embed is already only the picture.
            "present" => {}
            _ => run.push(item),
        }
    }
    match parse_play(id, &run.join("&"), &mut notices) {
        Some(play) => {
            route.play = PlayRoute {
                present: false,
                ..play
            };
            (Route::Embed(route), notices)
        }
        None => (Route::BadEmbed, notices),
    }
}

fn format_bound(b: &Bound) -> String {
    match b {
        Bound::Step(s) => s.to_string(),
        Bound::Beat(key) => encode(key),
    }
}

/// The hash of an embed; frame settings at their default are left out.
pub fn format(e: &EmbedRoute) -> String {
    let play = PlayRoute {
        present: false,
        ..e.play.clone()
    };
    let mut out = format!("#/embed/{}", play_link(&play));
    if let Some(b) = &e.from {
        out.push_str(&format!("&from={}", format_bound(b)));
    }
    if let Some(b) = &e.to {
        out.push_str(&format!("&to={}", format_bound(b)));
    }
    if e.controls != Controls::default() {
        out.push_str(&format!("&controls={}", e.controls.name()));
    }
    if e.theme != Theme::default() {
        out.push_str(&format!("&theme={}", e.theme.name()));
    }
    if e.autoplay {
        out.push_str("&autoplay=1");
    }
    if let Some(o) = &e.origin {
        out.push_str(&format!("&origin={}", encode(o)));
    }
    out
}

/// The step a bound stands for in this run, or `None` with a notice saying why it was dropped.
#[cfg(feature = "embed")]
pub fn step_of(b: &Bound, trace: &Trace, which: &str, notices: &mut Vec<String>) -> Option<usize> {
    let last = trace.entries.len().saturating_sub(1);
    match b {
        Bound::Step(s) if *s as usize > last => {
            notices.push(format!(
                "“{which}={s}” is past the end of this run ({} steps); using the last step.",
                last + 1
            ));
            Some(last)
        }
        Bound::Step(s) => Some(*s as usize),
        Bound::Beat(key) => match trace.beats.iter().find(|beat| beat.key == *key) {
            Some(beat) => match beat.seq {
                Some(seq) => Some(seq as usize),
                None => {
                    notices.push(format!(
                        "The beat “{key}” does not happen in this run, so “{which}” was ignored."
                    ));
                    None
                }
            },
            None => {
                let keys: Vec<&str> = trace.beats.iter().map(|b| b.key.as_str()).collect();
                notices.push(format!(
                    "“{which}={key}”: this scenario has no such beat, so it was ignored. Its beats: {}.",
                    if keys.is_empty() {
                        "none".to_string()
                    } else {
                        keys.join(", ")
                    }
                ));
                None
            }
        },
    }
}

/// The steps an embed may show, `(first, last)`, from its bounds.
#[cfg(feature = "embed")]
pub fn range_of(e: &EmbedRoute, trace: &Trace, notices: &mut Vec<String>) -> (usize, usize) {
    let last = trace.entries.len().saturating_sub(1);
    let lo = e
        .from
        .as_ref()
        .and_then(|b| step_of(b, trace, "from", notices))
        .unwrap_or(0);
    let hi =
        e.to.as_ref()
            .and_then(|b| step_of(b, trace, "to", notices))
            .unwrap_or(last);
    if lo > hi {
        notices.push(format!(
            "The range starts (step {lo}) after it ends (step {hi}); showing the whole run."
        ));
        return (0, last);
    }
    (lo, hi)
}

#[cfg(all(test, feature = "embed"))]
mod tests {
    use super::*;
    use crate::route::{format as format_route, parse as parse_route};

    fn embed(hash: &str) -> (EmbedRoute, Vec<String>) {
        let parsed = parse_route(hash);
        match parsed.route {
            Route::Embed(e) => (e, parsed.notices),
            other => panic!("{hash} parsed as {other:?}"),
        }
    }

    #[test]
    fn an_embed_route_round_trips_with_every_setting() {
        let hash = "#/embed/zombie-worker?fencing=write-predicate&seed=3&step=7&from=b-takes-over&to=60&controls=full&theme=dark&autoplay=1&origin=https:%2F%2Fdocs.example.com";
        let (e, notices) = embed(hash);
        assert_eq!(notices, Vec::<String>::new());
        assert_eq!(e.play.scenario, "zombie-worker");
        assert_eq!(
            e.play.params.get("fencing").map(String::as_str),
            Some("write-predicate")
        );
        assert_eq!((e.play.seed, e.play.step), (3, Some(7)));
        assert_eq!(e.from, Some(Bound::Beat("b-takes-over".into())));
        assert_eq!(e.to, Some(Bound::Step(60)));
        assert_eq!(
            (e.controls, e.theme, e.autoplay),
            (Controls::Full, Theme::Dark, true)
        );
        assert_eq!(e.origin.as_deref(), Some("https://docs.example.com"));
        assert_eq!(format_route(&Route::Embed(e.clone())), hash);
        assert_eq!(embed(&format_route(&Route::Embed(e.clone()))).0, e);
    }

    #[test]
    fn defaults_are_left_out_of_an_embed_link() {
        let (e, _) = embed("#/embed/lost-update");
        assert_eq!(format_route(&Route::Embed(e)), "#/embed/lost-update?seed=1");
    }

    #[test]
    fn bad_frame_settings_fall_back_with_a_notice_each() {
        let (e, notices) =
            embed("#/embed/lost-update?controls=big&theme=pink&view=3d&origin=docs.example.com&present=1");
        assert_eq!(
            (e.controls, e.theme, e.origin),
            (Controls::Min, Theme::Auto, None)
        );
        assert!(!e.play.present, "an embed is never in presenter mode");
        assert_eq!(notices.len(), 4, "{notices:?}");
        assert!(notices[0].contains("min, full or none"));
        assert!(notices[2].contains("not an origin"));
        assert!(notices[3].contains("topology, spacetime or both"));
    }

    #[test]
    fn an_embed_keeps_its_picture_and_axis() {
        let hash = "#/embed/zombie-worker?seed=1&view=spacetime&axis=order&controls=full";
        let (e, notices) = embed(hash);
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(e.play.view.picture, crate::picture::Picture::SpaceTime);
        assert_eq!(e.play.view.axis, crate::picture::Axis::Order);
        assert_eq!(format_route(&Route::Embed(e)), hash);
    }

    #[test]
    fn an_embed_of_an_unknown_scenario_says_so() {
        let parsed = parse_route("#/embed/no-such-thing?seed=1");
        assert_eq!(parsed.route, Route::BadEmbed);
        assert!(parsed.notices[0].contains("no scenario called “no-such-thing”"));
    }

    #[test]
    fn an_embed_link_without_a_scenario_says_so() {
        // Found by the monkey (tests/monkey.test.mjs): `#/embed/` fell through to the library,
        // which an embed bundle does not have, and the frame said "Loading…" for ever.
        for hash in ["#/embed/", "#/embed", "#//embed//?seed=2"] {
            let parsed = parse_route(hash);
            assert_eq!(parsed.route, Route::BadEmbed, "{hash}");
            assert!(
                parsed.notices[0].contains("names no scenario"),
                "{hash}: {:?}",
                parsed.notices
            );
        }
    }

    #[test]
    fn origins_must_be_scheme_and_host_only() {
        assert_eq!(
            valid_origin("https://Docs.Example.com/"),
            Some("https://docs.example.com".into())
        );
        assert_eq!(
            valid_origin("http://localhost:8080"),
            Some("http://localhost:8080".into())
        );
        for bad in [
            "",
            "*",
            "docs.example.com",
            "https://",
            "https://a.com/path",
            "javascript:alert(1)",
        ] {
            assert_eq!(valid_origin(bad), None, "{bad}");
        }
    }

    fn zombie_trace() -> Trace {
        let mut params = coordlab_sim::scenarios::Params::new();
        params.insert("fencing".into(), "write-predicate".into());
        coordlab_sim::scenarios::run(
            &coordlab_sim::RunRequest {
                scenario: "zombie-worker".into(),
                params,
                seed: 1,
                actions: vec![],
            },
            coordlab_sim::Limits::default(),
            coordlab_sim::Recording::Lines,
        )
        .unwrap()
    }

    #[test]
    fn beat_bounds_lock_the_range_to_the_steps_those_beats_happen_at() {
        let trace = zombie_trace();
        let (e, _) = embed("#/embed/zombie-worker?fencing=write-predicate&from=b-takes-over&to=a-write");
        let mut notices = Vec::new();
        let (lo, hi) = range_of(&e, &trace, &mut notices);
        let at = |key: &str| trace.beats.iter().find(|b| b.key == key).unwrap().seq.unwrap() as usize;
        assert_eq!((lo, hi), (at("b-takes-over"), at("a-write")));
        assert!(lo < hi);
        assert_eq!(notices, Vec::<String>::new());
    }

    #[test]
    fn bounds_that_do_not_fit_the_run_are_dropped_with_notices() {
        let trace = zombie_trace();
        let last = trace.entries.len() - 1;
        let mut notices = Vec::new();
        let (e, _) = embed("#/embed/zombie-worker?from=no-such-beat&to=99999");
        assert_eq!(range_of(&e, &trace, &mut notices), (0, last));
        assert!(
            notices[0].contains("no such beat") && notices[0].contains("b-takes-over"),
            "{notices:?}"
        );
        assert!(notices[1].contains("past the end"), "{notices:?}");
        let mut notices = Vec::new();
        let (e, _) = embed("#/embed/zombie-worker?from=a-write&to=a-acquires");
        assert_eq!(range_of(&e, &trace, &mut notices), (0, last));
        assert!(notices[0].contains("after it ends"), "{notices:?}");
    }
}
