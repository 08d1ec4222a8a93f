//! The glossary in the browser: the first use of a term in a run becomes a button that opens
//! its one-line definition ([`linked`], drawn by the narration, which holds which one is
//! open), and `#/glossary` lists every term (`page`, in the bundle with the library).
//!
//! The definitions are not in the player bundles (about 2 KB gzipped of every first load):
//! the loader fetches `glossary.json` (each term's name → its definition, written by
//! `cargo xtask dist`) once the app has started, well before a reader opens a term.
//!
//! Keys: Tab reaches a term, Enter (or a click) opens it, Escape or moving the focus away
//! closes it. Space plays the run, as everywhere in the player (see `transport.rs`).

use crate::nav::Nav;
use crate::same_trace::SameTrace;
use coordlab_sim::glossary::{first_uses, TermSet, TERMS};
use std::cell::{Cell, RefCell};
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use yew::prelude::*;

const NEVER: usize = usize::MAX;

/// Where each term is first used in a run: among the narrated steps (what stepping visits by
/// default) and among all steps (what "all events" visits).
#[derive(Debug, PartialEq)]
pub struct FirstUses {
    trace: SameTrace,
    narrated: Vec<usize>,
    /// The steps read so far: a viewer asks about the step it shows, so a long run is read
    /// only as far as it is watched.
    scan: RefCell<Scan>,
}

#[derive(Debug, PartialEq)]
struct Scan {
    /// Steps before this one have been read.
    next: usize,
    in_narrated: TermSet,
    in_any: TermSet,
    /// Per term: (first narrated step, first step).
    first: Vec<(usize, usize)>,
}

impl FirstUses {
    pub fn of(trace: &SameTrace) -> FirstUses {
        FirstUses {
            trace: trace.clone(),
            narrated: Nav::of(trace).narrated,
            scan: RefCell::new(Scan {
                next: 0,
                in_narrated: TermSet::default(),
                in_any: TermSet::default(),
                first: vec![(NEVER, NEVER); TERMS.len()],
            }),
        }
    }

    /// Reads the steps before `end`.
    fn read_to(&self, end: usize) {
        let mut scan = self.scan.borrow_mut();
        let end = end.min(self.trace.entries.len());
        while scan.next < end {
            let i = scan.next;
            scan.next += 1;
            let is_narrated = self.narrated.binary_search(&i).is_ok();
            if scan.in_any.is_full() && (scan.in_narrated.is_full() || !is_narrated) {
                continue;
            }
            let e = &self.trace.entries[i];
            let mut here = TermSet::default();
            first_uses(&e.text, &mut here);
            for n in &e.notes {
                first_uses(n, &mut here);
            }
            let Scan {
                in_narrated,
                in_any,
                first,
                ..
            } = &mut *scan;
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
    }

    /// The terms a run has used before step `cursor`: on a narrated step, those the narrated
    /// steps before it used (stepping skips the rest); on another step (only "all events"
    /// shows those), those any earlier step used.
    pub fn introduced_before(&self, cursor: usize) -> TermSet {
        self.read_to(cursor);
        let narrated = self.narrated.binary_search(&cursor).is_ok();
        let mut set = TermSet::default();
        for (t, (n, any)) in self.scan.borrow().first.iter().enumerate() {
            if (if narrated { *n } else { *any }) < cursor {
                set.insert(t);
            }
        }
        set
    }
}

/// A term's definition, from `glossary.json`, which the loader fetches once the app has
/// started (web/loader.js, `coordlabGlossary`): `None` until it is in. A term's definition is
/// read when the reader opens it, which draws the narration again, and again when it arrives
/// ([`use_definitions`]).
fn definition(name: &str) -> Option<String> {
    let all = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("coordlabGlossary")).ok()?;
    js_sys::Reflect::get(&all, &JsValue::from_str(name))
        .ok()?
        .as_string()
}

/// Draws the narration again when the definitions arrive (the loader sends `coordlab-glossary`
/// once `glossary.json` is in): a term opened before then shows its definition at once, not
/// only at the next step.
#[hook]
pub fn use_definitions() {
    let redraw = use_force_update();
    use_effect_with((), move |_| {
        let listener = Closure::<dyn Fn()>::new(move || redraw.force_update());
        crate::listen::listen(web_sys::window(), ARRIVED, listener)
    });
}

/// The window event the loader sends when the definitions are in (web/loader.js).
const ARRIVED: &str = "coordlab-glossary";

/// What the narration's terms need to draw: which term's definition is open, a number that
/// keeps ids unique when two narrations share a page, and what a click does.
pub struct Terms<'a> {
    pub open: Option<usize>,
    pub uid: usize,
    pub toggle: &'a Callback<usize>,
}

/// `text` with the first use of each term not yet in `introduced` as a term button.
pub fn linked(text: &str, introduced: &mut TermSet, terms: &Terms) -> Html {
    let uses = first_uses(text, introduced);
    if uses.is_empty() {
        return html! { { text.to_string() } };
    }
    let mut at = 0;
    let mut parts = Vec::with_capacity(2 * uses.len() + 1);
    for u in uses {
        parts.push(html! { { text[at..u.start].to_string() } });
        parts.push(term_button(u.term, &text[u.start..u.end], terms));
        at = u.end;
    }
    parts.push(html! { { text[at..].to_string() } });
    parts.into_iter().collect::<Html>()
}

/// A term in the narration: a button, and its definition beside it (anchored to the button
/// where the browser can, else in the text flow under it).
fn term_button(t: usize, label: &str, terms: &Terms) -> Html {
    let term = &TERMS[t];
    let id = format!("term-{}-{t}", terms.uid);
    let open = terms.open == Some(t);
    html! {
        <span class="term">
            <button type="button" class="term-link" onclick={terms.toggle.reform(move |_: MouseEvent| t)}
                ~style={format!("anchor-name:--{id}")}
                aria-expanded={if open { "true" } else { "false" }} aria-controls={id.clone()}>
                { label.to_string() }
            </button>
            <span class="term-pop" ~style={format!("position-anchor:--{id}")} id={id} role="dialog"
                aria-label={term.name} hidden={!open}>
                <strong class="term-name">{ term.name }</strong>
                // Read only while open: a closed term's text is the same whether or not the
                // definitions have arrived, so a page and its permalink read alike.
                <span class="term-def">{ if open { definition(term.name).unwrap_or_default() } else { String::new() } }</span>
                <a class="term-more" href="#/glossary">{ "All terms →" }</a>
            </span>
        </span>
    }
}

thread_local! {
    static NEXT_ID: Cell<usize> = const { Cell::new(0) };
}

/// A number unique on the page, for ids.
pub fn next_uid() -> usize {
    NEXT_ID.with(|n| {
        n.set(n.get() + 1);
        n.get()
    })
}

/// The `.term` a DOM node is in, if any.
fn term_of(node: Option<web_sys::EventTarget>) -> Option<web_sys::Element> {
    node?.dyn_into::<web_sys::Element>().ok()?.closest(".term").ok()?
}

/// Escape closes an open definition, and nothing else (not presenter mode, not the help):
/// the player's keys listen on the window, and this stops the key on its way there. The
/// focus returns to the term.
pub fn on_escape(close: Callback<()>) -> Callback<KeyboardEvent> {
    Callback::from(move |e: KeyboardEvent| {
        if e.key() != "Escape" {
            return;
        }
        let Some(term) = term_of(e.target()) else { return };
        if term
            .query_selector(".term-pop:not([hidden])")
            .ok()
            .flatten()
            .is_none()
        {
            return;
        }
        e.stop_propagation();
        e.prevent_default();
        close.emit(());
        if let Some(b) = term
            .query_selector(".term-link")
            .ok()
            .flatten()
            .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = b.focus();
        }
    })
}

/// Moving the focus out of a term (its button and its definition) closes the definition.
pub fn on_focus_out(close: Callback<()>) -> Callback<FocusEvent> {
    Callback::from(move |e: FocusEvent| {
        let from = term_of(e.target());
        if from.is_some() && from != term_of(e.related_target()) {
            close.emit(());
        }
    })
}

/// `#/glossary`: every term, alphabetically, with its definition and the scenario that shows it.
#[cfg(feature = "library")]
pub fn page() -> Html {
    use coordlab_sim::scenarios;
    html! {
        <section class="glossary" aria-labelledby="glossary-title">
            <p class="back"><a href="#/">{ "← Scenario library" }</a></p>
            <h1 id="glossary-title">{ "Glossary" }</h1>
            <p class="lead">
                { "In the player, a term's first use in a run is a button: Enter or a click shows its definition, Escape closes it. Space plays the run." }
            </p>
            <dl class="terms">
                { for TERMS.iter().map(|t| {
                    let title = scenarios::find(t.scenario()).map_or(t.scenario(), |d| d.info().title);
                    let href = format!("#/play/{}", t.shows);
                    html! {
                        <div class="gloss">
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

    fn trace(id: &str) -> SameTrace {
        let request = RunRequest {
            scenario: id.into(),
            params: Default::default(),
            seed: 1,
            actions: Vec::new(),
        };
        SameTrace::new(scenarios::run(&request, Limits::default(), Recording::Lines).unwrap())
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
    fn a_run_is_read_only_as_far_as_it_is_shown() {
        let t = trace("raft-chaos");
        let firsts = FirstUses::of(&t);
        assert_eq!(
            firsts.scan.borrow().next,
            0,
            "nothing read before a step is shown"
        );
        let early = firsts.introduced_before(5);
        assert_eq!(firsts.scan.borrow().next, 5);
        // Asking about an earlier step after a later one gives the same answer as before.
        firsts.introduced_before(200);
        assert_eq!(firsts.introduced_before(5), early);
        assert_eq!(
            FirstUses::of(&t).introduced_before(200),
            firsts.introduced_before(200)
        );
    }

    #[test]
    fn a_term_first_used_off_the_narrated_path_is_still_marked_on_it() {
        // AppendEntries first shows in events without narration (stepping skips them), so the
        // narrated path introduces it later, at its first narrated use.
        let t = trace("raft-log-replication");
        let firsts = FirstUses::of(&t);
        let ae = index("AppendEntries");
        firsts.read_to(usize::MAX);
        let (n, any) = firsts.scan.borrow().first[ae];
        assert!(any < NEVER && n < NEVER, "used in the run and in its narration");
        assert!(any <= n);
        assert!(!firsts.introduced_before(n).contains(ae));
        assert!(firsts.introduced_before(n + 1).contains(ae));
    }
}
