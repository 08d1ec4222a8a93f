//! The trace file: a run as JSON Lines, one object per event and one summary object.
//! `coordlab run --format jsonl` writes it and the player's `#/trace` page reads it back, so
//! the writer and the reader live here together and cannot drift apart. The schema is
//! described in docs/cli.md ("The trace file (JSONL) schema").
//!
//! A file may come from anywhere, so [`parse`] trusts nothing in it: every field is checked,
//! sizes are bounded, and a bad file gives a [`TraceFileError`] naming the line and field,
//! never a panic. The reader walks `serde_json::Value`s by hand rather than deriving
//! deserializers: the browser bundles link it, and the hand walk is both smaller and able to
//! say which field was wrong.

use crate::json;
use crate::kernel::engine::MAX_NODES;
use crate::kernel::faults::{parse_script, script_code, Fault};
use crate::kernel::ids::{MsgId, NodeId};
use crate::properties::{PropertyKind, PropertyReport, Verdict};
use crate::trace::{Beat, EventKind, Holding, MessageRecord, NodeInfo, StopReason, Trace, TraceEntry};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Most lines a trace file may have (blank ones included): ten times the engine's default
/// event limit, so every run coordlab makes fits with room to spare.
pub const MAX_LINES: usize = 200_000;
/// Largest trace file accepted, in bytes (64 MiB): what a browser tab holds comfortably.
pub const MAX_BYTES: usize = 64 * 1024 * 1024;

/// Why a trace file was rejected: the 1-based line (0 when the problem is not one line's),
/// the field (a path such as `message.from` or `summary.nodes[1].name`; empty for a whole
/// line or the whole file) and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFileError {
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl fmt::Display for TraceFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.field.is_empty()) {
            (0, true) => f.write_str(&self.message),
            (0, false) => write!(f, "field \"{}\": {}", self.field, self.message),
            (line, true) => write!(f, "line {line}: {}", self.message),
            (line, false) => write!(f, "line {line}, field \"{}\": {}", self.field, self.message),
        }
    }
}

impl std::error::Error for TraceFileError {}

/// The trace as JSON Lines: one object per entry, then the summary. `mismatches` are the ways
/// the run missed its scenario's expectation (the summary's `expected`).
pub fn write(trace: &Trace, mismatches: &[String]) -> String {
    let mut out = String::new();
    for e in &trace.entries {
        out.push_str(&entry_json(trace, e).to_string());
        out.push('\n');
    }
    out.push_str(&summary_json(trace, mismatches).to_string());
    out.push('\n');
    out
}

fn message_json(trace: &Trace, m: &MessageRecord) -> Value {
    json!({
        "id": m.id.0,
        "from": trace.node_name(m.from),
        "to": trace.node_name(m.to),
        "label": m.label,
        "sent_us": m.sent_us,
    })
}

fn entry_json(trace: &Trace, e: &TraceEntry) -> Value {
    let mut obj = json!({
        "seq": e.seq,
        "time_us": e.time_us,
        "kind": e.kind.as_str(),
        "text": e.text,
        "nodes": e.nodes.iter().map(|n| trace.node_name(*n)).collect::<Vec<_>>(),
        "notes": e.notes,
        "violations": e.violations,
        "lost": e.lost.iter().map(|m| message_json(trace, m)).collect::<Vec<_>>(),
    });
    if let Some(m) = &e.message {
        obj["message"] = message_json(trace, m);
    }
    if let Some(f) = &e.fault {
        obj["fault"] = Value::String(f.to_code());
    }
    // The two below are left out when empty, so that lines of steps without a lock or a
    // warning stay as short as they were before these fields existed.
    if let Some(w) = &e.highlight {
        obj["warning"] = Value::String(w.clone());
    }
    if !e.holdings.is_empty() {
        obj["holdings"] = e
            .holdings
            .iter()
            .map(|h| json!({"node": trace.node_name(h.node), "believes": h.believes, "granted": h.granted}))
            .collect();
    }
    obj
}

fn summary_json(trace: &Trace, mismatches: &[String]) -> Value {
    let properties: Vec<Value> = trace
        .properties
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "verdict": p.verdict.as_str(),
                "first_violation_seq": p.first_violation_seq,
            })
        })
        .collect();
    json!({
        "kind": "summary",
        "scenario": trace.scenario,
        "seed": trace.seed,
        "params": trace.params,
        "actions": script_code(&trace.actions),
        // Node names in entries and node numbers in fault codes both refer to this list.
        "nodes": trace
            .nodes
            .iter()
            .map(|n| json!({"name": n.name, "kind": n.kind}))
            .collect::<Vec<_>>(),
        "outcome": trace.outcome,
        "properties": properties,
        "beats": trace
            .reached_beats()
            .map(|(seq, b)| json!({"seq": seq, "key": b.key, "title": b.title}))
            .collect::<Vec<_>>(),
        "expected": json!({ "met": mismatches.is_empty(), "mismatches": mismatches }),
        "stop": trace.stop,
        "event_count": trace.event_count,
    })
}

/// Every entry kind, so the reader accepts exactly the words [`EventKind::as_str`] writes.
const EVENT_KINDS: [EventKind; 7] = [
    EventKind::Start,
    EventKind::Deliver,
    EventKind::Timer,
    EventKind::Fault,
    EventKind::Resume,
    EventKind::PeerDown,
    EventKind::Undeliverable,
];

/// Reads a trace file back into a [`Trace`] without snapshots. Lines may come in any order
/// as long as the entries are in step order; exactly one is the summary (`"kind": "summary"`,
/// usually the last), and it is read first because entries name its nodes. Blank lines, a
/// `\r` before each newline and a leading byte-order mark are tolerated. Fields this reader
/// does not know are ignored, so newer writers stay readable.
pub fn parse(text: &str) -> Result<Trace, TraceFileError> {
    if text.len() > MAX_BYTES {
        return Err(file_error(format!(
            "the file has {} bytes; the limit is 64 MiB ({MAX_BYTES} bytes)",
            text.len()
        )));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let body = text.strip_suffix('\n').unwrap_or(text);
    // `take` bounds the work before the limit is known to hold.
    let raw: Vec<&str> = body.split('\n').take(MAX_LINES + 1).collect();
    if raw.len() > MAX_LINES {
        return Err(file_error(format!(
            "the file has more than {MAX_LINES} lines, the limit"
        )));
    }
    let lines: Vec<(usize, &str)> = raw
        .iter()
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return Err(file_error("the file is empty".to_string()));
    }

    let (summary_line, summary_value) = find_summary(&lines)?;
    let summary = Obj::new(as_object(summary_line, &summary_value)?, summary_line, "summary.");
    let mut trace = read_summary(&summary)?;

    let names: Vec<&str> = trace.nodes.iter().map(|n| n.name.as_str()).collect();
    for &(n, line) in &lines {
        if n == summary_line {
            continue;
        }
        let value = json_line(n, line)?;
        let obj = Obj::new(as_object(n, &value)?, n, "");
        let e = read_entry(&obj, &names, summary_line)?;
        let want = trace.entries.len();
        if e.seq as usize != want {
            return Err(obj.err(
                "seq",
                format!(
                    "expected step {want} (entries are numbered 0, 1, 2, … in order), found {}",
                    e.seq
                ),
            ));
        }
        if let Some(prev) = trace.entries.last() {
            if e.time_us < prev.time_us {
                return Err(obj.err(
                    "time_us",
                    format!(
                        "time goes backwards: {} µs is before the previous step's {} µs",
                        e.time_us, prev.time_us
                    ),
                ));
            }
        }
        trace.entries.push(e);
    }
    if summary.opt("event_count").is_none() {
        trace.event_count = trace.entries.len() as u64;
    }
    check_beats(&trace, summary_line)?;
    Ok(trace)
}

/// Beats must name steps the file has, in story order: a viewer jumps to them.
fn check_beats(trace: &Trace, summary_line: usize) -> Result<(), TraceFileError> {
    let mut before: Option<u32> = None;
    for (i, b) in trace.beats.iter().enumerate() {
        let Some(seq) = b.seq else { continue };
        let why = if seq as usize >= trace.entries.len() {
            format!(
                "step {seq} is past the last entry (step {})",
                trace.entries.len().saturating_sub(1)
            )
        } else if before.is_some_and(|p| seq < p) {
            format!("step {seq} comes before the previous beat's; beats are in story order")
        } else {
            before = Some(seq);
            continue;
        };
        return Err(TraceFileError {
            line: summary_line,
            field: format!("summary.beats[{i}].seq"),
            message: why,
        });
    }
    Ok(())
}

fn file_error(message: String) -> TraceFileError {
    TraceFileError {
        line: 0,
        field: String::new(),
        message,
    }
}

fn json_line(n: usize, line: &str) -> Result<Value, TraceFileError> {
    serde_json::from_str(line).map_err(|e| {
        // serde's text ends in "at line 1 column C", which misleads for one line of a file.
        let text = e.to_string();
        let what = text.split(" at line ").next().unwrap_or(&text);
        TraceFileError {
            line: n,
            field: String::new(),
            message: format!("not JSON: {what} at column {}", e.column()),
        }
    })
}

fn as_object(n: usize, value: &Value) -> Result<&Map<String, Value>, TraceFileError> {
    value.as_object().ok_or_else(|| TraceFileError {
        line: n,
        field: String::new(),
        message: format!("expected a JSON object, found {}", shown(value)),
    })
}

fn is_summary(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("summary")
}

/// The summary's line and value. The last line is tried first since writers put it there;
/// otherwise every line is read in order, so the first broken line is the one reported.
fn find_summary(lines: &[(usize, &str)]) -> Result<(usize, Value), TraceFileError> {
    if let Some(&(n, line)) = lines.last() {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            if is_summary(&v) {
                return Ok((n, v));
            }
        }
    }
    for &(n, line) in lines {
        let v = json_line(n, line)?;
        as_object(n, &v)?;
        if is_summary(&v) {
            return Ok((n, v));
        }
    }
    Err(TraceFileError {
        line: 0,
        field: "summary".to_string(),
        message: "no line is the summary (an object with \"kind\": \"summary\", normally the last line)"
            .to_string(),
    })
}

fn read_summary(o: &Obj<'_>) -> Result<Trace, TraceFileError> {
    let scenario = o.string("scenario")?.to_string();
    let nodes = read_nodes(o)?;
    let seed = match o.opt("seed") {
        Some(v) => o.whole(v, "seed", "a whole number")?,
        None => 0,
    };
    let mut params = crate::scenarios::Params::new();
    if let Some(v) = o.opt("params") {
        let map = v.as_object().ok_or_else(|| {
            o.err(
                "params",
                format!("expected an object of strings, found {}", shown(v)),
            )
        })?;
        for (key, value) in map {
            let field = format!("params.{key}");
            let value = value
                .as_str()
                .ok_or_else(|| o.err(&field, format!("expected a string, found {}", shown(value))))?;
            params.insert(key.clone(), value.to_string());
        }
    }
    let actions = match o.opt("actions") {
        Some(v) => {
            let script = o.str_of(v, "actions")?;
            let actions = parse_script(script).map_err(|m| o.err("actions", m))?;
            for a in &actions {
                check_nodes(o, "actions", &a.fault, nodes.len())?;
            }
            actions
        }
        None => Vec::new(),
    };
    let outcome = match o.opt("outcome") {
        Some(v) => v
            .as_object()
            .ok_or_else(|| o.err("outcome", format!("expected an object, found {}", shown(v))))?
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        None => BTreeMap::new(),
    };
    let mut properties = Vec::new();
    for p in o.each_object("properties")? {
        properties.push(read_property(&p)?);
    }
    let mut beats = Vec::new();
    for b in o.each_object("beats")? {
        beats.push(Beat {
            key: b.string("key")?.to_string(),
            title: match b.opt("title") {
                Some(v) => b.str_of(v, "title")?.to_string(),
                None => String::new(),
            },
            // The file carries no narration; a player shows the title.
            text: String::new(),
            seq: Some(b.step(b.req("seq")?, "seq")?),
            question: None,
            focus: Vec::new(),
        });
    }
    let stop = match o.opt("stop") {
        Some(v) => serde_json::from_value::<StopReason>(v.clone()).map_err(|_| {
            o.err(
                "stop",
                format!("expected quiescent, max-events or max-time, found {}", shown(v)),
            )
        })?,
        None => StopReason::Quiescent,
    };
    let event_count = match o.opt("event_count") {
        Some(v) => o.whole(v, "event_count", "a whole number of events")?,
        None => 0, // the caller counts the entries
    };
    Ok(Trace {
        scenario,
        seed,
        params,
        actions,
        unapplied_actions: Vec::new(),
        refused_actions: Vec::new(),
        nodes,
        entries: Vec::new(),
        properties,
        beats,
        outcome,
        stop,
        event_count,
    })
}

fn read_nodes(o: &Obj<'_>) -> Result<Vec<NodeInfo>, TraceFileError> {
    o.req("nodes")?;
    let list = o.each_object("nodes")?;
    if list.is_empty() || list.len() > MAX_NODES as usize {
        return Err(o.err(
            "nodes",
            format!("expected 1 to {MAX_NODES} nodes, found {}", list.len()),
        ));
    }
    let mut nodes: Vec<NodeInfo> = Vec::new();
    for (i, n) in list.iter().enumerate() {
        let name = n.string("name")?;
        // Entries name nodes, so a name must pick out one node.
        if let Some(twin) = nodes.iter().position(|m| m.name == name) {
            return Err(n.err(
                "name",
                format!("{} is also the name of node {twin}", quoted(name)),
            ));
        }
        let kind = match n.opt("kind") {
            Some(v) => n.str_of(v, "kind")?.to_string(),
            None => String::new(),
        };
        nodes.push(NodeInfo {
            id: NodeId(i as u32),
            name: name.to_string(),
            kind,
            faults: Vec::new(),
        });
    }
    Ok(nodes)
}

fn read_property(p: &Obj<'_>) -> Result<PropertyReport, TraceFileError> {
    let verdict = match p.string("verdict")? {
        "holds" => Verdict::Holds,
        "violated" => Verdict::Violated,
        other => {
            return Err(p.err(
                "verdict",
                format!("expected holds or violated, found {}", quoted(other)),
            ))
        }
    };
    let first_violation_seq = match p.opt("first_violation_seq") {
        Some(v) => Some(p.step(v, "first_violation_seq")?),
        None => None,
    };
    Ok(PropertyReport {
        name: p.string("name")?.to_string(),
        // The file does not say; `Always` is what most properties are, and a player only
        // shows the verdict and the step.
        kind: PropertyKind::Always,
        description: String::new(),
        verdict,
        first_violation_seq,
        satisfied_seq: None,
    })
}

fn read_entry(o: &Obj<'_>, names: &[&str], summary_line: usize) -> Result<TraceEntry, TraceFileError> {
    // The kind first: a second summary is better reported as such than as a missing `seq`.
    let kind = match o.string("kind")? {
        "summary" => {
            return Err(o.err(
                "kind",
                format!("a second summary; the file's summary is on line {summary_line}"),
            ))
        }
        word => EVENT_KINDS
            .into_iter()
            .find(|k| k.as_str() == word)
            .ok_or_else(|| {
                let known: Vec<&str> = EVENT_KINDS.iter().map(|k| k.as_str()).collect();
                o.err(
                    "kind",
                    format!(
                        "unknown kind {}; expected summary or one of {}",
                        quoted(word),
                        known.join(", ")
                    ),
                )
            })?,
    };
    let seq = o.step(o.req("seq")?, "seq")?;
    let time_us = o.whole(o.req("time_us")?, "time_us", "a whole number of microseconds")?;
    let text = o.string("text")?.to_string();
    let mut nodes = Vec::new();
    let list = o.array(o.req("nodes")?, "nodes")?;
    for (i, v) in list.iter().enumerate() {
        nodes.push(o.node(v, &format!("nodes[{i}]"), names)?);
    }
    let message = match o.opt("message") {
        Some(v) => Some(read_message(&o.object(v, "message")?, names)?),
        None => None,
    };
    let mut lost = Vec::new();
    for m in o.each_object("lost")? {
        lost.push(read_message(&m, names)?);
    }
    let fault = match o.opt("fault") {
        Some(v) => {
            let f = Fault::from_code(o.str_of(v, "fault")?).map_err(|m| o.err("fault", m))?;
            check_nodes(o, "fault", &f, names.len())?;
            Some(f)
        }
        None => None,
    };
    let highlight = match o.opt("warning") {
        Some(v) => Some(o.str_of(v, "warning")?.to_string()),
        None => None,
    };
    let mut holdings = Vec::new();
    for h in o.each_object("holdings")? {
        holdings.push(Holding {
            node: h.node(h.req("node")?, "node", names)?,
            believes: h.boolean("believes")?,
            granted: h.boolean("granted")?,
        });
    }
    Ok(TraceEntry {
        seq,
        time_us,
        kind,
        text,
        nodes,
        message,
        fault,
        notes: o.strings("notes")?,
        lost,
        violations: o.strings("violations")?,
        highlight,
        holdings,
        snapshot: None,
    })
}

fn read_message(o: &Obj<'_>, names: &[&str]) -> Result<MessageRecord, TraceFileError> {
    Ok(MessageRecord {
        id: MsgId(o.whole(o.req("id")?, "id", "a whole number")?),
        from: o.node(o.req("from")?, "from", names)?,
        to: o.node(o.req("to")?, "to", names)?,
        label: o.string("label")?.to_string(),
        sent_us: o.whole(o.req("sent_us")?, "sent_us", "a whole number of microseconds")?,
    })
}

/// Fault codes number nodes by their place in the summary's list; each must be on it.
fn check_nodes(o: &Obj<'_>, key: &str, fault: &Fault, count: usize) -> Result<(), TraceFileError> {
    match fault.nodes().into_iter().find(|n| n.index() >= count) {
        Some(n) => Err(o.err(
            key,
            format!(
                "`{}` names node {}, but the summary lists {count} node(s), numbered from 0",
                fault.to_code(),
                n.0
            ),
        )),
        None => Ok(()),
    }
}

/// A value for an error message: its JSON, cut short so a huge value cannot flood the text.
fn shown(v: &Value) -> String {
    const MAX_CHARS: usize = 40;
    let text = v.to_string();
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// A string as JSON, cut short like [`shown`].
fn quoted(s: &str) -> String {
    shown(&Value::String(s.to_string()))
}

/// One JSON object of the file, with where it is for error messages.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    line: usize,
    /// This object's place in its line, ending in `.`, e.g. `message.` (empty for an entry).
    path: String,
}

impl<'a> Obj<'a> {
    fn new(map: &'a Map<String, Value>, line: usize, path: &str) -> Obj<'a> {
        Obj {
            map,
            line,
            path: path.to_string(),
        }
    }

    fn err(&self, key: &str, message: impl Into<String>) -> TraceFileError {
        TraceFileError {
            line: self.line,
            field: format!("{}{key}", self.path),
            message: message.into(),
        }
    }

    /// The value of `key`; `null` counts as absent, as other writers may spell "none" so.
    fn opt(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn req(&self, key: &str) -> Result<&'a Value, TraceFileError> {
        self.opt(key)
            .ok_or_else(|| self.err(key, "missing; this field is required"))
    }

    fn whole(&self, v: &Value, key: &str, what: &str) -> Result<u64, TraceFileError> {
        v.as_u64()
            .ok_or_else(|| self.err(key, format!("expected {what}, found {}", shown(v))))
    }

    fn step(&self, v: &Value, key: &str) -> Result<u32, TraceFileError> {
        v.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| self.err(key, format!("expected a step number, found {}", shown(v))))
    }

    fn str_of(&self, v: &'a Value, key: &str) -> Result<&'a str, TraceFileError> {
        v.as_str()
            .ok_or_else(|| self.err(key, format!("expected a string, found {}", shown(v))))
    }

    /// A required string field.
    fn string(&self, key: &str) -> Result<&'a str, TraceFileError> {
        self.str_of(self.req(key)?, key)
    }

    fn boolean(&self, key: &str) -> Result<bool, TraceFileError> {
        let v = self.req(key)?;
        v.as_bool()
            .ok_or_else(|| self.err(key, format!("expected true or false, found {}", shown(v))))
    }

    fn array(&self, v: &'a Value, key: &str) -> Result<&'a Vec<Value>, TraceFileError> {
        v.as_array()
            .ok_or_else(|| self.err(key, format!("expected an array, found {}", shown(v))))
    }

    fn object(&self, v: &'a Value, key: &str) -> Result<Obj<'a>, TraceFileError> {
        let map = v
            .as_object()
            .ok_or_else(|| self.err(key, format!("expected an object, found {}", shown(v))))?;
        Ok(Obj::new(map, self.line, &format!("{}{key}.", self.path)))
    }

    /// An optional array of objects (absent: none), each ready to read with its index in
    /// its path, e.g. `lost[2].`.
    fn each_object(&self, key: &str) -> Result<Vec<Obj<'a>>, TraceFileError> {
        let Some(v) = self.opt(key) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (i, item) in self.array(v, key)?.iter().enumerate() {
            out.push(self.object(item, &format!("{key}[{i}]"))?);
        }
        Ok(out)
    }

    /// An optional array of strings (absent: none).
    fn strings(&self, key: &str) -> Result<Vec<String>, TraceFileError> {
        let Some(v) = self.opt(key) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (i, item) in self.array(v, key)?.iter().enumerate() {
            out.push(self.str_of(item, &format!("{key}[{i}]"))?.to_string());
        }
        Ok(out)
    }

    /// A node named by the summary's list.
    fn node(&self, v: &Value, key: &str, names: &[&str]) -> Result<NodeId, TraceFileError> {
        let name = v
            .as_str()
            .ok_or_else(|| self.err(key, format!("expected a node name, found {}", shown(v))))?;
        match names.iter().position(|n| *n == name) {
            Some(i) => Ok(NodeId(i as u32)),
            None => Err(self.err(
                key,
                format!(
                    "{} is not one of the summary's nodes ({})",
                    quoted(name),
                    names.iter().map(|n| quoted(n)).collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace as another tool might write it: three nodes, a few deliveries, a pause, and a
    /// summary with only the required fields plus a few optional ones.
    const FOREIGN: &str = r#"{"seq":0,"time_us":0,"kind":"start","text":"alpha, beta and gamma start","nodes":["alpha","beta","gamma"]}
{"seq":1,"time_us":1500,"kind":"deliver","text":"beta gets ping from alpha","nodes":["beta","alpha"],"message":{"id":1,"from":"alpha","to":"beta","label":"ping","sent_us":0}}
{"seq":2,"time_us":2000,"kind":"fault","text":"beta pauses for 36 s","nodes":["beta"],"fault":"pause:1:36000","warning":"two holders"}
{"seq":3,"time_us":2600,"kind":"deliver","text":"gamma gets pong from alpha","nodes":["gamma","alpha"],"message":{"id":2,"from":"alpha","to":"gamma","label":"pong","sent_us":1500},"holdings":[{"node":"gamma","believes":true,"granted":false}]}
{"seq":4,"time_us":38000,"kind":"resume","text":"beta resumes","nodes":["beta"],"notes":["beta carries on"]}
{"kind":"summary","scenario":"somebody-elses","nodes":[{"name":"alpha","kind":"client"},{"name":"beta","kind":"server"},{"name":"gamma","kind":"server"}],"actions":"2@pause:1:36000"}"#;

    fn lines() -> Vec<String> {
        FOREIGN.lines().map(str::to_string).collect()
    }

    /// The error for FOREIGN with line `n` (1-based) replaced by `line`.
    fn error_with(n: usize, line: &str) -> TraceFileError {
        let mut l = lines();
        l[n - 1] = line.to_string();
        parse(&l.join("\n")).expect_err("the file is malformed")
    }

    fn assert_at(e: &TraceFileError, line: usize, field: &str, words: &str) {
        assert_eq!((e.line, e.field.as_str()), (line, field), "{e}");
        assert!(e.to_string().contains(words), "{e}");
    }

    #[test]
    fn a_hand_written_foreign_trace_parses() {
        let t = parse(FOREIGN).expect("valid");
        assert_eq!(t.scenario, "somebody-elses");
        assert_eq!(t.seed, 0);
        assert_eq!(t.nodes.len(), 3);
        assert_eq!(
            (t.nodes[1].id, t.nodes[1].name.as_str(), t.nodes[1].kind.as_str()),
            (NodeId(1), "beta", "server")
        );
        assert_eq!(t.entries.len(), 5);
        assert_eq!(t.event_count, 5);
        assert_eq!(t.stop, StopReason::Quiescent);
        let pause = Fault::Pause {
            node: NodeId(1),
            duration_ms: 36_000,
        };
        assert_eq!(t.entries[2].fault, Some(pause.clone()));
        assert_eq!(t.actions.len(), 1);
        assert_eq!(t.actions[0].fault, pause);
        assert_eq!(t.entries[2].highlight.as_deref(), Some("two holders"));
        let m = t.entries[1].message.as_ref().expect("a message");
        assert_eq!(
            (m.id, m.from, m.to, m.sent_us),
            (MsgId(1), NodeId(0), NodeId(1), 0)
        );
        assert_eq!(t.entries[3].nodes, vec![NodeId(2), NodeId(0)]);
        assert_eq!(
            t.entries[3].holdings,
            vec![Holding {
                node: NodeId(2),
                believes: true,
                granted: false
            }]
        );
        assert_eq!(t.entries[4].kind, EventKind::Resume);
        assert_eq!(t.entries[4].notes, vec!["beta carries on".to_string()]);
        assert!(t
            .entries
            .iter()
            .all(|e| e.snapshot.is_none() && e.lost.is_empty()));
        // Written out and read again, it stays the same.
        assert_eq!(parse(&write(&t, &[])).expect("own output"), t);
    }

    #[test]
    fn blank_lines_crlf_a_bom_and_the_summary_first_are_tolerated() {
        let mut l = lines();
        let summary = l.pop().expect("a summary");
        l.insert(0, summary);
        let text = format!("\u{feff}{}\r\n\r\n", l.join("\r\n\n"));
        let t = parse(&text).expect("tolerated");
        assert_eq!(t.entries.len(), 5);
        assert_eq!(t.entries[4].text, "beta resumes");
    }

    #[test]
    fn rejects_a_line_that_is_not_json_naming_the_column() {
        let e = error_with(2, r#"{"seq":1,"time_us":"#);
        assert_at(&e, 2, "", "not JSON");
        assert!(e.message.contains("column 19"), "{e}");
        // A broken last line is reported too, not taken for a missing summary.
        let e = error_with(6, "{kind: summary}");
        assert_at(&e, 6, "", "not JSON");
    }

    #[test]
    fn rejects_a_line_that_is_not_an_object() {
        assert_at(
            &error_with(3, "[1, 2]"),
            3,
            "",
            "expected a JSON object, found [1,2]",
        );
    }

    #[test]
    fn rejects_missing_required_entry_fields() {
        for (field, line) in [
            ("seq", r#"{"time_us":0,"kind":"start","text":"t","nodes":[]}"#),
            ("time_us", r#"{"seq":0,"kind":"start","text":"t","nodes":[]}"#),
            ("kind", r#"{"seq":0,"time_us":0,"text":"t","nodes":[]}"#),
            ("text", r#"{"seq":0,"time_us":0,"kind":"start","nodes":[]}"#),
            ("nodes", r#"{"seq":0,"time_us":0,"kind":"start","text":"t"}"#),
        ] {
            assert_at(&error_with(1, line), 1, field, "missing");
        }
    }

    #[test]
    fn rejects_wrong_typed_fields_saying_what_was_found() {
        // Two blank lines after the first four entries put the bad fifth on line 7.
        let l = lines();
        let bad = r#"{"seq":4,"time_us":"abc","kind":"resume","text":"r","nodes":[]}"#;
        let text = format!("{}\n\n\n{bad}\n{}", l[..4].join("\n"), l[5]);
        let e = parse(&text).expect_err("malformed");
        assert_eq!(
            e.to_string(),
            r#"line 7, field "time_us": expected a whole number of microseconds, found "abc""#
        );
        assert_at(
            &error_with(2, &lines()[1].replace(r#""seq":1"#, r#""seq":-1"#)),
            2,
            "seq",
            "step number",
        );
        assert_at(
            &error_with(
                1,
                &lines()[0].replace(r#""text":"alpha, beta and gamma start""#, r#""text":7"#),
            ),
            1,
            "text",
            "expected a string",
        );
        assert_at(
            &error_with(
                1,
                &lines()[0].replace(r#""nodes":["alpha","beta","gamma"]"#, r#""nodes":"alpha""#),
            ),
            1,
            "nodes",
            "expected an array",
        );
        assert_at(
            &error_with(
                4,
                &lines()[3].replace(r#""believes":true"#, r#""believes":"yes""#),
            ),
            4,
            "holdings[0].believes",
            "true or false",
        );
        assert_at(
            &error_with(
                5,
                &lines()[4].replace(r#""notes":["beta carries on"]"#, r#""notes":[1]"#),
            ),
            5,
            "notes[0]",
            "expected a string",
        );
    }

    #[test]
    fn rejects_an_unknown_kind() {
        let e = error_with(5, &lines()[4].replace("resume", "wake"));
        assert_at(&e, 5, "kind", "unknown kind \"wake\"");
        assert!(e.message.contains("peer-down"), "{e}");
    }

    #[test]
    fn rejects_a_node_name_not_in_the_summary() {
        let e = error_with(1, &lines()[0].replace(r#""gamma"]"#, r#""delta"]"#));
        assert_at(
            &e,
            1,
            "nodes[2]",
            "\"delta\" is not one of the summary's nodes (\"alpha\", \"beta\", \"gamma\")",
        );
        let e = error_with(2, &lines()[1].replace(r#""from":"alpha""#, r#""from":"omega""#));
        assert_at(&e, 2, "message.from", "\"omega\"");
        let e = error_with(4, &lines()[3].replace(r#""node":"gamma""#, r#""node":"zeta""#));
        assert_at(&e, 4, "holdings[0].node", "\"zeta\"");
        let lost = r#""lost":[{"id":9,"from":"alpha","to":"nobody","label":"x","sent_us":0}]"#;
        let e = error_with(5, &lines()[4].replace(r#""notes""#, &format!("{lost},\"notes\"")));
        assert_at(&e, 5, "lost[0].to", "\"nobody\"");
    }

    #[test]
    fn rejects_a_fault_code_that_does_not_parse_or_names_an_absent_node() {
        let e = error_with(3, &lines()[2].replace("pause:1:36000", "nap:1"));
        assert_at(&e, 3, "fault", "unknown fault `nap`");
        let e = error_with(3, &lines()[2].replace("pause:1:36000", "pause:3:36000"));
        assert_at(&e, 3, "fault", "names node 3, but the summary lists 3 node(s)");
        let e = error_with(6, &lines()[5].replace("2@pause:1:36000", "2@crash:7"));
        assert_at(&e, 6, "summary.actions", "names node 7");
        let e = error_with(6, &lines()[5].replace("2@pause:1:36000", "soon@crash:1"));
        assert_at(&e, 6, "summary.actions", "not a step number");
    }

    #[test]
    fn rejects_steps_out_of_order() {
        let mut l = lines();
        l.swap(1, 2);
        let e = parse(&l.join("\n")).expect_err("out of order");
        assert_at(&e, 2, "seq", "expected step 1");
        let e = error_with(1, &lines()[0].replace(r#""seq":0"#, r#""seq":1"#));
        assert_at(&e, 1, "seq", "expected step 0");
        let e = error_with(2, &lines()[1].replace(r#""seq":1"#, r#""seq":0"#));
        assert_at(&e, 2, "seq", "expected step 1");
    }

    #[test]
    fn rejects_time_going_backwards() {
        let e = error_with(4, &lines()[3].replace(r#""time_us":2600"#, r#""time_us":1999"#));
        assert_at(&e, 4, "time_us", "before the previous step's 2000 µs");
    }

    #[test]
    fn rejects_a_file_without_a_summary_or_with_two() {
        let l = lines();
        let e = parse(&l[..5].join("\n")).expect_err("no summary");
        assert_at(&e, 0, "summary", "no line is the summary");
        let mut l = lines();
        l.insert(2, l[5].clone());
        let e = parse(&l.join("\n")).expect_err("two summaries");
        assert_at(&e, 3, "kind", "a second summary; the file's summary is on line 7");
    }

    #[test]
    fn rejects_a_summary_without_scenario_or_nodes() {
        let e = error_with(6, &lines()[5].replace(r#""scenario":"somebody-elses","#, ""));
        assert_at(&e, 6, "summary.scenario", "missing");
        let summary = r#"{"kind":"summary","scenario":"s","actions":""}"#;
        assert_at(&error_with(6, summary), 6, "summary.nodes", "missing");
        let summary = r#"{"kind":"summary","scenario":"s","nodes":[]}"#;
        assert_at(
            &error_with(6, summary),
            6,
            "summary.nodes",
            "expected 1 to 16 nodes, found 0",
        );
        let summary = r#"{"kind":"summary","scenario":"s","nodes":[{"name":"alpha"},{"name":"alpha"}]}"#;
        assert_at(
            &error_with(6, summary),
            6,
            "summary.nodes[1].name",
            "also the name of node 0",
        );
        let summary = r#"{"kind":"summary","scenario":"s","nodes":[{"kind":"x"}]}"#;
        assert_at(&error_with(6, summary), 6, "summary.nodes[0].name", "missing");
        let summary = r#"{"kind":"summary","scenario":"s","nodes":[{"name":"a"}],"stop":"tired"}"#;
        assert_at(&error_with(6, summary), 6, "summary.stop", "max-events");
    }

    #[test]
    fn rejects_beats_past_the_last_step_or_out_of_order() {
        let entries = "{\"seq\":0,\"time_us\":0,\"kind\":\"start\",\"text\":\"a\",\"nodes\":[\"a\"]}\n\
                       {\"seq\":1,\"time_us\":5,\"kind\":\"timer\",\"text\":\"b\",\"nodes\":[\"a\"]}\n";
        let summary = |beats: &str| {
            format!("{entries}{{\"kind\":\"summary\",\"scenario\":\"x\",\"nodes\":[{{\"name\":\"a\"}}],\"beats\":{beats}}}\n")
        };
        let past = parse(&summary("[{\"key\":\"k\",\"seq\":9}]")).unwrap_err();
        assert_eq!((past.line, past.field.as_str()), (3, "summary.beats[0].seq"));
        assert!(past.message.contains("past the last entry (step 1)"), "{past}");
        let order = parse(&summary("[{\"key\":\"k\",\"seq\":1},{\"key\":\"j\",\"seq\":0}]")).unwrap_err();
        assert_eq!(order.field, "summary.beats[1].seq");
        assert!(parse(&summary("[{\"key\":\"k\",\"seq\":0},{\"key\":\"j\",\"seq\":1}]")).is_ok());
    }

    #[test]
    fn rejects_an_empty_file() {
        for text in ["", "\n", "  \r\n\n\t\n"] {
            assert_at(&parse(text).expect_err("empty"), 0, "", "the file is empty");
        }
    }

    #[test]
    fn rejects_files_over_the_limits_saying_the_limit() {
        let e = parse(&"\n".repeat(MAX_LINES + 1)).expect_err("too many lines");
        assert_at(&e, 0, "", "more than 200000 lines, the limit");
        let mut big = String::from(FOREIGN);
        big.push_str(&" ".repeat(MAX_BYTES));
        let e = parse(&big).expect_err("too big");
        assert_at(&e, 0, "", "the limit is 64 MiB");
    }

    #[test]
    fn no_prefix_or_mangled_byte_of_a_trace_panics() {
        let text = FOREIGN;
        for (cut, _) in text.char_indices() {
            let _ = parse(&text[..cut]);
        }
        // Replace each byte of the summary and one entry by bytes JSON cares about.
        for (i, _) in text.char_indices().filter(|(i, _)| i % 3 == 0) {
            for b in ["\"", "}", "9", "-", "[", "null", "\n"] {
                let mangled = format!("{}{b}{}", &text[..i], &text[i..].get(1..).unwrap_or(""));
                let _ = parse(&mangled);
            }
        }
    }
}
