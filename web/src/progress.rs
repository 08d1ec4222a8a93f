//! The learner's progress through the course — beats seen and questions answered per
//! scenario — kept in the browser's localStorage under one versioned key. Nothing leaves the
//! machine. web/lessons.js writes it as the learner walks the course (the shape the tests
//! write with `Progress::to_json`); the library reads it here. The logic is pure (tested
//! natively); only [`load`] and [`clear`] touch storage, and a storage that refuses (private
//! mode, a full quota) or holds text this version cannot read simply means no progress: the
//! page works either way.

use std::collections::BTreeMap;

/// The storage key; a new layout gets a new key rather than misreading the old one.
pub const KEY: &str = "coordlab.progress.v1";

/// One scenario's progress. Beats are a bit set (beat `i` is bit `i`; a story has far fewer
/// than 64 beats), kept with the story's length so the library, which runs nothing, can say
/// "3 of 5".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScenarioProgress {
    pub beats: u32,
    pub seen: u64,
    pub answered: bool,
}

impl ScenarioProgress {
    pub fn beats_seen(&self) -> u32 {
        self.seen.count_ones()
    }

    pub fn started(&self) -> bool {
        self.seen != 0 || self.answered
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub scenarios: BTreeMap<String, ScenarioProgress>,
}

impl Progress {
    pub fn of(&self, id: &str) -> ScenarioProgress {
        self.scenarios.get(id).copied().unwrap_or_default()
    }

    /// Marks beat `beat` of a story of `beats` seen; true if that changed anything.
    #[cfg(test)]
    pub fn see_beat(&mut self, id: &str, beat: usize, beats: usize) -> bool {
        if beat >= 64 || beat >= beats {
            return false;
        }
        let entry = self.scenarios.entry(id.to_string()).or_default();
        let before = *entry;
        entry.beats = beats.min(64) as u32;
        entry.seen |= 1 << beat;
        *entry != before
    }

    /// Marks the scenario's question answered; true if it was not already.
    #[cfg(test)]
    pub fn answer(&mut self, id: &str) -> bool {
        let entry = self.scenarios.entry(id.to_string()).or_default();
        !std::mem::replace(&mut entry.answered, true)
    }

    /// How many of `ids` are started and how many have their question answered.
    pub fn tally<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> (usize, usize) {
        ids.into_iter().map(|id| self.of(id)).fold((0, 0), |(s, a), p| {
            (s + usize::from(p.started()), a + usize::from(p.answered))
        })
    }

    /// The stored text, as web/lessons.js writes it.
    #[cfg(test)]
    pub fn to_json(&self) -> String {
        let entries: Vec<String> = self
            .scenarios
            .iter()
            .map(|(id, p)| {
                format!(
                    "\"{id}\":{{\"beats\":{},\"seen\":{},\"answered\":{}}}",
                    p.beats, p.seen, p.answered
                )
            })
            .collect();
        format!("{{\"version\":1,\"scenarios\":{{{}}}}}", entries.join(","))
    }

    /// Reads [`Progress::to_json`]'s form; anything else (corrupt, another version, another
    /// shape) reads as no progress.
    pub fn parse(text: &str) -> Progress {
        Self::try_parse(text).unwrap_or_default()
    }

    fn try_parse(text: &str) -> Option<Progress> {
        let mut reader = Reader { rest: text.trim() };
        let top = reader.value()?;
        if !reader.rest.trim().is_empty() {
            return None;
        }
        let Json::Object(top) = top else { return None };
        if top.iter().find(|(k, _)| k == "version")?.1 != Json::Number(1) {
            return None;
        }
        let Json::Object(scenarios) = &top.iter().find(|(k, _)| k == "scenarios")?.1 else {
            return None;
        };
        let mut out = Progress::default();
        for (id, fields) in scenarios {
            let Json::Object(fields) = fields else { return None };
            let mut p = ScenarioProgress::default();
            for (k, v) in fields {
                match (k.as_str(), v) {
                    ("beats", Json::Number(n)) => p.beats = u32::try_from(*n).ok()?,
                    ("seen", Json::Number(n)) => p.seen = *n,
                    ("answered", Json::Bool(b)) => p.answered = *b,
                    _ => return None,
                }
            }
            out.scenarios.insert(id.clone(), p);
        }
        Some(out)
    }
}

/// The few JSON values the progress record uses: objects, non-negative integers, booleans.
#[derive(Debug, PartialEq)]
enum Json {
    Object(Vec<(String, Json)>),
    Number(u64),
    Bool(bool),
}

struct Reader<'a> {
    rest: &'a str,
}

impl Reader<'_> {
    fn eat(&mut self, token: &str) -> bool {
        self.rest = self.rest.trim_start();
        match self.rest.strip_prefix(token) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    fn value(&mut self) -> Option<Json> {
        if self.eat("{") {
            let mut fields = Vec::new();
            if self.eat("}") {
                return Some(Json::Object(fields));
            }
            loop {
                let key = self.string()?;
                if !self.eat(":") {
                    return None;
                }
                fields.push((key, self.value()?));
                if self.eat("}") {
                    return Some(Json::Object(fields));
                }
                if !self.eat(",") {
                    return None;
                }
            }
        }
        if self.eat("true") {
            return Some(Json::Bool(true));
        }
        if self.eat("false") {
            return Some(Json::Bool(false));
        }
        let digits = self.rest.len() - self.rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let number = self.rest[..digits].parse().ok()?;
        self.rest = &self.rest[digits..];
        Some(Json::Number(number))
    }

    /// A key: scenario ids and field names, so no escapes.
    fn string(&mut self) -> Option<String> {
        if !self.eat("\"") {
            return None;
        }
        let end = self.rest.find('"')?;
        let text = &self.rest[..end];
        if text.contains('\\') {
            return None;
        }
        self.rest = &self.rest[end + 1..];
        Some(text.to_string())
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The saved progress, or none if storage is unavailable or holds something unreadable.
pub fn load() -> Progress {
    storage()
        .and_then(|s| s.get_item(KEY).ok()?)
        .map_or_else(Progress::default, |text| Progress::parse(&text))
}

pub fn clear() {
    if let Some(s) = storage() {
        let _ = s.remove_item(KEY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beats_and_answers_round_trip_through_the_stored_text() {
        let mut p = Progress::default();
        assert!(p.see_beat("lost-update", 0, 5));
        assert!(p.see_beat("lost-update", 3, 5));
        assert!(
            !p.see_beat("lost-update", 3, 5),
            "seeing a beat twice changes nothing"
        );
        assert!(p.answer("deadlock"));
        assert!(!p.answer("deadlock"));
        let text = p.to_json();
        assert_eq!(Progress::parse(&text), p);
        assert_eq!(p.of("lost-update").beats_seen(), 2);
        assert_eq!(p.of("lost-update").beats, 5);
        assert!(p.of("deadlock").answered && p.of("deadlock").started());
        assert!(!p.of("raft-election").started());
        assert_eq!(p.tally(["lost-update", "deadlock", "redlock"]), (2, 1));
    }

    #[test]
    fn beats_past_the_story_or_the_bit_set_are_ignored() {
        let mut p = Progress::default();
        assert!(!p.see_beat("x", 5, 5));
        assert!(!p.see_beat("x", 64, 100));
        assert_eq!(p, Progress::default());
    }

    #[test]
    fn corrupt_or_foreign_text_reads_as_no_progress() {
        for text in [
            "",
            "{",
            "null",
            "not json",
            "{\"version\":2,\"scenarios\":{}}",
            "{\"version\":1}",
            "{\"version\":1,\"scenarios\":{\"a\":{\"beats\":-1}}}",
            "{\"version\":1,\"scenarios\":{\"a\":{\"beats\":99999999999}}}",
            "{\"version\":1,\"scenarios\":{\"a\":{\"color\":1}}}",
            "{\"version\":1,\"scenarios\":{\"a\\\"\":{}}}",
            "{\"version\":1,\"scenarios\":{}} trailing",
            "{\"version\":1,\"scenarios\":{\"a\":{\"answered\":true},}}",
        ] {
            assert_eq!(Progress::parse(text), Progress::default(), "{text}");
        }
        assert_eq!(
            Progress::parse(" { \"scenarios\" : { } , \"version\" : 1 } ")
                .scenarios
                .len(),
            0
        );
    }
}
