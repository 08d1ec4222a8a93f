//! Story beats: the few moments of a run a trainer talks about ("B takes over with 34", "A's
//! write is rejected"). A scenario declares them in order, each with a predicate over the
//! model (the participants' state and the step just taken), never as step numbers, so they
//! survive other seeds, parameters and injected faults. The engine marks each beat at the
//! first step where its predicate holds, once the beats before it have happened.

use super::faults::Fault;
use super::ids::NodeId;
use super::world::Nodes;
use crate::trace::EventKind;
use serde::{Deserialize, Serialize};

/// What a beat's predicate sees of the step just processed.
pub struct Step<'a> {
    pub kind: EventKind,
    /// The nodes involved, first the one that acted.
    pub nodes: &'a [NodeId],
    pub fault: Option<&'a Fault>,
    /// The step's narration, for a beat that is best told by what a participant said.
    pub notes: &'a [String],
}

impl Step<'_> {
    /// Whether `node` acted in this step (the first node involved).
    pub fn acted(&self, node: NodeId) -> bool {
        self.nodes.first() == Some(&node)
    }
}

/// A predicate over the model: true at the step where the beat happens. It may keep state
/// (e.g. the highest token seen so far) to recognise a change.
pub type BeatWhen = Box<dyn FnMut(&Nodes<'_>, &Step<'_>) -> bool>;

/// A question a trainer can put to the room at a beat, answered on the next step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    pub prompt: String,
    pub answers: Vec<String>,
    /// Index into `answers`.
    pub correct: u8,
    /// Why, shown with the answer.
    pub why: String,
}

/// A beat as a scenario declares it.
pub struct BeatSpec {
    pub key: &'static str,
    pub title: String,
    pub text: String,
    pub question: Option<Question>,
    /// The participants the beat is about, by name; empty means "those its step involves".
    pub focus: Vec<String>,
    pub(crate) when: BeatWhen,
}

impl BeatSpec {
    /// Asks the room a question at this beat.
    pub fn ask(&mut self, prompt: &str, answers: &[&str], correct: u8, why: &str) -> &mut Self {
        self.question = Some(Question {
            prompt: prompt.to_string(),
            answers: answers.iter().map(|a| a.to_string()).collect(),
            correct,
            why: why.to_string(),
        });
        self
    }

    /// Names the participants the picture should draw in full at this beat, when the ones its
    /// step involves are not the story (e.g. the ledger and both workers at "two holders").
    pub fn focus(&mut self, names: &[&str]) -> &mut Self {
        self.focus = names.iter().map(|n| n.to_string()).collect();
        self
    }
}

/// A beat as the trace records it: `seq` is the step where it happened, `None` if the run
/// ended before it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Beat {
    pub key: String,
    pub title: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Question>,
    /// The participants the beat is about, by name, when the scenario names them; otherwise
    /// the picture takes those its step involves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub focus: Vec<String>,
}

/// The declared beats of a run and how far the story has got.
#[derive(Default)]
pub(crate) struct BeatTracker {
    specs: Vec<BeatSpec>,
    reached: Vec<Option<u32>>,
    next: usize,
}

impl BeatTracker {
    pub fn new(specs: Vec<BeatSpec>) -> BeatTracker {
        let n = specs.len();
        BeatTracker {
            specs,
            reached: vec![None; n],
            next: 0,
        }
    }

    /// Marks every pending beat, in order, whose predicate holds at step `seq`.
    pub fn observe(&mut self, seq: u32, nodes: &Nodes<'_>, step: &Step<'_>) {
        while let Some(spec) = self.specs.get_mut(self.next) {
            if !(spec.when)(nodes, step) {
                break;
            }
            self.reached[self.next] = Some(seq);
            self.next += 1;
        }
    }

    pub fn finish(self) -> Vec<Beat> {
        self.specs
            .into_iter()
            .zip(self.reached)
            .map(|(s, seq)| Beat {
                key: s.key.to_string(),
                title: s.title,
                text: s.text,
                seq,
                question: s.question,
                focus: s.focus,
            })
            .collect()
    }
}
