//! Fuzzing the router: `route::parse` reads whatever is in the address bar, so it must never
//! panic; every notice must quote the part of the link it ignored; and a parsed route must be
//! its own permalink (`format` then `parse` gives the same route, without notices). The seed
//! field's parser (`parse_seed`) and the lesson file reader (`lesson::parse`) are fuzzed beside it.
//!
//! Natively, in the web crate's unit tests (it is a binary crate, so the harness lives in it
//! rather than in `tests/`): `cargo test` runs 20,000 inputs per parser, `scripts/fuzz.sh` a
//! million (`COORDLAB_FUZZ_INPUTS`).

use crate::route::{decode, encode, format, parse, parse_seed, Route};
use coordlab_fuzz::{grammar, messages, mutate, Campaign, Choices, Verdict};
use coordlab_sim::scenarios::{self, ParamKind, ParamSpec};

/// Links the app writes or documents: the mutation corpus.
const CORPUS: &[&str] = &[
    "#/",
    "#/glossary",
    "#/trace",
    "#/play/lost-update?lock=row-lock&seed=77&actions=5@pause:1:40&step=9&all=1&view=both&axis=order&present=1",
    "#/play/zombie-worker?fencing=first-write-only&seed=1",
    "#/play/zombie-worker?fencing=none&pause_ms=0&seed=1&actions=6@pause:0:31000&step=51&why=6.15.31.34.51",
    "#/play/lost-update?actions=3%40crash%3A2",
    "#/compare/raft-election/raft-partition?seed=4&left=7@crash:0&right=9@crash:0&step=12",
    "#/compare/redis-failover/consensus-lock?seed=1",
    "#/embed/zombie-worker?fencing=write-predicate&seed=3&step=7&from=b-takes-over&to=60&controls=full&theme=dark&autoplay=1&origin=https:%2F%2Fdocs.example.com",
    "#/embed/zombie-worker?seed=1&view=spacetime&axis=order&controls=full",
];

/// Pieces a mutation may insert.
const TOKENS: &[&str] = &[
    "&",
    "=",
    "?",
    "#",
    "/",
    "%",
    "%25",
    "%3D",
    "%26",
    "%2B",
    "+",
    "seed=",
    "step=",
    "actions=",
    "why=",
    "left=",
    "from=",
    "origin=",
    "play/",
    "embed/",
    "compare/",
    "lost-update",
    "zombie-worker",
    "@",
    ":",
    ";",
];

/// The settings every run link may carry, besides its scenario's parameters.
const SETTINGS: &[&str] = &[
    "seed", "step", "actions", "present", "all", "view", "axis", "left", "right", "from", "to", "controls",
    "theme", "autoplay", "origin", "why",
];

fn scenario_id(c: &mut Choices) -> String {
    let ids: Vec<&str> = scenarios::registry().iter().map(|d| d.id).collect();
    let id = *c.pick(&ids);
    match c.below(12) {
        0 => grammar::noise(c),
        1 => id.to_ascii_uppercase(),
        2 => grammar::percent_encode_all(id),
        _ => id.to_string(),
    }
}

fn param_value(c: &mut Choices, spec: &ParamSpec) -> String {
    match &spec.kind {
        _ if c.chance(1, 8) => grammar::number(c),
        ParamKind::Choice { options } if !c.chance(1, 8) => c.pick(options).value.to_string(),
        ParamKind::Choice { .. } => grammar::noise(c),
        ParamKind::Int { min, max, .. } => match c.below(3) {
            0 => grammar::near(c, i128::from(*min)),
            1 => grammar::near(c, i128::from(*max)),
            _ => (min + i64::from(c.below(1000)) % (max - min + 1)).to_string(),
        },
    }
}

fn setting_value(c: &mut Choices, key: &str) -> String {
    let pick = |c: &mut Choices, values: &[&str]| c.pick(values).to_string();
    match key {
        "seed" | "step" => grammar::number(c),
        "actions" | "left" | "right" => grammar::script(c),
        "present" | "all" | "autoplay" => pick(c, &["1", "0", "", "yes"]),
        "view" => pick(c, &["topology", "spacetime", "both", "3d", ""]),
        "axis" => pick(c, &["time", "order", "log", ""]),
        "controls" => pick(c, &["min", "full", "none", "big", ""]),
        "theme" => pick(c, &["auto", "light", "dark", "pink", ""]),
        "from" | "to" if c.chance(1, 2) => grammar::number(c),
        "from" | "to" => pick(c, &["b-takes-over", "A-Write", " a ", "", "99", "a&b", "é"]),
        "why" => pick(c, &["6.15.31", "6", "", ".", "6..x.", "-1.4", "99999999999.2"]),
        "origin" => pick(
            c,
            &[
                "https://docs.example.com",
                "http://localhost:8080",
                "HTTPS://X.COM/",
                "https://",
                "javascript:alert(1)",
                "https://a.com/path",
            ],
        ),
        _ => grammar::noise(c),
    }
}

/// A link in the router's grammar: a page, a scenario or two, and settings that mostly make
/// sense, sometimes encoded oddly.
fn link(c: &mut Choices) -> String {
    let id = scenario_id(c);
    let path = match c.below(10) {
        0 => String::new(),
        1 => c
            .pick(&["library", "glossary", "trace", "compare", "play", "embed"])
            .to_string(),
        2 | 3 => format!("compare/{}/{}", scenario_id(c), scenario_id(c)),
        4..=6 => format!("play/{id}"),
        _ => format!("embed/{id}"),
    };
    let params = scenarios::find(&id).map(|d| d.info().params).unwrap_or_default();
    let mut items = Vec::new();
    for _ in 0..c.below(7) {
        let (key, value) = match c.below(10) {
            0..=3 if !params.is_empty() => {
                let spec = c.pick(&params);
                (spec.key.to_string(), param_value(c, spec))
            }
            0..=7 => {
                let key = *c.pick(SETTINGS);
                (key.to_string(), setting_value(c, key))
            }
            _ => (grammar::noise(c), grammar::noise(c)),
        };
        items.push(match c.below(10) {
            0 => key,
            1 => format!(
                "{}={}",
                grammar::percent_encode_all(&key),
                grammar::percent_encode_all(&value)
            ),
            2 => format!("{key}={value}"),
            _ => format!("{}={}", encode(&key), encode(&value)),
        });
    }
    let prefix = *c.pick(&["#/", "#/", "#/", "#", "", "/", "#//"]);
    let slash = if c.chance(1, 10) { "/" } else { "" };
    if items.is_empty() && c.chance(1, 2) {
        format!("{prefix}{path}{slash}")
    } else {
        format!("{prefix}{path}{slash}?{}", items.join("&"))
    }
}

fn make(c: &mut Choices) -> String {
    match c.below(10) {
        0..=5 => link(c),
        6..=8 => {
            let base = if c.chance(1, 2) {
                c.pick(CORPUS).to_string()
            } else {
                link(c)
            };
            let other = *c.pick(CORPUS);
            mutate(c, &base, other, TOKENS)
        }
        _ => grammar::noise(c),
    }
}

/// What a notice may quote: the link as typed or decoded (a decoded key or value is a piece
/// of the decoded link).
fn pieces(hash: &str) -> [String; 3] {
    // The address bar's hash always starts with `#`, and a notice quotes it so.
    let with_mark = format!("#{}", hash.trim_start_matches('#'));
    [hash.to_string(), decode(hash), with_mark]
}

fn check(hash: &str) -> Verdict {
    let parsed = parse(hash);
    let pieces = pieces(hash);
    let typed: Vec<&str> = pieces.iter().map(String::as_str).collect();
    // Each distinct notice once: a long link repeats the same mistake thousands of times.
    let distinct: std::collections::BTreeSet<&String> = parsed.notices.iter().collect();
    for notice in distinct {
        if let Err(what) = messages::check_names_input(notice, &typed) {
            return Verdict::Broken(what);
        }
    }
    if let Route::Play(p) | Route::Embed(crate::route::EmbedRoute { play: p, .. }) = &parsed.route {
        let info = scenarios::find(&p.scenario)
            .expect("a play route names a scenario")
            .info();
        if scenarios::resolve_params(&info, &p.params).as_ref() != Ok(&p.params) {
            return Verdict::Broken(format!(
                "the run's parameters {:?} are not valid and complete",
                p.params
            ));
        }
    }
    // A link to a missing embed shows its notices; it has no link of its own to round-trip.
    if parsed.route != Route::BadEmbed {
        let link = format(&parsed.route);
        let again = parse(&link);
        if again.route != parsed.route || !again.notices.is_empty() {
            return Verdict::Broken(format!(
                "its permalink {link:?} reads back as {:?} with notices {:?}, not {:?}",
                again.route, again.notices, parsed.route
            ));
        }
    }
    if parsed.notices.is_empty() {
        Verdict::Accepted
    } else {
        Verdict::Rejected
    }
}

#[test]
fn route() {
    Campaign::from_env(
        "route",
        20_000,
        "cargo test -p coordlab-web --bin coordlab-web route_fuzz::route",
    )
    .run(make, check)
    .assert_clean();
}

fn check_seed(text: &str) -> Verdict {
    match parse_seed(text) {
        Ok(seed) if parse_seed(&seed.to_string()) == Ok(seed) => Verdict::Accepted,
        Ok(seed) => Verdict::Broken(format!("{seed} does not read back as itself")),
        Err(message) => match messages::check_names_input(&message, &[text]) {
            Ok(()) => Verdict::Rejected,
            Err(what) => Verdict::Broken(what),
        },
    }
}

#[test]
fn seed_field() {
    Campaign::from_env(
        "seed-field",
        20_000,
        "cargo test -p coordlab-web --bin coordlab-web route_fuzz::seed_field",
    )
    .run(
        |c| match c.below(3) {
            0 => grammar::noise(c),
            _ => grammar::number(c),
        },
        check_seed,
    )
    .assert_clean();
}

/// Lesson files (web/src/lesson.rs): the shipped example and a small one, mutated.
const LESSONS: &[&str] = &[
    include_str!("../../lessons/locks-101.json"),
    r#"{"coordlab_lesson":1,"title":"t","stops":[{"scenario":"zombie-worker","params":{"fencing":"first-write-only"},"seed":2,"faults":"3@crash:1","steps":[1,9],"question":{"prompt":"p","answers":["a","b"],"correct":0}}]}"#,
];

const LESSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "0",
    "-1",
    "1e3",
    "null",
    "true",
    "\"steps\"",
    "\"beats\"",
    "[3, 1]",
    "\"seed\"",
    "\"faults\"",
    "\"params\"",
    "\"question\"",
    "\"correct\"",
    "\"lost-update\"",
    "\\u0000",
    "é",
];

fn check_lesson(text: &str) -> Verdict {
    match crate::lesson::parse(text) {
        Ok(lesson) => {
            for stop in &lesson.stops {
                let again = parse(&stop.hash());
                match again.route {
                    Route::Play(p) if p.scenario == stop.scenario && again.notices.is_empty() => {}
                    other => {
                        return Verdict::Broken(format!(
                            "stop {:?} links to {:?} with notices {:?}",
                            stop.hash(),
                            other,
                            again.notices
                        ))
                    }
                }
            }
            Verdict::Accepted
        }
        Err(problems) if problems.is_empty() => Verdict::Broken("rejected without a message".into()),
        Err(problems) => match problems
            .iter()
            .find(|p| !(p.contains('“') || p.contains("JSON") || p.contains("bytes")))
        {
            Some(vague) => Verdict::Broken(format!("{vague:?} names no field")),
            None => Verdict::Rejected,
        },
    }
}

#[test]
fn lesson_file() {
    Campaign::from_env(
        "lesson-file",
        20_000,
        "cargo test -p coordlab-web --bin coordlab-web route_fuzz::lesson_file",
    )
    .run(
        |c| {
            let base = *c.pick(LESSONS);
            let other = *c.pick(LESSONS);
            match c.below(8) {
                0 => grammar::noise(c),
                1 => base.to_string(),
                _ => mutate(c, base, other, LESSON_TOKENS),
            }
        },
        check_lesson,
    )
    .assert_clean();
}
