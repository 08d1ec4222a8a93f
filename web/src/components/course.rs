//! The course around a scenario in the player: where it sits in its chapter, the chapter's
//! introduction at its first scenario, what this run teaches, its question, the chapter's rules
//! at its last scenario, and Previous / Next in the course. It also records the beats the
//! learner reaches and the question answered (see `progress`).

use super::question::Question;
use crate::progress;
use coordlab_sim::scenarios::{self, CHAPTERS, CHAPTER_NOTES};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct CourseProps {
    pub id: &'static str,
    /// The beat the run has reached (at or before the cursor), if any.
    pub beat: Option<usize>,
    pub beats: usize,
}

#[function_component(CoursePanel)]
pub fn course_panel(props: &CourseProps) -> Html {
    {
        let id = props.id;
        use_effect_with((props.beat, props.beats), move |(beat, beats)| {
            if let Some(beat) = *beat {
                progress::update(|p| p.see_beat(id, beat, *beats));
            }
        });
    }
    let Ok(def) = scenarios::find(props.id) else {
        return Html::default();
    };
    let (Some(notes), Some(chapter), Some(about)) = (
        def.course,
        CHAPTERS.iter().find(|c| c.number == def.chapter),
        CHAPTER_NOTES.iter().find(|c| c.number == def.chapter),
    ) else {
        return Html::default();
    };
    let in_chapter: Vec<&str> = scenarios::course()
        .iter()
        .filter(|d| d.chapter == def.chapter)
        .map(|d| d.id)
        .collect();
    let at = in_chapter.iter().position(|id| *id == def.id).unwrap_or(0);
    let (previous, next) = scenarios::course_neighbours(def.id);
    let link = |d: &scenarios::ScenarioDef| format!("#/play/{}", d.id);
    let q = notes.question;
    let on_answered = {
        let id = props.id;
        Callback::from(move |_| progress::update(|p| p.answer(id)))
    };
    html! {
        <section class="course" aria-labelledby="course-title">
            <h2 id="course-title">
                <span class="chapter-number">{ format!("Course · chapter {} · {} of {}", chapter.number, at + 1, in_chapter.len()) }</span>
                { chapter.title }
            </h2>
            if at == 0 {
                <p class="chapter-intro">{ about.intro }</p>
            }
            <h3>{ "What this run teaches" }</h3>
            <ul class="objectives">{ for notes.objectives.iter().map(|o| html! { <li>{ *o }</li> }) }</ul>
            <Question id={format!("course-{}", def.id)} prompt={q.prompt} answers={q.answers.iter().map(|a| a.to_string()).collect::<Vec<_>>()}
                correct={q.correct} why={q.why} {on_answered} />
            if at + 1 == in_chapter.len() {
                <div class="chapter-rules">
                    <h3>{ format!("What chapter {} taught", chapter.number) }</h3>
                    <ul>{ for about.rules.iter().map(|r| html! { <li>{ *r }</li> }) }</ul>
                    <p><a href="#/choose">{ "Every rule, on the choosing page's checklist →" }</a></p>
                </div>
            }
            <nav class="course-nav" aria-label="Course">
                if let Some(d) = previous {
                    <a class="course-previous" rel="prev" href={link(d)}>{ "← Previous" }</a>
                }
                if let Some(d) = next {
                    <a class="course-next" rel="next" href={link(d)}>{ "Next in the course →" }</a>
                } else {
                    <a class="course-next" href="#/">{ "The course is done: back to the library" }</a>
                }
            </nav>
        </section>
    }
}
