//! The trace viewer's state: a trace read from a file, shown read-only — no simulation, so
//! nothing to fork or re-run, only stepping through what the file says happened.

use crate::nav::Nav;
use crate::picture::Axis;
use crate::same_trace::SameTrace;
use crate::transport::{self, Move, Stepping};
use coordlab_sim::trace_file;
use std::rc::Rc;
use yew::Reducible;

/// The playback speed, in steps per second.
pub const SPEED: u32 = 4;

#[derive(Clone, Default)]
pub struct TraceView {
    /// The trace on screen and the name of the file it came from.
    pub loaded: Option<(SameTrace, Rc<Nav>, String)>,
    /// Why the last file could not be shown.
    pub error: Option<String>,
    pub cursor: usize,
    pub playing: bool,
    pub axis: Axis,
    pub all_events: bool,
}

pub enum TraceAction {
    /// A file's name and text: parse it, show it or say what is wrong with it.
    Open(String, String),
    /// A file that could not even be read (too large, unreadable).
    Refuse(String),
    Transport(Move),
    Seek(usize),
    SetAxis(Axis),
    ToggleAllEvents,
}

impl TraceView {
    pub fn last(&self) -> usize {
        self.loaded
            .as_ref()
            .map_or(0, |(t, _, _)| t.entries.len().saturating_sub(1))
    }
}

impl Reducible for TraceView {
    type Action = TraceAction;

    fn reduce(self: Rc<Self>, action: TraceAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            TraceAction::Open(name, text) => match trace_file::parse(&text) {
                Ok(trace) if trace.entries.is_empty() => {
                    next.error = Some(format!("{name} holds a summary but no events: nothing to draw."));
                }
                Ok(trace) => {
                    let nav = Rc::new(Nav::of(&trace));
                    next = TraceView {
                        loaded: Some((SameTrace::new(trace), nav, name)),
                        axis: next.axis,
                        ..TraceView::default()
                    };
                }
                Err(e) => next.error = Some(format!("{name} is not a coordlab trace: {e}.")),
            },
            TraceAction::Refuse(why) => next.error = Some(why),
            TraceAction::Transport(m) => {
                let Some((_, nav, _)) = &next.loaded else {
                    return self;
                };
                if m == Move::Tick && !next.playing {
                    return self;
                }
                let how = Stepping {
                    all_events: next.all_events,
                    ..Stepping::default()
                };
                (next.cursor, next.playing) = transport::apply(m, next.cursor, nav, how, next.playing);
                // The file's beats are checked to lie in the run; this keeps any step there too.
                next.cursor = next.cursor.min(next.last());
            }
            TraceAction::Seek(i) => {
                next.cursor = i.min(next.last());
                next.playing = false;
            }
            TraceAction::SetAxis(a) => next.axis = a,
            TraceAction::ToggleAllEvents => next.all_events = !next.all_events,
        }
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(text: &str) -> Rc<TraceView> {
        Rc::new(TraceView::default()).reduce(TraceAction::Open("run.jsonl".into(), text.into()))
    }

    #[test]
    fn a_malformed_file_is_refused_naming_the_line_and_field() {
        let v = open(
            "{\"seq\":0,\"time_us\":\"soon\",\"kind\":\"start\",\"text\":\"a\",\"nodes\":[\"a\"]}\n\
             {\"kind\":\"summary\",\"scenario\":\"x\",\"nodes\":[{\"name\":\"a\"}]}\n",
        );
        let error = v.error.as_deref().unwrap();
        assert!(v.loaded.is_none());
        assert!(
            error.starts_with("run.jsonl is not a coordlab trace: line 1"),
            "{error}"
        );
        assert!(error.contains("time_us"), "{error}");
    }

    #[test]
    fn a_good_file_replaces_an_error_and_can_be_stepped() {
        let text = "{\"seq\":0,\"time_us\":0,\"kind\":\"start\",\"text\":\"a starts\",\"nodes\":[\"a\"]}\n\
                    {\"seq\":1,\"time_us\":5,\"kind\":\"timer\",\"text\":\"a ticks\",\"nodes\":[\"a\"],\"notes\":[\"tick\"]}\n\
                    {\"kind\":\"summary\",\"scenario\":\"elsewhere\",\"nodes\":[{\"name\":\"a\",\"kind\":\"x\"}]}\n";
        let bad = open("nonsense");
        let v = bad.reduce(TraceAction::Open("good.jsonl".into(), text.into()));
        assert!(v.error.is_none());
        assert_eq!(v.last(), 1);
        let v = v.reduce(TraceAction::Transport(Move::Last));
        assert_eq!(v.cursor, 1);
        let v = v.reduce(TraceAction::Seek(99));
        assert_eq!(v.cursor, 1, "a seek stays inside the trace");
    }
}
