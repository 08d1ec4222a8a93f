//! One multiple-choice question: pick an answer, see whether it was right and why. Used by the
//! course in the player; the lessons' questions share it (same name and props).

use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct QuestionProps {
    /// Distinguishes the question (and its heading) from others on the page.
    pub id: String,
    pub prompt: String,
    pub answers: Vec<String>,
    /// The index of the right answer in `answers`.
    pub correct: usize,
    /// One sentence, shown once an answer is picked.
    pub why: String,
    /// Called with the index of the picked answer, once.
    #[prop_or_default]
    pub on_answered: Callback<usize>,
}

#[function_component(Question)]
pub fn question(props: &QuestionProps) -> Html {
    let picked = use_state(|| None::<usize>);
    let prompt_id = format!("{}-prompt", props.id);
    html! {
        <div class="question" role="group" aria-labelledby={prompt_id.clone()} data-question={props.id.clone()}>
            <p class="prompt" id={prompt_id}>{ &props.prompt }</p>
            <div class="answers">
                { for props.answers.iter().enumerate().map(|(k, answer)| {
                    let state = match *picked {
                        Some(_) if k == props.correct => Some("right"),
                        Some(p) if p == k => Some("wrong"),
                        _ => None,
                    };
                    let onclick = {
                        let (picked, on_answered) = (picked.clone(), props.on_answered.clone());
                        Callback::from(move |_| {
                            picked.set(Some(k));
                            on_answered.emit(k);
                        })
                    };
                    html! {
                        <button class={classes!("answer", state)} disabled={picked.is_some()} {onclick}>
                            { answer }
                            { match state { Some("right") => " ✓", Some(_) => " ✗", None => "" } }
                        </button>
                    }
                }) }
            </div>
            if let Some(p) = *picked {
                <p class="why" role="status">
                    { if p == props.correct { "Right. " } else { "Not quite. " } }{ &props.why }
                </p>
            }
        </div>
    }
}
