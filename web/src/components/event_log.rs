//! The event log. It draws only the rows in view (a run can hold thousands of events), is one
//! stop for Tab (↑ ↓ inside it move through the run, Tab leaves it), and by default lists the
//! narrated events with the quiet ones between them folded into one line ("14 quiet events:
//! heartbeat term 2 ×10, append ok ×4"); "All events" lists every one.

use crate::nav::Nav;
use crate::same_trace::SameTrace;
use crate::state::{Action, Player};
use coordlab_sim::kernel::time::format_instant;
use coordlab_sim::trace::{EventKind, Trace};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, KeyboardEvent};
use yew::prelude::*;

/// Height of one row in CSS pixels (the stylesheet gives `.log-row` the same).
const ROW_PX: i32 = 30;
/// Rows drawn beyond the visible ones, above and below.
const SPARE_ROWS: i32 = 8;
/// Height of the list's window.
const VIEW_PX: i32 = 360;

#[derive(Clone, Debug, PartialEq)]
enum Row {
    /// An event, by step.
    Event(usize),
    /// Quiet events `from..=to` folded into one line, with a summary of what they were.
    Fold { from: usize, to: usize, summary: String },
}

/// A label's gist for a fold summary: up to the first parenthesis or colon.
fn gist(label: &str) -> &str {
    label.split(['(', ':', ',']).next().unwrap_or(label).trim()
}

fn fold_summary(trace: &Trace, from: usize, to: usize) -> String {
    let mut counts: Vec<(String, u32)> = Vec::new();
    for e in &trace.entries[from..=to] {
        let what = e
            .message
            .as_ref()
            .map_or(e.text.as_str(), |m| gist(&m.label))
            .to_string();
        match counts.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => counts.push((what, 1)),
        }
    }
    coordlab_sim::kernel::collections::sort_by_key(&mut counts, |(_, n)| std::cmp::Reverse(*n));
    let top: Vec<String> = counts.iter().take(3).map(|(w, n)| format!("{w} ×{n}")).collect();
    let n = to - from + 1;
    format!(
        "{n} quiet event{}: {}{}",
        if n == 1 { "" } else { "s" },
        top.join(", "),
        if counts.len() > 3 { ", …" } else { "" }
    )
}

fn rows(trace: &Trace, nav: &Nav, all_events: bool) -> Vec<Row> {
    if all_events {
        return (0..trace.entries.len()).map(Row::Event).collect();
    }
    let mut out = Vec::new();
    let mut prev: Option<usize> = None;
    for &s in &nav.narrated {
        let gap_from = prev.map_or(0, |q| q + 1);
        if s > gap_from {
            out.push(Row::Fold {
                from: gap_from,
                to: s - 1,
                summary: fold_summary(trace, gap_from, s - 1),
            });
        }
        out.push(Row::Event(s));
        prev = Some(s);
    }
    out
}

/// What the log shows, rather than the whole player: comparing these is all it takes to know
/// whether the log must be drawn again (and a deep comparison of the player, which nothing
/// else needs, stays out of the bundle).
#[derive(Properties, PartialEq)]
pub struct EventLogProps {
    pub trace: SameTrace,
    /// Made with the trace: a new trace comes with a new one.
    pub nav: Rc<Nav>,
    pub cursor: usize,
    pub all_events: bool,
    pub dispatch: UseReducerDispatcher<Player>,
}

#[function_component(EventLog)]
pub fn event_log(props: &EventLogProps) -> Html {
    let p = props;
    let view_ref = use_node_ref();
    let scroll = use_state(|| 0i32);
    let rows = use_memo((p.trace.clone(), p.all_events), {
        let nav = p.nav.clone();
        move |(trace, all_events)| rows(trace, &nav, *all_events)
    });
    // The row of the step on screen (a quiet step is inside a fold).
    let current_row = rows
        .iter()
        .position(|r| match r {
            Row::Event(s) => *s == p.cursor,
            Row::Fold { from, to, .. } => (*from..=*to).contains(&p.cursor),
        })
        .unwrap_or(0) as i32;
    // Keep the current row in view when the cursor moves. Where the list is scrolled to is
    // known (`scroll` follows every scroll event): reading `scrollTop` here would make the
    // browser lay out the page in the middle of every step.
    {
        let view_ref = view_ref.clone();
        let scroll = scroll.clone();
        use_effect_with(current_row, move |row| {
            if let Some(view) = view_ref.cast::<HtmlElement>() {
                let top = row * ROW_PX;
                let shown = *scroll;
                if top < shown || top + ROW_PX > shown + VIEW_PX {
                    let target = (top - VIEW_PX / 2).max(0);
                    view.set_scroll_top(target);
                    scroll.set(target);
                }
            }
        });
    }
    let on_scroll = {
        let scroll = scroll.clone();
        Callback::from(move |e: Event| scroll.set(e.target_unchecked_into::<Element>().scroll_top()))
    };
    let seek_to_row = {
        let d = props.dispatch.clone();
        let rows = rows.clone();
        move |i: usize| match rows.get(i) {
            Some(Row::Event(s)) => d.dispatch(Action::Seek(*s)),
            Some(Row::Fold { from, .. }) => d.dispatch(Action::Seek(*from)),
            None => {}
        }
    };
    let on_click = {
        let seek = seek_to_row.clone();
        Callback::from(move |e: MouseEvent| {
            let row = e
                .target()
                .and_then(|t| t.dyn_into::<Element>().ok())
                .and_then(|t| t.closest("[data-row]").ok().flatten())
                .and_then(|r| r.get_attribute("data-row"))
                .and_then(|r| r.parse::<usize>().ok());
            if let Some(i) = row {
                seek(i);
            }
        })
    };
    let on_key = {
        let seek = seek_to_row;
        let count = rows.len();
        Callback::from(move |e: KeyboardEvent| {
            let row = current_row as usize;
            let to = match e.key().as_str() {
                "ArrowDown" => Some((row + 1).min(count.saturating_sub(1))),
                "ArrowUp" => Some(row.saturating_sub(1)),
                _ => None,
            };
            if let Some(i) = to {
                e.prevent_default();
                seek(i);
            }
        })
    };
    let first = (*scroll / ROW_PX - SPARE_ROWS).max(0) as usize;
    let shown = (VIEW_PX / ROW_PX + 2 * SPARE_ROWS) as usize;
    let visible = rows.iter().enumerate().skip(first).take(shown).map(|(i, row)| {
        let style = format!("top: {}px", i as i32 * ROW_PX);
        match row {
            Row::Event(s) => {
                let e = &p.trace.entries[*s];
                let current = *s == p.cursor;
                let class = super::class_list(
                    "log-row",
                    &[
                        ("current", current),
                        ("future", *s > p.cursor),
                        ("violation", !e.violations.is_empty()),
                        ("fault", e.kind == EventKind::Fault),
                        ("beat", p.nav.is_beat(*s)),
                    ],
                );
                html! {
                    <div key={format!("e{s}")} id={format!("log-row-{i}")} class={class} ~style={style}
                        role="option" aria-selected={if current { "true" } else { "false" }} data-row={i.to_string()}>
                        <span class="seq">{ e.seq }</span>
                        <span class="time">{ format_instant(e.time_us) }</span>
                        <span class="text">{ &e.text }</span>
                    </div>
                }
            }
            Row::Fold { from, to, summary } => {
                let current = (*from..=*to).contains(&p.cursor);
                html! {
                    <div key={format!("f{from}")} id={format!("log-row-{i}")} class={super::class_list("log-row fold", &[("current", current)])}
                        ~style={style} role="option" aria-selected={if current { "true" } else { "false" }} data-row={i.to_string()}>
                        <span class="seq">{ format!("{from}–{to}") }</span>
                        <span class="text">{ summary }</span>
                    </div>
                }
            }
        }
    });
    html! {
        <section class="event-log" aria-labelledby="log-title">
            <h2 id="log-title">{ if p.all_events { "Every event" } else { "Narrated events" } }</h2>
            <div class="log-view" ref={view_ref} tabindex="0" role="listbox" aria-labelledby="log-title"
                aria-activedescendant={format!("log-row-{current_row}")}
                onscroll={on_scroll} onclick={on_click} onkeydown={on_key}>
                <div class="log-rows" ~style={format!("height: {}px", rows.len() as i32 * ROW_PX)}>
                    { for visible }
                </div>
            </div>
            <p class="hint">{ "↑ ↓ move through the run here; Tab leaves the list." }</p>
        </section>
    }
}
