//! The glossary in the browser: the first use of a term in a run becomes a button that opens
//! its one-line definition ([`TermButton`]), and `#/glossary` lists every term
//! ([`GlossaryPage`], in the bundle with the library).
//!
//! Keys: Tab reaches a term, Enter (or a click) opens it, Escape or moving the focus away
//! closes it. Space plays the run, as everywhere in the player (see `transport.rs`).

use crate::nav::Nav;
use coordlab_sim::glossary::{add_terms, first_uses, TermSet, TERMS};
use coordlab_sim::trace::Trace;
use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// A trace compared by identity: memos keyed by it never compare whole traces.
#[derive(Clone)]
pub struct SameTrace(pub Rc<Trace>);

impl PartialEq for SameTrace {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

const NEVER: usize = usize::MAX;

/// Where each term is first used in a run: among the narrated steps (what stepping visits by
/// default) and among all steps (what "all events" visits).
#[derive(Debug, PartialEq)]
pub struct FirstUses {
    narrated: Vec<usize>,
    /// Per term: (first narrated step, first step).
    first: Vec<(usize, usize)>,
}

impl FirstUses {
    pub fn of(trace: &Trace) -> FirstUses {
        let narrated = Nav::of(trace).narrated;
        let mut first = vec![(NEVER, NEVER); TERMS.len()];
        let (mut in_narrated, mut in_any) = (TermSet::default(), TermSet::default());
        for (i, e) in trace.entries.iter().enumerate() {
            let is_narrated = narrated.binary_search(&i).is_ok();
            if in_any.is_full() && (in_narrated.is_full() || !is_narrated) {
                if in_narrated.is_full() {
                    break;
                }
                continue;
            }
            let mut here = TermSet::default();
            add_terms(&e.text, &mut here);
            for n in &e.notes {
                add_terms(n, &mut here);
            }
            for (t, f) in first.iter_mut().enumerate() {
                if !here.contains(t) {
                    continue;
                }
                if !in_any.contains(t) {
                    in_any.insert(t);
                    f.1 = i;
                }
                if is_narrated && !in_narrated.contains(t) {
                    in_narrated.insert(t);
                    f.0 = i;
                }
            }
        }
        FirstUses { narrated, first }
    }

    /// The terms a run has used before step `cursor`: on a narrated step, those the narrated
    /// steps before it used (stepping skips the rest); on another step (only "all events"
    /// shows those), those any earlier step used.
    pub fn introduced_before(&self, cursor: usize) -> TermSet {
        let narrated = self.narrated.binary_search(&cursor).is_ok();
        let mut set = TermSet::default();
        for (t, (n, any)) in self.first.iter().enumerate() {
            if (if narrated { *n } else { *any }) < cursor {
                set.insert(t);
            }
        }
        set
    }
}

/// `text` with the first use of each term not yet in `introduced` as a [`TermButton`].
pub fn linked(text: &str, introduced: &mut TermSet, step: usize) -> Html {
    let uses = first_uses(text, introduced);
    if uses.is_empty() {
        return html! { { text.to_string() } };
    }
    let mut at = 0;
    let mut parts = Vec::with_capacity(2 * uses.len() + 1);
    for u in uses {
        parts.push(html! { { text[at..u.start].to_string() } });
        parts.push(html! {
            <TermButton term={u.term} label={AttrValue::from(text[u.start..u.end].to_string())} step={step} />
        });
        at = u.end;
    }
    parts.push(html! { { text[at..].to_string() } });
    parts.into_iter().collect::<Html>()
}

thread_local! {
    static NEXT_ID: Cell<usize> = const { Cell::new(0) };
}

#[derive(Properties, PartialEq)]
pub struct TermButtonProps {
    /// Index into [`TERMS`].
    pub term: usize,
    /// The words as the narration wrote them.
    pub label: AttrValue,
    /// The step on screen: moving to another step closes the definition.
    pub step: usize,
}

/// A term in the narration: a button that shows its definition beside it.
#[function_component(TermButton)]
pub fn term_button(props: &TermButtonProps) -> Html {
    let open = use_state_eq(|| false);
    let id = use_memo((), |_| {
        NEXT_ID.with(|n| {
            n.set(n.get() + 1);
            format!("term-pop-{}", n.get())
        })
    });
    let wrapper = use_node_ref();
    let button = use_node_ref();
    {
        let open = open.clone();
        use_effect_with((props.term, props.step), move |_| open.set(false));
    }
    let term = &TERMS[props.term];
    let toggle = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    // Escape closes the definition and nothing else (not presenter mode, not the help).
    let onkeydown = {
        let (open, button) = (open.clone(), button.clone());
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Escape" && *open {
                e.stop_propagation();
                e.prevent_default();
                open.set(false);
                if let Some(b) = button.cast::<web_sys::HtmlElement>() {
                    let _ = b.focus();
                }
            }
        })
    };
    let onfocusout = {
        let (open, wrapper) = (open.clone(), wrapper.clone());
        Callback::from(move |e: FocusEvent| {
            let to = e
                .related_target()
                .and_then(|t| t.dyn_into::<web_sys::Node>().ok());
            let inside = match (wrapper.cast::<web_sys::Node>(), to) {
                (Some(w), Some(to)) => w.contains(Some(&to)),
                _ => false,
            };
            if !inside {
                open.set(false);
            }
        })
    };
    html! {
        <span class="term" ref={wrapper} {onkeydown} {onfocusout}>
            <button type="button" class="term-link" ref={button} onclick={toggle}
                aria-expanded={(*open).to_string()} aria-controls={(*id).clone()}
                title="What does this mean? (Enter)">
                { props.label.clone() }
            </button>
            <span class="term-pop" id={(*id).clone()} role="dialog" aria-label={term.name} hidden={!*open}>
                <strong class="term-name">{ term.name }</strong>
                <span class="term-def">{ term.definition }</span>
                <a class="term-more" href="#/glossary">{ "All terms →" }</a>
            </span>
        </span>
    }
}

/// `#/glossary`: every term, alphabetically, with its definition and the scenario that shows it.
#[cfg(feature = "library")]
#[function_component(GlossaryPage)]
pub fn glossary_page() -> Html {
    use coordlab_sim::glossary::slug;
    use coordlab_sim::scenarios;
    html! {
        <section class="glossary" aria-labelledby="glossary-title">
            <p class="back"><a href="#/">{ "← Scenario library" }</a></p>
            <h1 id="glossary-title">{ "Glossary" }</h1>
            <p class="lead">
                { "The words the scenarios use, one line each. In the player, the first time a run uses one of them it is a button: Tab to it, press Enter (or click) for the definition, Escape to close it. Space still plays the run." }
            </p>
            <dl class="terms">
                { for TERMS.iter().map(|t| {
                    let title = scenarios::find(t.scenario).map(|d| d.info().title).unwrap_or(t.scenario);
                    let href = if t.params.is_empty() {
                        format!("#/play/{}", t.scenario)
                    } else {
                        format!("#/play/{}?{}", t.scenario, t.params)
                    };
                    html! {
                        <div class="gloss" id={slug(t)}>
                            <dt>{ t.name }</dt>
                            <dd>
                                { t.definition }
                                <a class="gloss-scenario" href={href}>{ format!("See it in “{title}” →") }</a>
                            </dd>
                        </div>
                    }
                }) }
            </dl>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordlab_sim::scenarios::{self, RunRequest};
    use coordlab_sim::{Limits, Recording};

    fn trace(id: &str) -> Trace {
        let request = RunRequest {
            scenario: id.into(),
            params: Default::default(),
            seed: 1,
            actions: Vec::new(),
        };
        scenarios::run(&request, Limits::default(), Recording::Lines).unwrap()
    }

    fn index(name: &str) -> usize {
        TERMS.iter().position(|t| t.name == name).unwrap()
    }

    #[test]
    fn a_term_is_introduced_at_its_first_narrated_use() {
        let t = trace("lost-update");
        let firsts = FirstUses::of(&t);
        let lost = index("Lost update");
        // Before the step that first says "lost update" it is not introduced; after it, it is.
        let step = t
            .entries
            .iter()
            .position(|e| e.notes.iter().any(|n| n.contains("lost update")))
            .unwrap();
        assert!(!firsts.introduced_before(step).contains(lost));
        assert!(firsts.introduced_before(step + 1).contains(lost));
        let mut set = firsts.introduced_before(step);
        let marked: usize = t.entries[step]
            .notes
            .iter()
            .map(|n| first_uses(n, &mut set).iter().filter(|u| u.term == lost).count())
            .sum();
        assert_eq!(marked, 1, "marked once at its first use");
    }

    #[test]
    fn a_term_first_used_off_the_narrated_path_is_still_marked_on_it() {
        // AppendEntries first shows in events without narration (stepping skips them), so the
        // narrated path introduces it later, at its first narrated use.
        let t = trace("raft-log-replication");
        let firsts = FirstUses::of(&t);
        let ae = index("AppendEntries");
        let (n, any) = firsts.first[ae];
        assert!(any < NEVER && n < NEVER, "used in the run and in its narration");
        assert!(any <= n);
        assert!(!firsts.introduced_before(n).contains(ae));
        assert!(firsts.introduced_before(n + 1).contains(ae));
    }
}
