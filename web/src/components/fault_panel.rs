//! Fault controls: crash, restart or pause a participant right after the step on screen, step
//! its clock (an NTP correction, a VM moved to another host), or send it one of the inputs it
//! offers (e.g. force a Raft election timeout).
//! Each click forks the run — the steps before stay, the rest is simulated again.

use super::fault_button::{fault_button, on_fault_click};
use crate::same_trace::SameTrace;
use crate::state::{Action, Player};
use coordlab_sim::kernel::faults::{Action as ScriptAction, FaultKind, MAX_FAULT_MS};
use coordlab_sim::trace::NodeStatus;
use coordlab_sim::Fault;
use web_sys::HtmlInputElement;
use yew::prelude::*;

const DEFAULT_PAUSE_MS: u64 = 100;

#[derive(Properties, PartialEq)]
pub struct FaultPanelProps {
    pub trace: SameTrace,
    pub snapshot: crate::same_trace::SameState,
    pub actions: Vec<ScriptAction>,
    pub dispatch: UseReducerDispatcher<Player>,
}

#[function_component(FaultPanel)]
pub fn fault_panel(props: &FaultPanelProps) -> Html {
    let pause_ms = use_state(|| DEFAULT_PAUSE_MS.to_string());
    let pause_value: Option<u64> = pause_ms.parse().ok().filter(|v| (1..=MAX_FAULT_MS).contains(v));
    let on_pause_input = {
        let pause_ms = pause_ms.clone();
        Callback::from(move |e: InputEvent| {
            pause_ms.set(e.target_unchecked_into::<HtmlInputElement>().value())
        })
    };
    let ms = pause_value.unwrap_or(DEFAULT_PAUSE_MS);
    let rows = props.trace.nodes.iter().filter(|n| !n.faults.is_empty()).map(|n| {
        let view = &props.snapshot.nodes[n.id.index()];
        let status = view.status;
        let crashed = status == NodeStatus::Crashed;
        let allows = |k: FaultKind| n.faults.contains(&k);
        html! {
            <li data-node={n.name.clone()}>
                <span class="fault-node">{ &n.name }</span>
                // Buttons wrap under each other, never under the next node's name.
                <span class="fault-buttons">
                if allows(FaultKind::Crash) {
                    { fault_button(&Fault::Crash { node: n.id }, "Crash", &n.name, crashed) }
                }
                if allows(FaultKind::Restart) {
                    { fault_button(&Fault::Restart { node: n.id }, "Restart", &n.name, !crashed) }
                }
                if allows(FaultKind::Pause) {
                    { fault_button(&Fault::Pause { node: n.id, duration_ms: ms }, &format!("Pause {ms} ms"),
                        &format!("({})", n.name), crashed || pause_value.is_none()) }
                }
                if allows(FaultKind::Network) {
                    { fault_button(&Fault::SlowNode { node: n.id, extra_ms: ms }, &format!("Slow +{ms} ms"),
                        &format!("({}'s replies)", n.name), crashed || pause_value.is_none()) }
                    { fault_button(&Fault::SlowNode { node: n.id, extra_ms: 0 }, "Normal speed", &format!("({})", n.name), crashed) }
                }
                if allows(FaultKind::Clock) {
                    { fault_button(&Fault::ClockJump { node: n.id, delta_ms: -(ms as i64) }, &format!("Clock −{ms} ms"),
                        &format!("({}'s clock steps back)", n.name), crashed || pause_value.is_none()) }
                    { fault_button(&Fault::ClockJump { node: n.id, delta_ms: ms as i64 }, &format!("Clock +{ms} ms"),
                        &format!("({}'s clock steps forward)", n.name), crashed || pause_value.is_none()) }
                }
                if allows(FaultKind::Input) {
                    // Only the inputs the node takes in its state now (none while it is down).
                    { for view.inputs.iter().map(|input| fault_button(
                        &Fault::Input { node: n.id, input: input.code.clone() }, &input.label, &format!("({})", n.name), false)) }
                }
                </span>
            </li>
        }
    });
    let offers_input = props
        .trace
        .nodes
        .iter()
        .any(|n| n.faults.contains(&FaultKind::Input));
    let names = |id: coordlab_sim::NodeId| props.trace.node_name(id).to_string();
    let script = props.actions.iter().enumerate().map(|(i, a)| {
        let d = props.dispatch.clone();
        html! {
            <li>
                { format!("after step {}: {}", a.at_step.saturating_sub(1), a.fault.describe(&names)) }
                if props.trace.unapplied_actions.contains(a) {
                    <em class="never-ran">{ " — never reached: the run ended first" }</em>
                }
                if let Some(r) = props.trace.refused_actions.iter().find(|r| r.action == *a) {
                    <em class="never-ran">{ format!(" — no effect: {}", r.reason) }</em>
                }
                <button class="remove" onclick={Callback::from(move |_| d.dispatch(Action::RemoveFault(i)))}>
                    { "Remove" }<span class="visually-hidden">{ format!(" fault {}", i + 1) }</span>
                </button>
            </li>
        }
    });
    let clear = {
        let d = props.dispatch.clone();
        Callback::from(move |_| d.dispatch(Action::ClearFaults))
    };
    html! {
        <section class="faults" aria-labelledby="faults-title">
            <h2 id="faults-title">{ if offers_input { "Inject a fault or send an input after this step" } else { "Inject a fault after this step" } }</h2>
            <label class="pause-length">
                { "Duration for pause / slow-down / clock step (ms) " }
                <input type="number" min="1" max={MAX_FAULT_MS.to_string()} value={(*pause_ms).clone()} oninput={on_pause_input} />
            </label>
            if pause_value.is_none() {
                <span class="field-error" role="alert">{ format!("The duration must be a whole number from 1 to {MAX_FAULT_MS} ms.") }</span>
            }
            <ul class="fault-nodes" onclick={on_fault_click(&props.dispatch)}>{ for rows }</ul>
            if !props.actions.is_empty() {
                <div class="script">
                    <h3>{ "Your faults" }</h3>
                    <ol>{ for script }</ol>
                    <button onclick={clear}>{ "Remove all faults" }</button>
                </div>
            }
        </section>
    }
}
