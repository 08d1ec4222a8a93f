//! Fault controls: crash, restart or pause a participant right after the step on screen, or
//! send it one of the inputs it offers (e.g. force a Raft election timeout).
//! Each click forks the run — the steps before stay, the rest is simulated again.

use crate::state::{Action, Player};
use coordlab_sim::kernel::faults::{Action as ScriptAction, FaultKind, MAX_FAULT_MS};
use coordlab_sim::trace::{NodeStatus, Snapshot, Trace};
use coordlab_sim::Fault;
use std::rc::Rc;
use web_sys::HtmlInputElement;
use yew::prelude::*;

const DEFAULT_PAUSE_MS: u64 = 100;

#[derive(Properties, PartialEq)]
pub struct FaultPanelProps {
    pub trace: Rc<Trace>,
    pub snapshot: Rc<Snapshot>,
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
    let inject = |fault: Fault| {
        let d = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(Action::Inject(fault.clone())))
    };
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
                    <button onclick={inject(Fault::Crash { node: n.id })} disabled={crashed}
                        aria-label={format!("Crash {}", n.name)}>{ "Crash" }</button>
                }
                if allows(FaultKind::Restart) {
                    <button onclick={inject(Fault::Restart { node: n.id })} disabled={!crashed}
                        aria-label={format!("Restart {}", n.name)}>{ "Restart" }</button>
                }
                if allows(FaultKind::Pause) {
                    <button onclick={inject(Fault::Pause { node: n.id, duration_ms: pause_value.unwrap_or(DEFAULT_PAUSE_MS) })}
                        disabled={crashed || pause_value.is_none()}
                        aria-label={format!("Pause {} for {} ms", n.name, pause_value.unwrap_or(DEFAULT_PAUSE_MS))}>
                        { format!("Pause {} ms", pause_value.unwrap_or(DEFAULT_PAUSE_MS)) }
                    </button>
                }
                if allows(FaultKind::Network) {
                    <button onclick={inject(Fault::SlowNode { node: n.id, extra_ms: pause_value.unwrap_or(DEFAULT_PAUSE_MS) })}
                        disabled={crashed || pause_value.is_none()}
                        aria-label={format!("Slow {}'s replies by {} ms", n.name, pause_value.unwrap_or(DEFAULT_PAUSE_MS))}>
                        { format!("Slow +{} ms", pause_value.unwrap_or(DEFAULT_PAUSE_MS)) }
                    </button>
                    <button onclick={inject(Fault::SlowNode { node: n.id, extra_ms: 0 })} disabled={crashed}
                        aria-label={format!("{} at normal speed", n.name)}>{ "Normal speed" }</button>
                }
                if allows(FaultKind::Input) {
                    // Only the inputs the node takes in its state now (none while it is down).
                    { for view.inputs.iter().map(|input| html! {
                        <button class="input" onclick={inject(Fault::Input { node: n.id, input: input.code.clone() })}
                            aria-label={format!("{} ({})", input.label, n.name)}>{ &input.label }</button>
                    }) }
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
                <button class="remove" onclick={Callback::from(move |_| d.dispatch(Action::RemoveFault(i)))}
                    aria-label={format!("Remove fault {}", i + 1)}>{ "Remove" }</button>
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
                { "Duration for pause / slow-down (ms) " }
                <input type="number" min="1" max={MAX_FAULT_MS.to_string()} value={(*pause_ms).clone()} oninput={on_pause_input} />
            </label>
            if pause_value.is_none() {
                <span class="field-error" role="alert">{ format!("Pause length must be a whole number from 1 to {MAX_FAULT_MS} ms.") }</span>
            }
            <ul class="fault-nodes">{ for rows }</ul>
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
