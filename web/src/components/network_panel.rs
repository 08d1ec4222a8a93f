//! Network controls: partition by choosing a group, cut or hold one direction of a link, heal,
//! and act on a message in flight (drop it, hold its link, release a held link). Like every
//! fault, each click forks the run right after the step on screen.

use super::fault_button::{fault_button, on_fault_click};
use crate::same_trace::SameTrace;
use crate::state::Player;
use coordlab_sim::kernel::collections::VecSet;
use coordlab_sim::kernel::faults::FaultKind;
use coordlab_sim::kernel::time::format_instant;
use coordlab_sim::trace::{NodeInfo, Trace};
use coordlab_sim::{Fault, NodeId};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct NetworkPanelProps {
    pub trace: SameTrace,
    pub snapshot: crate::same_trace::SameState,
    pub dispatch: UseReducerDispatcher<Player>,
}

/// Whether the scenario lets the user touch the network at all.
pub fn offers_network(trace: &Trace) -> bool {
    trace.nodes.iter().any(|n| n.faults.contains(&FaultKind::Network))
}

/// A `<select>` of nodes, reporting the chosen node id.
fn node_select(label: &str, nodes: &[&NodeInfo], value: u32, state: UseStateHandle<u32>) -> Html {
    let onchange = Callback::from(move |e: Event| {
        let v = e.target_unchecked_into::<HtmlSelectElement>().value();
        if let Ok(id) = v.parse::<u32>() {
            state.set(id);
        }
    });
    html! {
        <label>
            { format!("{label} ") }
            <select {onchange} name={label.to_ascii_lowercase()}>
                { for nodes.iter().map(|n| html! {
                    <option value={n.id.0.to_string()} selected={n.id.0 == value}>{ &n.name }</option>
                }) }
            </select>
        </label>
    }
}

#[function_component(NetworkPanel)]
pub fn network_panel(props: &NetworkPanelProps) -> Html {
    let trace = &props.trace;
    let snap = &props.snapshot;
    let nodes: Vec<&NodeInfo> = trace
        .nodes
        .iter()
        .filter(|n| n.faults.contains(&FaultKind::Network))
        .collect();
    // A `VecSet`, not a `BTreeSet`: nothing else in a player bundle makes a `BTreeSet<u32>`,
    // whose code would be here for this alone.
    let group = use_state(VecSet::<u32>::new);
    let first = nodes.first().map_or(0, |n| n.id.0);
    let second = nodes.get(1).map_or(first, |n| n.id.0);
    let cut_from = use_state(|| first);
    let cut_to = use_state(|| second);
    let name = |id: NodeId| trace.node_name(id).to_string();

    // Partition by groups.
    let toggles = nodes.iter().map(|n| {
        let id = n.id.0;
        let checked = group.contains(&id);
        let group = group.clone();
        let onchange = Callback::from(move |e: Event| {
            let on = e.target_unchecked_into::<HtmlInputElement>().checked();
            let mut next = (*group).clone();
            if on {
                next.insert(id);
            } else {
                next.remove(&id);
            }
            group.set(next);
        });
        html! {
            <label class="node-check">
                <input type="checkbox" {checked} {onchange} />
                { &n.name }
            </label>
        }
    });
    // Choices may name nodes a smaller cluster no longer has (after a parameter change).
    let known = |id: u32| nodes.iter().any(|n| n.id.0 == id);
    let side: Vec<NodeId> = group.iter().filter(|i| known(**i)).map(|i| NodeId(*i)).collect();
    let side_names: Vec<String> = side.iter().map(|id| name(*id)).collect();
    let can_split = !side.is_empty() && side.len() < trace.nodes.len();
    let partition_label = if side.is_empty() {
        String::new()
    } else {
        format!("({})", side_names.join(", "))
    };

    // One direction of one link.
    let from = NodeId(if known(*cut_from) { *cut_from } else { first });
    let to = NodeId(if known(*cut_to) { *cut_to } else { second });
    let link = snap.links.iter().find(|l| l.from == from && l.to == to);
    let already_cut = link.is_some_and(|l| l.cut);
    let already_held = link.is_some_and(|l| l.held);
    let same = from == to;

    // Links not working normally, each held one with a Release button.
    let any_cut = snap.links.iter().any(|l| l.cut);
    let cut_only = snap.links.iter().filter(|l| l.cut && !l.held).count();
    // A partition cuts many links at once: list them folded, but keep held links (which
    // have a Release button) in view.
    let fold = cut_only > 4;
    let listed = |folded: bool| {
        snap.links
            .iter()
            .filter(move |l| !fold || (l.cut && !l.held) == folded)
    };
    let broken = |folded: bool| {
        listed(folded).map(|l| {
            let waiting = snap
                .messages
                .iter()
                .filter(|m| m.from == l.from && m.to == l.to && m.deliver_us.is_none())
                .count();
            let state = match (l.cut, l.held) {
                (true, true) => format!("cut, and holding {waiting} message(s)"),
                (true, false) => "cut: messages are lost".to_string(),
                _ => format!("held: {waiting} message(s) waiting"),
            };
            html! {
                <li>
                    <span class="link-name">{ format!("{} → {}", name(l.from), name(l.to)) }</span>
                    <span>{ format!(" {state} ") }</span>
                    if l.held {
                        { fault_button(&Fault::ReleaseLink { from: l.from, to: l.to }, "Release",
                            &format!("the held link {} to {}", name(l.from), name(l.to)), false) }
                    }
                </li>
            }
        })
    };

    // Messages in flight, oldest first.
    let messages = snap.messages.iter().map(|m| {
        let (f, t) = (name(m.from), name(m.to));
        let held_link = snap.links.iter().any(|l| l.from == m.from && l.to == m.to && l.held);
        let when = match m.deliver_us {
            Some(at) => format!("arrives at t = {}", format_instant(at)),
            None => "held until released".to_string(),
        };
        html! {
            <li key={m.id.0.to_string()} data-msg={m.id.0.to_string()} class={m.deliver_us.is_none().then_some("held")}>
                <span class="msg-id">{ m.id.to_string() }</span>
                <span class="msg-route">{ format!("{f} → {t}") }</span>
                <span class="msg-label">{ &m.label }</span>
                <span class="msg-when">{ when }</span>
                <span class="msg-actions">
                    { fault_button(&Fault::DropMessage { msg: m.id }, "Drop", &format!("message {} from {f} to {t}: {}", m.id, m.label), false) }
                    if m.deliver_us.is_none() {
                        { fault_button(&Fault::ReleaseLink { from: m.from, to: m.to }, "Release",
                            &format!("message {} and everything held from {f} to {t}", m.id), false) }
                    } else {
                        { fault_button(&Fault::HoldMessage { msg: m.id }, "Hold",
                            &format!("message {} from {f} to {t} where it is: {}", m.id, m.label), false) }
                        { fault_button(&Fault::HoldLink { from: m.from, to: m.to }, "Hold link",
                            &format!("{f} to {t}: later messages on it wait"), held_link) }
                    }
                </span>
            </li>
        }
    });

    html! {
        <section class="network" aria-labelledby="network-title" onclick={on_fault_click(&props.dispatch)}>
            <h2 id="network-title">{ "Network: cut, hold or heal after this step" }</h2>
            <div class="net-row">
                <fieldset class="partition">
                    <legend>{ "Partition by groups" }</legend>
                    <div class="node-checks">{ for toggles }</div>
                    { fault_button(&Fault::Partition { side: side.clone() }, "✂ Partition these from the rest", &partition_label, !can_split) }
                    if !can_split {
                        <span class="hint">{ " Tick one side of the split (not every node)." }</span>
                    }
                </fieldset>
                <fieldset class="one-link">
                    <legend>{ "One direction of one link" }</legend>
                    { node_select("From", &nodes, from.0, cut_from.clone()) }
                    { node_select("To", &nodes, to.0, cut_to.clone()) }
                    <div class="link-buttons">
                        { fault_button(&Fault::CutLink { from, to }, &format!("✂ Cut {}→{}", name(from), name(to)), "one way", same || already_cut) }
                        { fault_button(&Fault::HoldLink { from, to }, &format!("‖ Hold {}→{}", name(from), name(to)), "", same || already_held) }
                    </div>
                    if same {
                        <span class="hint">{ "Choose two different nodes." }</span>
                    }
                </fieldset>
            </div>
            <div class="links-now">
                { fault_button(&Fault::Heal, "Heal all cut links", "", !any_cut) }
                if snap.links.is_empty() {
                    <span class="hint">{ " Every link works normally." }</span>
                } else {
                    <ul class="broken-links" aria-label="Links not working normally">{ for broken(false) }</ul>
                    if fold {
                        <details class="cut-links">
                            <summary>{ format!("{cut_only} one-way links cut: messages on them are lost") }</summary>
                            <ul class="broken-links">{ for broken(true) }</ul>
                        </details>
                    }
                }
            </div>
            <h3>{ format!("Messages in flight ({})", snap.messages.len()) }</h3>
            if snap.messages.is_empty() {
                <p class="hint">{ "Nothing is on the wire at this step." }</p>
            } else {
                <p class="hint">{ "Hold stops that one message where it is until you release it; Hold link also keeps everything sent on the link from now on." }</p>
                <ul class="in-flight">{ for messages }</ul>
            }
        </section>
    }
}
