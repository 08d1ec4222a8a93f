//! Lesson files: a trainer's path through several scenarios, each stop a view (scenario,
//! parameters, seed, fault script, a range of steps or beats) with the trainer's caption and
//! question. The format is documented in docs/trainer.md ("Lessons"); this is its reader.
//!
//! The reader walks `serde_json::Value`s by hand rather than deriving, so that every problem
//! gets a message naming the stop (counted from 1, as the trainer counts them) and the field,
//! and it never panics on any input (it is fuzzed beside the router, web/src/route_fuzz.rs).
//! It runs in the `trace` bundle only (the `lesson` feature): that bundle already parses JSON,
//! so the player bundles carry none of it.

use crate::route::{self, PlayRoute};
use coordlab_sim::kernel::faults::{parse_script, script_code};
use coordlab_sim::scenarios::{self, Params};
use serde_json::{json, Map, Value};

/// The version of the format this reader understands (`"coordlab_lesson": 1`).
pub const VERSION: u64 = 1;

/// The longest lesson file read (a lesson is a few dozen stops, not megabytes).
pub const MAX_BYTES: usize = 256 * 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Range {
    /// Steps of the run, `to` `None` for the end of the run.
    Steps { from: u32, to: Option<u32> },
    /// Beats in story order, counted from 1.
    Beats { from: u32, to: Option<u32> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    pub prompt: String,
    pub answers: Vec<String>,
    /// Indices into `answers` (at least one).
    pub correct: Vec<usize>,
    pub explanation: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stop {
    pub scenario: String,
    pub params: Params,
    pub seed: u64,
    pub faults: String,
    pub range: Range,
    pub caption: Option<String>,
    pub question: Option<Question>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lesson {
    pub title: String,
    pub stops: Vec<Stop>,
}

const STOP_FIELDS: &[&str] = &[
    "scenario", "params", "seed", "faults", "steps", "beats", "caption", "question",
];

/// Reads a lesson file. Every problem found is listed, each naming where it is.
pub fn parse(text: &str) -> Result<Lesson, Vec<String>> {
    if text.len() > MAX_BYTES {
        return Err(vec![format!(
            "The file is {} bytes; a lesson file may have at most {MAX_BYTES}.",
            text.len()
        )]);
    }
    let root: Value = serde_json::from_str(text).map_err(|e| {
        vec![format!(
            "The file is not JSON (line {}, column {}: {}).",
            e.line(),
            e.column(),
            e.to_string().split(" at line").next().unwrap_or_default()
        )]
    })?;
    let Some(root) = root.as_object() else {
        return Err(vec![
            "A lesson file is a JSON object with “coordlab_lesson”, “title” and “stops”.".into(),
        ]);
    };
    let mut problems = Vec::new();
    match root.get("coordlab_lesson") {
        None => problems.push(format!(
            "“coordlab_lesson” is missing: a lesson file starts with \"coordlab_lesson\": {VERSION}."
        )),
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => problems.push(format!(
            "“coordlab_lesson” is {v}: this coordlab reads lesson files of version {VERSION} only."
        )),
    }
    for key in root.keys() {
        if !matches!(key.as_str(), "coordlab_lesson" | "title" | "stops") {
            problems.push(format!(
                "“{key}” is not a field of a lesson (its fields: coordlab_lesson, title, stops)."
            ));
        }
    }
    let title = text_field(root, "title", "The lesson", &mut problems).unwrap_or_default();
    if root.get("title").is_none() {
        problems.push("The lesson's “title” is missing.".into());
    }
    let mut stops = Vec::new();
    match root.get("stops") {
        None => problems.push("The lesson's “stops” is missing.".into()),
        Some(Value::Array(list)) if list.is_empty() => problems.push("The lesson's “stops” is empty.".into()),
        Some(Value::Array(list)) => {
            for (i, stop) in list.iter().enumerate() {
                if let Some(stop) = read_stop(i + 1, stop, &mut problems) {
                    stops.push(stop);
                }
            }
        }
        Some(_) => problems.push("The lesson's “stops” must be a list (in [ ]).".into()),
    }
    if problems.is_empty() {
        Ok(Lesson { title, stops })
    } else {
        Err(problems)
    }
}

/// An optional text field: `None` when absent, a problem when not a string.
fn text_field(
    obj: &Map<String, Value>,
    key: &str,
    whose: &str,
    problems: &mut Vec<String>,
) -> Option<String> {
    match obj.get(key)? {
        Value::String(s) => Some(s.clone()),
        other => {
            problems.push(format!(
                "{whose}'s “{key}” must be text (in quotes), not {}.",
                kind(other)
            ));
            None
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn read_stop(n: usize, value: &Value, problems: &mut Vec<String>) -> Option<Stop> {
    let whose = format!("Stop {n}");
    let before = problems.len();
    let Some(obj) = value.as_object() else {
        problems.push(format!(
            "{whose} must be an object (in {{ }}), not {}.",
            kind(value)
        ));
        return None;
    };
    for key in obj.keys().filter(|k| !STOP_FIELDS.contains(&k.as_str())) {
        problems.push(format!(
            "{whose}: “{key}” is not a field of a stop (its fields: {}).",
            STOP_FIELDS.join(", ")
        ));
    }
    let scenario = match obj.get("scenario") {
        None => {
            problems.push(format!("{whose}'s “scenario” is missing."));
            None
        }
        Some(Value::String(id)) => match scenarios::find(id) {
            Ok(def) => Some((id.clone(), def.info())),
            Err(_) => {
                problems.push(format!(
                    "{whose}'s “scenario”: there is no scenario called “{id}” (see the library for the ids)."
                ));
                None
            }
        },
        Some(other) => {
            problems.push(format!(
                "{whose}'s “scenario” must be text (a scenario id), not {}.",
                kind(other)
            ));
            None
        }
    };
    let mut params = Params::new();
    match obj.get("params") {
        None => {}
        Some(Value::Object(given)) => {
            for (key, v) in given {
                let value = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(num) => num.to_string(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        problems.push(format!(
                            "{whose}'s “params”: “{key}” must be text or a number, not {}.",
                            kind(other)
                        ));
                        continue;
                    }
                };
                let Some((_, info)) = &scenario else { continue };
                match info.params.iter().find(|p| p.key == key) {
                    None => problems.push(format!(
                        "{whose}'s “params”: {} has no parameter “{key}” (its parameters: {}).",
                        info.id,
                        info.params.iter().map(|p| p.key).collect::<Vec<_>>().join(", ")
                    )),
                    Some(spec) => {
                        let mut one = Params::new();
                        one.insert(key.clone(), value.clone());
                        if scenarios::resolve_params(info, &one).is_err() {
                            problems.push(format!(
                                "{whose}'s “params”: “{value}” is not a valid {key}; allowed: {}.",
                                spec.allowed()
                            ));
                        } else {
                            params.insert(key.clone(), value);
                        }
                    }
                }
            }
        }
        Some(other) => problems.push(format!(
            "{whose}'s “params” must be an object of NAME: VALUE, not {}.",
            kind(other)
        )),
    }
    let seed = match obj.get("seed") {
        None => route::DEFAULT_SEED,
        Some(v) => v.as_u64().unwrap_or_else(|| {
            problems.push(format!(
                "{whose}'s “seed” must be a whole number from 0 up, not {v}."
            ));
            0
        }),
    };
    let mut faults = String::new();
    if let Some(script) = text_field(obj, "faults", &whose, problems) {
        match parse_script(&script) {
            Ok(actions) => faults = script_code(&actions),
            Err(e) => problems.push(format!("{whose}'s “faults” could not be read: {e}.")),
        }
    }
    let range = match (obj.get("steps"), obj.get("beats")) {
        (Some(_), Some(_)) => {
            problems.push(format!("{whose} has both “steps” and “beats”: give one range."));
            None
        }
        (Some(v), None) => {
            read_range(&whose, "steps", v, 0, problems).map(|(from, to)| Range::Steps { from, to })
        }
        (None, Some(v)) => {
            read_range(&whose, "beats", v, 1, problems).map(|(from, to)| Range::Beats { from, to })
        }
        (None, None) => Some(Range::Steps { from: 0, to: None }),
    };
    let caption = text_field(obj, "caption", &whose, problems);
    let question = obj
        .get("question")
        .and_then(|q| read_question(&whose, q, problems));
    let (scenario, range) = (scenario?, range?);
    if problems.len() > before {
        return None;
    }
    Some(Stop {
        scenario: scenario.0,
        params: scenarios::resolve_params(&scenario.1, &params).unwrap_or(params),
        seed,
        faults,
        range,
        caption,
        question,
    })
}

/// `[from]` or `[from, to]`, whole numbers from `least` up, `from` ≤ `to`.
fn read_range(
    whose: &str,
    key: &str,
    v: &Value,
    least: u64,
    problems: &mut Vec<String>,
) -> Option<(u32, Option<u32>)> {
    let bad = |problems: &mut Vec<String>, why: String| {
        problems.push(format!("{whose}'s “{key}” {why}"));
        None
    };
    let Some(list) = v.as_array().filter(|l| (1..=2).contains(&l.len())) else {
        return bad(problems, format!("must be [FROM] or [FROM, TO], not {v}."));
    };
    let mut ends = Vec::new();
    for end in list {
        match end
            .as_u64()
            .filter(|e| *e >= least)
            .and_then(|e| u32::try_from(e).ok())
        {
            Some(e) => ends.push(e),
            None => {
                return bad(
                    problems,
                    format!("holds {end}: use whole numbers from {least} up."),
                )
            }
        }
    }
    match ends[..] {
        [from, to] if to < from => bad(problems, format!("runs backwards ({from} to {to}).")),
        [from, to] => Some((from, Some(to))),
        [from] => Some((from, None)),
        _ => None,
    }
}

fn read_question(whose: &str, v: &Value, problems: &mut Vec<String>) -> Option<Question> {
    let whose = format!("{whose}'s question");
    let Some(q) = v.as_object() else {
        problems.push(format!(
            "{whose} must be an object with “prompt”, “answers” and “correct”."
        ));
        return None;
    };
    for key in q
        .keys()
        .filter(|k| !matches!(k.as_str(), "prompt" | "answers" | "correct" | "explanation"))
    {
        problems.push(format!(
            "{whose}: “{key}” is not a field of a question (prompt, answers, correct, explanation)."
        ));
    }
    let prompt = text_field(q, "prompt", &whose, problems);
    if q.get("prompt").is_none() {
        problems.push(format!("{whose}'s “prompt” is missing."));
    }
    let answers: Option<Vec<String>> = match q.get("answers").and_then(Value::as_array) {
        Some(list) if list.len() >= 2 && list.iter().all(Value::is_string) => Some(
            list.iter()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect(),
        ),
        _ => {
            problems.push(format!(
                "{whose}'s “answers” must be a list of at least two texts."
            ));
            None
        }
    };
    let count = answers.as_ref().map_or(0, Vec::len);
    let correct: Option<Vec<usize>> = match q.get("correct") {
        Some(Value::Array(list)) if !list.is_empty() => list
            .iter()
            .map(|c| c.as_u64().map(|c| c as usize).filter(|c| *c < count.max(1)))
            .collect(),
        Some(Value::Number(c)) => c
            .as_u64()
            .map(|c| c as usize)
            .filter(|c| *c < count.max(1))
            .map(|c| vec![c]),
        _ => None,
    };
    if correct.is_none() {
        problems.push(format!(
            "{whose}'s “correct” must give the right answers' numbers, counted from 0 (below {}).",
            count.max(1)
        ));
    }
    let explanation = text_field(q, "explanation", &whose, problems);
    Some(Question {
        prompt: prompt?,
        answers: answers?,
        correct: correct?,
        explanation,
    })
}

impl Stop {
    /// The player's permalink for this stop, in presenter mode. A beat range opens at the start
    /// and web/lessons.js moves to its first beat (only the player knows where beats fall).
    pub fn hash(&self) -> String {
        let step = match self.range {
            Range::Steps { from, .. } => Some(from),
            Range::Beats { .. } => None,
        };
        route::format(&route::Route::Play(PlayRoute {
            scenario: self.scenario.clone(),
            params: self.params.clone(),
            seed: self.seed,
            actions: parse_script(&self.faults).unwrap_or_default(),
            step,
            present: true,
            all_events: false,
            view: Default::default(),
        }))
    }
}

impl Lesson {
    /// What web/lessons.js walks in the player (kept in sessionStorage): each stop's address,
    /// range and the trainer's words.
    pub fn for_player(&self) -> String {
        let stops: Vec<Value> = self
            .stops
            .iter()
            .map(|s| {
                let (kind, from, to) = match s.range {
                    Range::Steps { from, to } => ("steps", from, to),
                    Range::Beats { from, to } => ("beats", from, to),
                };
                json!({
                    "hash": s.hash(),
                    "scenario": s.scenario,
                    "kind": kind,
                    "from": from,
                    "to": to,
                    "caption": s.caption,
                    "question": s.question.as_ref().map(|q| json!({
                        "prompt": q.prompt,
                        "answers": q.answers,
                        "correct": q.correct,
                        "explanation": q.explanation,
                    })),
                })
            })
            .collect();
        json!({ "title": self.title, "stops": stops }).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
      "coordlab_lesson": 1,
      "title": "Locks 101",
      "stops": [
        { "scenario": "lost-update", "params": { "lock": "row-lock" }, "seed": 3,
          "faults": "5@pause:1:40", "steps": [2, 30], "caption": "Two clients." },
        { "scenario": "raft-election", "beats": [1],
          "question": { "prompt": "Who wins?", "answers": ["a", "b"], "correct": [1], "explanation": "b" } }
      ]
    }"#;

    #[test]
    fn a_good_lesson_reads_and_links_each_stop() {
        let lesson = parse(GOOD).unwrap();
        assert_eq!(lesson.title, "Locks 101");
        assert_eq!(lesson.stops.len(), 2);
        assert_eq!(
            lesson.stops[0].hash(),
            "#/play/lost-update?lock=row-lock&seed=3&actions=5@pause:1:40&step=2&present=1"
        );
        assert_eq!(lesson.stops[1].range, Range::Beats { from: 1, to: None });
        assert_eq!(lesson.stops[1].question.as_ref().unwrap().correct, vec![1]);
        assert_eq!(lesson.stops[1].hash(), "#/play/raft-election?seed=1&present=1");
        assert!(lesson.for_player().contains("\"kind\":\"beats\""));
    }

    #[test]
    fn the_shipped_example_reads() {
        let lesson = parse(include_str!("../../lessons/locks-101.json")).unwrap();
        assert_eq!(lesson.stops.len(), 3);
        let chapters: std::collections::BTreeSet<&str> = lesson
            .stops
            .iter()
            .map(|s| scenarios::find(&s.scenario).unwrap().bundle)
            .collect();
        assert!(chapters.len() >= 2, "{chapters:?}");
    }

    /// The course the library's Start here opens: every scenario once, each with its
    /// question, in the order of the course.
    #[test]
    fn the_shipped_course_reads() {
        let lesson = parse(include_str!("../../lessons/course.json")).unwrap();
        let order: Vec<&str> = scenarios::course().iter().map(|d| d.id).collect();
        let stops: Vec<&str> = lesson.stops.iter().map(|s| s.scenario.as_str()).collect();
        assert_eq!(stops, order);
        assert!(lesson
            .stops
            .iter()
            .all(|s| s.question.is_some() && s.caption.is_some()));
    }

    #[test]
    fn the_documented_example_reads() {
        let doc = include_str!("../../docs/trainer.md");
        let example = doc
            .split("```json\n")
            .find(|block| block.starts_with("{\n  \"coordlab_lesson\""))
            .and_then(|block| block.split("```").next())
            .expect("docs/trainer.md shows a lesson file");
        let lesson = parse(example).unwrap();
        assert_eq!(lesson.stops[1].range, Range::Beats { from: 1, to: Some(2) });
    }

    /// Ten malformed files, each answered with a message naming the stop and field.
    #[test]
    fn malformed_lessons_say_where_and_what() {
        let cases: &[(&str, &[&str])] = &[
            ("not json at all", &["not JSON", "line 1"]),
            (
                r#"{"coordlab_lesson": 2, "title": "x", "stops": [{"scenario": "lost-update"}]}"#,
                &["“coordlab_lesson” is 2", "version 1"],
            ),
            (
                r#"{"coordlab_lesson": 1, "stops": [{"scenario": "lost-update"}]}"#,
                &["“title” is missing"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"scenario": "lost-update"}, {"scenario": "no-such"}]}"#,
                &["Stop 2", "“scenario”", "no-such"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"scenario": "lost-update", "params": {"lock": "padlock"}}]}"#,
                &["Stop 1", "“params”", "padlock", "allowed"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"scenario": "lost-update", "steps": [9, 3]}]}"#,
                &["Stop 1", "“steps”", "backwards"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"scenario": "lost-update", "seed": "one"}]}"#,
                &["Stop 1", "“seed”", "whole number"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"params": {}}]}"#,
                &["Stop 1", "“scenario” is missing"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"scenario": "lost-update", "faults": "5@explode:1"}]}"#,
                &["Stop 1", "“faults”"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"scenario": "lost-update"}, {"scenario": "lost-update", "question": {"prompt": "?", "answers": ["a", "b"], "correct": [5]}}]}"#,
                &["Stop 2", "“correct”"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"scenario": "lost-update", "beats": [0]}]}"#,
                &["Stop 1", "“beats”", "from 1"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": {}}"#,
                &["“stops” must be a list"],
            ),
            (
                r#"{"coordlab_lesson": 1, "title": "x", "stops": [{"scenario": "lost-update", "capton": "typo"}]}"#,
                &["Stop 1", "“capton”"],
            ),
            (r#"[1, 2]"#, &["JSON object"]),
        ];
        for (text, wanted) in cases {
            let problems = parse(text).expect_err(text);
            let all = problems.join("\n");
            for w in *wanted {
                assert!(all.contains(w), "{text}\n gave: {all}\n wanted: {w}");
            }
        }
    }
}
