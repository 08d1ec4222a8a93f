//! `#/choose`: four questions lead to a design and the runs that show why, then the rules of
//! thumb, each linked to a run that shows it. The table itself is data in
//! `coordlab_sim::choosing`, where a native test runs every link and checks it shows what the
//! text says; this page only renders it. Links name scenario ids; the loader fetches whichever
//! bundle holds each one.

use coordlab_sim::choosing::{recommend, Evidence, QUESTIONS, RULES};
use yew::prelude::*;

/// A link to a run that shows a piece of advice or a rule.
fn evidence_link(e: &Evidence) -> Html {
    html! { <a href={e.link()}>{ format!("{}: {} →", e.scenario, e.label) }</a> }
}

#[function_component(ChoosePage)]
pub fn choose_page() -> Html {
    let answers = use_state(|| [None::<usize>; 4]);
    let advice = recommend(*answers);
    html! {
        <section class="choose" aria-labelledby="choose-title">
            <h1 id="choose-title">{ "Choosing a design" }</h1>
            <form class="questions" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                { for QUESTIONS.iter().enumerate().map(|(q, question)| html! {
                    <fieldset>
                        <legend>{ question.text }</legend>
                        { for question.answers.iter().enumerate().map(|(i, label)| {
                            let checked = answers[q] == Some(i);
                            let answers = answers.clone();
                            let onchange = Callback::from(move |_| {
                                let mut next = *answers;
                                next[q] = Some(i);
                                answers.set(next);
                            });
                            html! {
                                <label>
                                    <input type="radio" name={question.name} {checked} {onchange} />
                                    { *label }
                                </label>
                            }
                        }) }
                    </fieldset>
                }) }
            </form>
            <div class="recommendation" aria-live="polite">
                { match advice {
                    Some(advice) => html! {
                        <>
                            <h2>{ "Recommended: " }{ advice.head }</h2>
                            <p>{ advice.why }</p>
                            <ul class="evidence">
                                { for advice.evidence.iter().map(|e| html! { <li>{ evidence_link(e) }</li> }) }
                            </ul>
                        </>
                    },
                    None => html! { <p>{ "Answer the questions above to see a recommendation." }</p> },
                } }
            </div>
            <h2>{ "Rules that keep it working" }</h2>
            <ul class="rules">
                { for RULES.iter().map(|rule| html! {
                    <li><label><input type="checkbox" />{ rule.text }</label>{ " " }{ evidence_link(&rule.evidence) }</li>
                }) }
                <li><label><input type="checkbox" />{ "Consensus is for small metadata, not volume: every write goes through one leader, so split volume over many groups." }</label>{ " " }
                <a href="#/experiment/consensus-throughput">{ "the throughput chart" }</a></li>
            </ul>
        </section>
    }
}
