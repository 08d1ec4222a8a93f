//! The messages an embed exchanges with the page around it (`window.postMessage`), version 1.
//! Every message is an object with `coordlab: 1` (the version) and a `type`; anything without
//! the `coordlab` field belongs to someone else and is ignored. docs/embedding.md documents
//! them for page authors.
//!
//! Commands (page → embed): `seek` with `step` (a number) or `beat` (a beat's key), `play`,
//! `pause`, `next-beat`, `prev-beat`, `forward`, `back`.
//! Events (embed → page): `ready` once, `step` whenever the step on screen or playback
//! changes, `beat` on reaching a beat, `violation` on reaching a step that breaks a property,
//! and `error` answering a command the embed could not follow.

use crate::state::Player;

pub const VERSION: u64 = 1;

/// A field of a message: as much of JavaScript's values as the messages use. (Not
/// `serde_json`: its number parser and printer would add about 25 KB to every bundle.)
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// A whole number ≥ 0.
    Int(u64),
    Text(String),
    Bool(bool),
    List(Vec<Fields>),
    /// Present, but none of the above (a fraction, a negative number, an object, null).
    Other,
    Missing,
}

/// A message: its fields in order.
pub type Fields = Vec<(&'static str, Val)>;

/// Where a `seek` goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Step(usize),
    Beat(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Seek(Target),
    Play,
    Pause,
    NextBeat,
    PrevBeat,
    Forward,
    Back,
}

/// What a received message asks, given a way to read its fields: `Ok(None)` when it is not a
/// coordlab message at all, `Err(why)` when it is one the embed cannot follow.
pub fn parse_command(field: impl Fn(&str) -> Val) -> Result<Option<Command>, String> {
    match field("coordlab") {
        Val::Missing => return Ok(None),
        Val::Int(VERSION) => {}
        _ => {
            return Err(format!(
                "this embed speaks version {VERSION} of the coordlab messages (coordlab: {VERSION})"
            ))
        }
    }
    let kind = match field("type") {
        Val::Text(t) => t,
        _ => String::new(),
    };
    Ok(Some(match kind.as_str() {
        "seek" => match (field("step"), field("beat")) {
            (Val::Int(s), _) => Command::Seek(Target::Step(usize::try_from(s).unwrap_or(usize::MAX))),
            (Val::Missing, Val::Text(b)) => Command::Seek(Target::Beat(b.to_ascii_lowercase())),
            (Val::Missing, Val::Missing) => return Err("seek needs a “step” or a “beat”".to_string()),
            (Val::Missing, _) => return Err("seek: “beat” must be a beat's key, as text".to_string()),
            _ => return Err("seek: “step” must be a whole number".to_string()),
        },
        "play" => Command::Play,
        "pause" => Command::Pause,
        "next-beat" => Command::NextBeat,
        "prev-beat" => Command::PrevBeat,
        "forward" => Command::Forward,
        "back" => Command::Back,
        // The embed's own events, echoed back by a page: not commands, and no answer either
        // (answering would start a ping-pong).
        "ready" | "step" | "beat" | "violation" | "error" => return Ok(None),
        other => {
            return Err(format!(
                "“{other}” is not a command (seek, play, pause, next-beat, prev-beat, forward, back)"
            ))
        }
    }))
}

/// Whether a message from `origin` may drive the embed: its own origin always may, a host
/// page only when the embed link names it (`origin=`).
pub fn allowed(origin: &str, own: &str, named: Option<&str>) -> bool {
    origin == own || named.is_some_and(|n| n.eq_ignore_ascii_case(origin))
}

fn message(kind: &str, mut fields: Fields) -> Fields {
    fields.insert(0, ("type", Val::Text(kind.to_string())));
    fields.insert(0, ("coordlab", Val::Int(VERSION)));
    fields
}

fn int(n: usize) -> Val {
    Val::Int(n as u64)
}

fn text(s: &str) -> Val {
    Val::Text(s.to_string())
}

/// `ready`: what the page may seek to.
pub fn ready(p: &Player) -> Fields {
    let (lo, hi) = p.bounds();
    let beats = p
        .trace
        .reached_beats()
        .map(|(seq, b)| {
            vec![
                ("key", text(&b.key)),
                ("title", text(&b.title)),
                ("step", int(seq as usize)),
            ]
        })
        .collect();
    message(
        "ready",
        vec![
            ("scenario", text(p.info.id)),
            ("title", text(p.info.title)),
            ("steps", int(p.last() + 1)),
            ("from", int(lo)),
            ("to", int(hi)),
            ("beats", Val::List(beats)),
        ],
    )
}

/// The events for the state on screen; `before` is the step shown before it (the events
/// `beat` and `violation` are sent only on arriving at such a step).
pub fn events(p: &Player, before: Option<usize>) -> Vec<Fields> {
    let entry = &p.trace.entries[p.cursor];
    let mut out = vec![message(
        "step",
        vec![
            ("step", int(p.cursor)),
            ("time_us", Val::Int(entry.time_us)),
            ("playing", Val::Bool(p.playing)),
            ("text", text(&entry.text)),
        ],
    )];
    if before == Some(p.cursor) {
        return out;
    }
    if let Some(i) = p.nav.beats.iter().position(|s| *s == p.cursor) {
        if let Some((seq, b)) = p.trace.reached_beats().nth(i) {
            out.push(message(
                "beat",
                vec![
                    ("index", int(i)),
                    ("key", text(&b.key)),
                    ("title", text(&b.title)),
                    ("step", int(seq as usize)),
                ],
            ));
        }
    }
    for v in &entry.violations {
        out.push(message(
            "violation",
            vec![("property", text(v)), ("step", int(p.cursor))],
        ));
    }
    out
}

/// `error`: a command the embed could not follow, and why.
pub fn error(why: &str) -> Fields {
    message("error", vec![("message", text(why))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::{parse, Route};

    /// A message as a page would send it: `(field, value)` pairs.
    fn cmd(fields: &[(&str, Val)]) -> Result<Option<Command>, String> {
        parse_command(|k| {
            fields
                .iter()
                .find(|(f, _)| *f == k)
                .map_or(Val::Missing, |(_, v)| v.clone())
        })
    }

    /// The value of field `key`.
    fn get<'a>(fields: &'a Fields, key: &str) -> Option<&'a Val> {
        fields.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    fn t(s: &str) -> Val {
        Val::Text(s.into())
    }

    #[test]
    fn commands_are_read_and_foreign_messages_ignored() {
        let v1 = ("coordlab", Val::Int(1));
        assert_eq!(
            cmd(&[v1.clone(), ("type", t("seek")), ("step", Val::Int(12))]),
            Ok(Some(Command::Seek(Target::Step(12))))
        );
        assert_eq!(
            cmd(&[v1.clone(), ("type", t("seek")), ("beat", t("B-Takes-Over"))]),
            Ok(Some(Command::Seek(Target::Beat("b-takes-over".into()))))
        );
        assert_eq!(cmd(&[v1.clone(), ("type", t("play"))]), Ok(Some(Command::Play)));
        assert_eq!(cmd(&[v1.clone(), ("type", t("pause"))]), Ok(Some(Command::Pause)));
        assert_eq!(
            cmd(&[v1.clone(), ("type", t("next-beat"))]),
            Ok(Some(Command::NextBeat))
        );
        assert_eq!(cmd(&[("type", t("play"))]), Ok(None), "not ours");
        assert_eq!(cmd(&[]), Ok(None));
        assert_eq!(
            cmd(&[v1.clone(), ("type", t("step")), ("step", Val::Int(3))]),
            Ok(None),
            "an echoed event"
        );
        assert!(cmd(&[("coordlab", Val::Int(2)), ("type", t("play"))])
            .unwrap_err()
            .contains("version 1"));
        assert!(cmd(&[v1.clone(), ("type", t("seek")), ("step", Val::Other)])
            .unwrap_err()
            .contains("whole number"));
        assert!(cmd(&[v1.clone(), ("type", t("seek")), ("beat", Val::Int(3))])
            .unwrap_err()
            .contains("as text"));
        assert!(cmd(&[v1.clone(), ("type", t("seek"))])
            .unwrap_err()
            .contains("needs"));
        assert!(cmd(&[v1, ("type", t("jump"))])
            .unwrap_err()
            .contains("not a command"));
    }

    #[test]
    fn only_the_own_origin_and_the_named_one_may_drive_the_embed() {
        let own = "https://coordlab.example";
        assert!(allowed(own, own, None));
        assert!(!allowed("https://evil.example", own, None));
        assert!(allowed(
            "https://docs.example.com",
            own,
            Some("https://docs.example.com")
        ));
        assert!(!allowed(
            "https://evil.example",
            own,
            Some("https://docs.example.com")
        ));
        assert!(!allowed("null", own, Some("https://docs.example.com")));
    }

    fn zombie_player() -> Player {
        let Route::Embed(e) =
            parse("#/embed/zombie-worker?fencing=write-predicate&from=b-takes-over&to=a-write").route
        else {
            panic!("not an embed")
        };
        Player::for_embed(&e, vec![]).unwrap()
    }

    #[test]
    fn ready_names_the_range_and_the_beats() {
        let p = zombie_player();
        let r = ready(&p);
        assert_eq!(get(&r, "coordlab"), Some(&Val::Int(1)));
        assert_eq!(get(&r, "type"), Some(&t("ready")));
        assert_eq!(get(&r, "scenario"), Some(&t("zombie-worker")));
        let (lo, hi) = p.bounds();
        assert_eq!(get(&r, "from"), Some(&Val::Int(lo as u64)));
        assert_eq!(get(&r, "to"), Some(&Val::Int(hi as u64)));
        let Some(Val::List(beats)) = get(&r, "beats") else {
            panic!("no beats")
        };
        assert!(beats.iter().any(|b| get(b, "key") == Some(&t("a-write"))));
    }

    #[test]
    fn arriving_at_a_beat_sends_the_step_and_the_beat_once() {
        let p = zombie_player();
        let (lo, _) = p.bounds();
        let first = events(&p, None);
        assert_eq!(get(&first[0], "type"), Some(&t("step")));
        assert_eq!(get(&first[0], "step"), Some(&Val::Int(lo as u64)));
        assert_eq!(get(&first[1], "type"), Some(&t("beat")));
        assert_eq!(get(&first[1], "key"), Some(&t("b-takes-over")));
        assert_eq!(
            events(&p, Some(lo)).len(),
            1,
            "staying on the step repeats only `step`"
        );
    }

    #[test]
    fn arriving_at_a_broken_property_sends_a_violation() {
        let Route::Embed(e) = parse("#/embed/zombie-worker?fencing=none").route else {
            panic!("not an embed")
        };
        let mut p = Player::for_embed(&e, vec![]).unwrap();
        p.cursor = p.nav.violations[0];
        let sent = events(&p, Some(p.cursor - 1));
        let v = sent
            .iter()
            .find(|m| get(m, "type") == Some(&t("violation")))
            .expect("a violation event");
        assert_eq!(get(v, "step"), Some(&Val::Int(p.cursor as u64)));
        assert_eq!(
            get(v, "property"),
            Some(&t(&p.trace.entries[p.cursor].violations[0]))
        );
    }
}
