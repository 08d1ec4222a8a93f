//! The run's inputs: the scenario's parameters and the seed. Changing one simulates again.

use crate::state::{Action, Player};
use coordlab_sim::scenarios::{ParamKind, Params, ScenarioInfo};
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// The run's inputs rather than the whole player: comparing these is all it takes to know
/// whether the settings must be drawn again (and a deep comparison of the player, which
/// nothing else needs, stays out of the bundle).
#[derive(Properties)]
pub struct RunSettingsProps {
    pub info: Rc<ScenarioInfo>,
    pub params: Params,
    pub seed: u64,
    pub dispatch: UseReducerDispatcher<Player>,
}

impl PartialEq for RunSettingsProps {
    fn eq(&self, other: &Self) -> bool {
        // A scenario's description is made from its id alone (`ScenarioDef::info`), so equal
        // ids are equal descriptions: no field-by-field comparison of its parameters' texts.
        self.info.id == other.info.id
            && self.params == other.params
            && self.seed == other.seed
            && self.dispatch == other.dispatch
    }
}

#[function_component(RunSettings)]
pub fn run_settings(props: &RunSettingsProps) -> Html {
    let p = props;
    let d = &props.dispatch;
    let seed_error = use_state(|| None::<String>);
    let on_seed = {
        let d = d.clone();
        let seed_error = seed_error.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value();
            match crate::route::parse_seed(&v) {
                Ok(seed) => {
                    seed_error.set(None);
                    d.dispatch(Action::SetSeed(seed));
                }
                Err(message) => seed_error.set(Some(message)),
            }
        })
    };
    let next_seed = {
        let d = d.clone();
        let seed = p.seed;
        Callback::from(move |_: MouseEvent| d.dispatch(Action::SetSeed(seed.wrapping_add(1))))
    };
    html! {
        <div class="settings" role="group" aria-label="Run settings">
            { for p.info.params.iter().map(|spec| {
                let key = spec.key.to_string();
                let d = d.clone();
                let current = p.params.get(spec.key).cloned().unwrap_or_default();
                let control = match &spec.kind {
                    ParamKind::Choice { options } => {
                        let onchange = Callback::from(move |e: Event| {
                            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
                            d.dispatch(Action::SetParam(key.clone(), v));
                        });
                        html! {
                            <select name={spec.key} onchange={onchange}>
                                { for options.iter().map(|o| html! {
                                    <option value={o.value} selected={o.value == current}>{ o.label }</option>
                                }) }
                            </select>
                        }
                    }
                    ParamKind::Int { min, max, .. } => {
                        let onchange = Callback::from(move |e: Event| {
                            let v = e.target_unchecked_into::<HtmlInputElement>().value();
                            d.dispatch(Action::SetParam(key.clone(), v));
                        });
                        html! { <input type="number" name={spec.key} min={min.to_string()} max={max.to_string()} value={current} onchange={onchange} /> }
                    }
                };
                let unit = match &spec.kind {
                    ParamKind::Int { unit, .. } if !unit.is_empty() => format!(" ({unit})"),
                    _ => String::new(),
                };
                html! {
                    <label class="setting">
                        <span class="setting-name">{ format!("{}{unit}", spec.label) }</span>
                        { control }
                        <span class="setting-help">{ spec.help }</span>
                    </label>
                }
            }) }
            <label class="setting">
                <span class="setting-name">{ "Seed" }</span>
                <input class="seed" type="text" inputmode="numeric" name="seed" value={p.seed.to_string()} onchange={on_seed} />
                <span class="setting-help">{ "Decides every latency and delay: same seed, same run." }</span>
            </label>
            <button onclick={next_seed}>{ "Next seed" }</button>
            if let Some(err) = (*seed_error).clone() {
                <span class="field-error" role="alert">{ err }</span>
            }
        </div>
    }
}
