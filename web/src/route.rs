//! The URL is the permalink: `#/play/<scenario>?<param>=<value>&seed=N&actions=SCRIPT&step=K`,
//! or for two runs side by side
//! `#/compare/<left>/<right>?seed=N&left=SCRIPT&right=SCRIPT&step=K&present=1`.
//! Parsing is total: anything malformed or outdated yields defaults plus a notice explaining
//! what was ignored, never an error page.

pub use crate::embed_route::EmbedRoute;
use coordlab_sim::kernel::faults::{script_code, Action};
use coordlab_sim::scenarios::{self, Params};

pub const DEFAULT_SEED: u64 = 1;

/// The pair the library offers side by side.
pub use coordlab_sim::scenarios::COMPARE_PAIR as DEFAULT_PAIR;

/// Two runs side by side:
/// `#/compare/<left>/<right>?seed=N&left=SCRIPT&right=SCRIPT&step=K&present=1`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRoute {
    pub left: String,
    pub right: String,
    pub seed: u64,
    pub left_actions: Vec<Action>,
    pub right_actions: Vec<Action>,
    pub step: Option<u32>,
    /// `present=1`: open in presenter mode, as a player link does.
    pub present: bool,
}

/// A seed typed by hand: a whole number, or the message saying what a seed is.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| {
        if text.trim().is_empty() {
            format!("Type a seed: a whole number from 0 to {}.", u64::MAX)
        } else {
            format!(
                "“{text}” is not a seed: use a whole number from 0 to {}.",
                u64::MAX
            )
        }
    })
}

/// The notice for a setting given without a value (`seed=`, or `seed` alone) where it needs
/// one: the item is quoted whole, since an empty value would be quoted as nothing.
pub(crate) fn no_value(item: &str) -> String {
    format!("“{item}” has no value, so the default is used.")
}

/// The notice for a setting `page` does not have. An item without a name (`=5`) is quoted
/// whole: an empty name would point at nothing.
fn unknown_setting(key: &str, item: &str, page: &str) -> String {
    if key.is_empty() {
        format!("“{item}” names no setting (a link's settings are NAME=VALUE); it was ignored.")
    } else {
        format!("“{key}” is not a setting of {page} (outdated link?); it was ignored.")
    }
}

/// Whether this bundle holds `id`'s simulation (another chapter's bundle may hold it).
#[cfg(any(feature = "player", feature = "embed"))]
pub fn runnable_here(id: &str) -> bool {
    scenarios::find(id).is_ok_and(scenarios::runnable)
}

#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    Library,
    /// `#/glossary`: every term the narration explains.
    Glossary,
    /// `#/trace`: a trace file opened in the browser, shown read-only.
    Trace,
    /// `#/lesson?src=FILE`: a trainer's lesson file, checked and then presented stop by stop.
    Lesson,
    /// `#/choose`: questions that lead to a design, and the rules of thumb.
    Choose,
    /// `#/experiment/consensus-throughput`: the throughput experiment run here, as charts.
    Throughput,
    Play(PlayRoute),
    Compare(CompareRoute),
    /// `#/embed/<scenario>?…`: one run for a documentation page, without the site around it.
    /// Read only by an embed bundle (the player writes embed links through `embed_route`).
    #[cfg_attr(not(feature = "embed"), allow(dead_code))]
    Embed(EmbedRoute),
    /// An embed link whose scenario does not exist: the frame says so (the notices). Only an
    /// embed bundle reads embed links; the others have no use for the variant or its page.
    #[cfg(feature = "embed")]
    BadEmbed,
}

/// The pair the library links to, at the start.
pub fn default_compare_route() -> CompareRoute {
    CompareRoute {
        left: DEFAULT_PAIR.0.to_string(),
        right: DEFAULT_PAIR.1.to_string(),
        seed: DEFAULT_SEED,
        left_actions: Vec::new(),
        right_actions: Vec::new(),
        step: None,
        present: false,
    }
}

/// Parses `<left>/<right>?…` of a compare link. Unknown scenarios fall back to the default
/// pair; bad values to defaults, each with a notice.
#[cfg(feature = "compare")]
fn parse_compare(pair: &str, query: &str, notices: &mut Vec<String>) -> CompareRoute {
    let mut route = default_compare_route();
    let ids: Vec<String> = pair.split('/').map(decode).collect();
    match ids.as_slice() {
        // `#/compare` alone asks for the library's pair: nothing was ignored.
        _ if pair.is_empty() => {}
        [l, r] if scenarios::find(l).is_ok() && scenarios::find(r).is_ok() => {
            route.left = l.clone();
            route.right = r.clone();
        }
        _ => notices.push(format!(
            "“{pair}” does not name two known scenarios; showing {} beside {}.",
            DEFAULT_PAIR.0, DEFAULT_PAIR.1
        )),
    }
    for item in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        let (key, value) = (decode(key), decode(value));
        if value.is_empty() && matches!(key.as_str(), "seed" | "step") {
            notices.push(no_value(item));
            continue;
        }
        let script = |side: &str, notices: &mut Vec<String>| match coordlab_sim::kernel::faults::parse_script(
            &value,
        ) {
            Ok(a) => a,
            Err(e) => {
                notices.push(format!(
                    "The {side} run's fault script could not be read ({e}); it was left out."
                ));
                Vec::new()
            }
        };
        match key.as_str() {
            "seed" => match value.parse::<u64>() {
                Ok(s) => route.seed = s,
                Err(_) => notices.push(format!(
                    "The seed “{value}” is not a whole number; using seed {DEFAULT_SEED}."
                )),
            },
            "step" => match value.parse::<u32>() {
                Ok(s) => route.step = Some(s),
                Err(_) => notices.push(format!(
                    "The step “{value}” is not a whole number; starting at the beginning."
                )),
            },
            "present" => route.present = value != "0",
            "left" => route.left_actions = script("left", notices),
            "right" => route.right_actions = script("right", notices),
            _ => notices.push(unknown_setting(&key, item, "the side-by-side view")),
        }
    }
    route
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlayRoute {
    pub scenario: String,
    pub params: Params,
    pub seed: u64,
    pub actions: Vec<Action>,
    pub step: Option<u32>,
    /// `present=1`: open in presenter mode.
    pub present: bool,
    /// `all=1`: step through every event, heartbeats and acks too.
    pub all_events: bool,
    /// `view=` and `axis=`: the pictures shown.
    pub view: crate::picture::View,
}

/// A parsed URL and what had to be ignored on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub route: Route,
    pub notices: Vec<String>,
}

pub fn decode(s: &str) -> String {
    js_free_percent_decode(&s.replace('+', " "))
}

/// Percent-decoding without a JS call, so it is testable natively.
fn js_free_percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(hi * 16 + lo);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

pub fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' | b'@' | b';' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// How the notice for a link without a scenario id begins.
const NO_SCENARIO: &str = "The link names no scenario";

/// Parses a location hash (with or without the leading `#`).
pub fn parse(hash: &str) -> Parsed {
    let hash = hash.trim_start_matches('#');
    let (path, query) = hash.split_once('?').unwrap_or((hash, ""));
    let path = path.trim_matches('/');
    let mut notices = Vec::new();
    if path.is_empty() || path == "library" {
        return Parsed {
            route: Route::Library,
            notices,
        };
    }
    if path == "glossary" {
        return Parsed {
            route: Route::Glossary,
            notices,
        };
    }
    if path == "trace" || path == "lesson" {
        let route = if path == "trace" {
            Route::Trace
        } else {
            Route::Lesson
        };
        return Parsed { route, notices };
    }
    if path == "choose" || path == "experiment/consensus-throughput" {
        let route = if path == "choose" {
            Route::Choose
        } else {
            Route::Throughput
        };
        return Parsed { route, notices };
    }
    if let Some(pair) = path
        .strip_prefix("compare/")
        .or(if path == "compare" { Some("") } else { None })
    {
        // Only the compare bundle reads a side-by-side link's settings: every other bundle shows
        // "Loading" for it while web/loader.js fetches that bundle, so its own copy of the
        // reading (and the notices it writes) would be code that never shows.
        #[cfg(feature = "compare")]
        let route = parse_compare(pair, query, &mut notices);
        #[cfg(not(feature = "compare"))]
        let route = {
            let _ = (pair, query);
            default_compare_route()
        };
        return Parsed {
            route: Route::Compare(route),
            notices,
        };
    }
    // `#/embed/` names no scenario, but it is an embed link all the same: web/loader.js has
    // already started an embed bundle for it, which has no library to fall back to.
    let embed = path.strip_prefix("embed/").or((path == "embed").then_some(""));
    #[cfg(feature = "embed")]
    if let Some(id) = embed {
        let (route, mut notices) = crate::embed_route::parse(&decode(id), query, notices);
        if id.is_empty() {
            // No id to quote: name the address as it was typed instead.
            let typed = hash.split_once('?').map_or(hash, |(p, _)| p);
            for notice in notices.iter_mut().filter(|n| n.starts_with(NO_SCENARIO)) {
                *notice = notice.replacen(NO_SCENARIO, &format!("The link “#{typed}” names no scenario"), 1);
            }
        }
        return Parsed { route, notices };
    }
    // A bundle without the embed view (the site was built without embed bundles) shows an
    // embed link in the player.
    #[cfg(not(feature = "embed"))]
    let path = match embed {
        Some(id) => {
            notices.push(
                "This build of coordlab has no embed view, so the link opens in the player.".to_string(),
            );
            format!("play/{id}")
        }
        None => path.to_string(),
    };
    let Some(id) = path.strip_prefix("play/") else {
        notices.push(format!(
            "The address “#{hash}” is not a coordlab page, so here is the scenario library."
        ));
        return Parsed {
            route: Route::Library,
            notices,
        };
    };
    match parse_play(&decode(id), query, &mut notices) {
        Some(play) => Parsed {
            route: Route::Play(play),
            notices,
        },
        None => Parsed {
            route: Route::Library,
            notices,
        },
    }
}

/// The settings of one run: `<scenario>?<param>=<value>&seed=N&actions=SCRIPT&step=K`. `None`
/// (with a notice) when no scenario has that id.
pub fn parse_play(id: &str, query: &str, notices: &mut Vec<String>) -> Option<PlayRoute> {
    let Ok(def) = scenarios::find(id) else {
        let known: Vec<&str> = scenarios::catalog().iter().map(|s| s.id).collect();
        notices.push(if id.is_empty() {
            format!("{NO_SCENARIO}. Available: {}.", known.join(", "))
        } else {
            format!(
                "There is no scenario called “{id}” (it may have been renamed). Available: {}.",
                known.join(", ")
            )
        });
        return None;
    };
    let info = def.info();
    let mut params = Params::new();
    let mut seed = DEFAULT_SEED;
    let mut actions = Vec::new();
    let mut step = None;
    let mut present = false;
    let mut all_events = false;
    let mut view = crate::picture::View::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, value) = (decode(key), decode(value));
        let needs_value = matches!(key.as_str(), "seed" | "step" | "view" | "axis")
            || info.params.iter().any(|p| p.key == key);
        if value.is_empty() && needs_value {
            notices.push(no_value(pair));
            continue;
        }
        if view.read(&key, &value, notices) {
            continue;
        }
        match key.as_str() {
            "present" => present = value != "0",
            "all" => all_events = value != "0",
            "seed" => match value.parse::<u64>() {
                Ok(s) => seed = s,
                Err(_) => notices.push(format!(
                    "The seed “{value}” is not a whole number; using seed {DEFAULT_SEED}."
                )),
            },
            "step" => match value.parse::<u32>() {
                Ok(s) => step = Some(s),
                Err(_) => notices.push(format!(
                    "The step “{value}” is not a whole number; starting at the beginning."
                )),
            },
            // The steps of a witness's chain ("Find a failure"), which web/search.js keeps in the
            // link while the run is the witness's and marks in both pictures: not the player's.
            "why" => {}
            "actions" => match coordlab_sim::kernel::faults::parse_script(&value) {
                Ok(a) => actions = a,
                Err(e) => notices.push(format!(
                    "The fault script in the link could not be read ({e}); it was left out."
                )),
            },
            _ => match info.params.iter().find(|p| p.key == key) {
                None => notices.push(unknown_setting(&key, pair, info.title)),
                Some(spec) => {
                    let mut one = Params::new();
                    one.insert(key.clone(), value.clone());
                    match scenarios::resolve_params(&info, &one) {
                        Ok(_) => {
                            params.insert(key, value);
                        }
                        Err(_) => notices.push(format!(
                            "“{value}” is not a valid {}; allowed: {}. Using the default, {}.",
                            spec.label.to_ascii_lowercase(),
                            spec.allowed(),
                            spec.default
                        )),
                    }
                }
            },
        }
    }
    let params = scenarios::resolve_params(&info, &params).unwrap_or_default();
    Some(PlayRoute {
        scenario: id.to_string(),
        params,
        seed,
        actions,
        step,
        present,
        all_events,
        view,
    })
}

/// The hash for a player state. Parameters at their default are left out to keep links short.
#[cfg_attr(
    not(any(
        feature = "library",
        feature = "compare",
        feature = "embed",
        feature = "lesson"
    )),
    allow(dead_code)
)]
pub fn format(route: &Route) -> String {
    match route {
        Route::Library => "#/".to_string(),
        Route::Glossary => "#/glossary".to_string(),
        Route::Trace => "#/trace".to_string(),
        Route::Lesson => "#/lesson".to_string(),
        Route::Choose => "#/choose".to_string(),
        Route::Throughput => "#/experiment/consensus-throughput".to_string(),
        Route::Embed(e) => crate::embed_route::format(e),
        #[cfg(feature = "embed")]
        Route::BadEmbed => "#/".to_string(),
        Route::Play(p) => play_hash(p),
        Route::Compare(c) => {
            let mut parts = vec![format!("seed={}", c.seed)];
            if !c.left_actions.is_empty() {
                parts.push(format!("left={}", encode(&script_code(&c.left_actions))));
            }
            if !c.right_actions.is_empty() {
                parts.push(format!("right={}", encode(&script_code(&c.right_actions))));
            }
            if let Some(step) = c.step {
                parts.push(format!("step={step}"));
            }
            if c.present {
                parts.push("present=1".to_string());
            }
            format!(
                "#/compare/{}/{}?{}",
                encode(&c.left),
                encode(&c.right),
                parts.join("&")
            )
        }
    }
}

/// The address of a run in the player, `#/play/<scenario>?<settings>`. The player and the Embed
/// dialog call this rather than [`format`], whose other routes (the side by side's above all)
/// a player bundle would otherwise carry for nothing.
pub fn play_hash(p: &PlayRoute) -> String {
    format!("#/play/{}", play_link(p))
}

/// `<scenario>?<settings>` of a run, without the `#/play/` in front (an embed link shares it).
/// Parameters at their default are left out to keep links short.
pub fn play_link(p: &PlayRoute) -> String {
    let mut parts = Vec::new();
    if let Ok(def) = scenarios::find(&p.scenario) {
        for spec in def.info().params {
            if let Some(v) = p.params.get(spec.key) {
                if v != spec.default_given(&p.params) {
                    parts.push(format!("{}={}", spec.key, encode(v)));
                }
            }
        }
    }
    parts.push(format!("seed={}", p.seed));
    if !p.actions.is_empty() {
        parts.push(format!("actions={}", encode(&script_code(&p.actions))));
    }
    if let Some(step) = p.step {
        parts.push(format!("step={step}"));
    }
    if p.all_events {
        parts.push("all=1".to_string());
    }
    parts.extend(p.view.link_parts());
    if p.present {
        parts.push("present=1".to_string());
    }
    format!("{}?{}", encode(&p.scenario), parts.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordlab_sim::{Fault, NodeId};

    #[test]
    fn a_play_route_round_trips() {
        let mut params = Params::new();
        params.insert("lock".into(), "row-lock".into());
        let route = Route::Play(PlayRoute {
            scenario: "lost-update".into(),
            params,
            seed: 77,
            actions: vec![Action {
                at_step: 5,
                fault: Fault::Pause {
                    node: NodeId(1),
                    duration_ms: 40,
                },
            }],
            step: Some(9),
            present: true,
            all_events: true,
            view: crate::picture::View {
                picture: crate::picture::Picture::Both,
                axis: crate::picture::Axis::Order,
            },
        });
        let hash = format(&route);
        assert_eq!(
            hash,
            "#/play/lost-update?lock=row-lock&seed=77&actions=5@pause:1:40&step=9&all=1&view=both&axis=order&present=1"
        );
        assert_eq!(
            parse(&hash),
            Parsed {
                route,
                notices: vec![]
            }
        );
    }

    #[test]
    fn links_leave_out_a_variant_s_own_defaults_and_keep_the_user_s_values() {
        let info = scenarios::find("zombie-worker").unwrap().info();
        let mut given = Params::new();
        given.insert("fencing".into(), "first-write-only".into());
        let variant = scenarios::resolve_params(&info, &given).unwrap();
        let route = |params: Params| {
            Route::Play(PlayRoute {
                scenario: "zombie-worker".into(),
                params,
                seed: 1,
                actions: vec![],
                step: None,
                present: false,
                all_events: false,
                view: Default::default(),
            })
        };
        let hash = format(&route(variant.clone()));
        assert_eq!(hash, "#/play/zombie-worker?fencing=first-write-only&seed=1");
        assert_eq!(parse(&hash).route, route(variant));
        // The scenario's plain default differs from the variant's, so it must be written out.
        given.insert("pause_start_ms".into(), "5000".into());
        let mine = scenarios::resolve_params(&info, &given).unwrap();
        let hash = format(&route(mine.clone()));
        assert!(hash.contains("pause_start_ms=5000"), "{hash}");
        assert_eq!(parse(&hash).route, route(mine));
    }

    #[test]
    fn a_witness_s_steps_are_the_script_s_not_the_router_s() {
        let hash = "#/play/zombie-worker?seed=1&actions=6@pause:0:31000&step=51&why=6.15.31.34.51";
        let parsed = parse(hash);
        assert_eq!(parsed.notices, Vec::<String>::new());
        assert_eq!(format(&parsed.route), hash.replace("&why=6.15.31.34.51", ""));
        assert_eq!(
            parse("#/play/zombie-worker?why=6.x").notices,
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_glossary_route_round_trips() {
        assert_eq!(format(&Route::Glossary), "#/glossary");
        for hash in ["#/glossary", "#glossary", "#/glossary/", "/glossary?x=1"] {
            assert_eq!(parse(hash).route, Route::Glossary, "{hash}");
        }
        assert_eq!(parse(&format(&Route::Glossary)).notices, Vec::<String>::new());
    }

    #[test]
    fn the_choosing_and_experiment_routes_round_trip() {
        for route in [Route::Choose, Route::Throughput] {
            let hash = format(&route);
            assert_eq!(parse(&hash).route, route, "{hash}");
            assert_eq!(parse(&format!("{hash}/")).route, route, "{hash}/");
        }
    }

    #[test]
    fn a_compare_route_round_trips() {
        let route = Route::Compare(CompareRoute {
            left: "raft-election".into(),
            right: "raft-partition".into(),
            seed: 4,
            left_actions: vec![Action {
                at_step: 7,
                fault: Fault::Crash { node: NodeId(0) },
            }],
            right_actions: vec![Action {
                at_step: 9,
                fault: Fault::Crash { node: NodeId(0) },
            }],
            step: Some(12),
            present: true,
        });
        let hash = format(&route);
        assert_eq!(
            hash,
            "#/compare/raft-election/raft-partition?seed=4&left=7@crash:0&right=9@crash:0&step=12&present=1"
        );
        assert_eq!(
            parse(&hash),
            Parsed {
                route,
                notices: vec![]
            }
        );
    }

    #[test]
    fn a_bad_compare_link_falls_back_to_the_default_pair_with_notices() {
        let parsed = parse("#/compare/redis-failover/nope?seed=x&left=zzz&colour=1");
        let Route::Compare(c) = parsed.route else {
            panic!("expected the compare view")
        };
        assert_eq!((c.left.as_str(), c.right.as_str()), DEFAULT_PAIR);
        assert_eq!(c.seed, DEFAULT_SEED);
        assert!(c.left_actions.is_empty());
        assert_eq!(parsed.notices.len(), 4, "{:?}", parsed.notices);
        assert!(matches!(parse("#/compare").route, Route::Compare(_)));
    }

    #[test]
    fn empty_and_library_hashes_show_the_library() {
        assert_eq!(parse("").route, Route::Library);
        assert_eq!(parse("#/").route, Route::Library);
        assert!(parse("#/").notices.is_empty());
    }

    #[test]
    fn malformed_values_fall_back_with_a_notice() {
        let parsed = parse("#/play/lost-update?lock=mutex&seed=abc&actions=zzz&step=-1&colour=red");
        let Route::Play(p) = parsed.route else {
            panic!("expected the player")
        };
        assert_eq!(p.params.get("lock").map(String::as_str), Some("none"));
        assert_eq!(p.seed, DEFAULT_SEED);
        assert!(p.actions.is_empty());
        assert_eq!(p.step, None);
        assert_eq!(parsed.notices.len(), 5, "{:?}", parsed.notices);
        assert!(parsed.notices[0].contains("row-lock"));
    }

    #[test]
    fn unknown_scenarios_go_to_the_library_with_a_notice() {
        let parsed = parse("#/play/no-such-thing");
        assert_eq!(parsed.route, Route::Library);
        assert!(parsed.notices[0].contains("lost-update"));
        assert_eq!(parse("#/elsewhere").route, Route::Library);
    }

    /// What fuzzing the router found (route_fuzz.rs): notices that quoted nothing.
    #[test]
    fn a_bare_compare_link_shows_the_library_pair_without_a_notice() {
        let parsed = parse("#/compare");
        assert_eq!(parsed.route, Route::Compare(default_compare_route()));
        assert_eq!(parsed.notices, Vec::<String>::new());
    }

    #[test]
    fn a_setting_without_a_name_or_a_value_is_quoted_whole() {
        let parsed = parse("#/play/lost-update?=5&seed=&lock");
        assert_eq!(parsed.notices.len(), 3, "{:?}", parsed.notices);
        assert!(
            parsed.notices[0].starts_with("“=5” names no setting"),
            "{:?}",
            parsed.notices
        );
        assert!(
            parsed.notices[1].starts_with("“seed=” has no value"),
            "{:?}",
            parsed.notices
        );
        assert!(
            parsed.notices[2].starts_with("“lock” has no value"),
            "{:?}",
            parsed.notices
        );
        let parsed = parse("#/compare/lost-update/redlock?step=&=");
        assert!(
            parsed.notices[0].starts_with("“step=” has no value"),
            "{:?}",
            parsed.notices
        );
        assert!(
            parsed.notices[1].starts_with("“=” names no setting"),
            "{:?}",
            parsed.notices
        );
        let parsed = parse("#/embed/lost-update?theme=");
        assert!(
            parsed.notices[0].starts_with("“theme=” has no value"),
            "{:?}",
            parsed.notices
        );
    }

    #[test]
    fn an_empty_seed_field_asks_for_a_seed() {
        assert_eq!(
            parse_seed(" "),
            Err(format!("Type a seed: a whole number from 0 to {}.", u64::MAX))
        );
        assert!(parse_seed("x1").unwrap_err().starts_with("“x1” is not a seed"));
    }

    #[test]
    fn percent_encoding_is_undone() {
        let parsed = parse("#/play/lost-update?actions=3%40crash%3A2");
        let Route::Play(p) = parsed.route else { panic!() };
        assert_eq!(
            p.actions,
            vec![Action {
                at_step: 3,
                fault: Fault::Crash { node: NodeId(2) }
            }]
        );
        assert_eq!(js_free_percent_decode("%E2%82%B9"), "₹");
        assert_eq!(js_free_percent_decode("100%"), "100%");
    }
}
