//! The course: one path through every scenario in chapter order, and each scenario's notes
//! (objectives and a question) complete and well formed.

use coordlab_sim::scenarios::{course, course_neighbours, registry, CHAPTERS, CHAPTER_NOTES};

#[test]
fn the_course_visits_every_scenario_once_in_chapter_order() {
    let order = course();
    assert_eq!(order.len(), registry().len());
    let chapters: Vec<u8> = order.iter().map(|d| d.chapter).collect();
    let mut sorted = chapters.clone();
    sorted.sort();
    assert_eq!(chapters, sorted);
    assert_eq!(
        order[0].id, "lost-update",
        "the library's Start here opens the first scenario"
    );
    let numbers: Vec<u8> = CHAPTERS.iter().map(|c| c.number).collect();
    assert!(chapters.iter().all(|c| numbers.contains(c)));
}

#[test]
fn a_scenario_s_chapter_is_the_one_its_info_names() {
    for def in registry() {
        assert_eq!(def.chapter, def.info().chapter, "{}", def.id);
    }
}

#[test]
fn neighbours_link_the_course_both_ways_and_stop_at_its_ends() {
    let order = course();
    assert_eq!(course_neighbours(order[0].id).0.map(|d| d.id), None);
    assert_eq!(course_neighbours(order[order.len() - 1].id).1.map(|d| d.id), None);
    for pair in order.windows(2) {
        assert_eq!(course_neighbours(pair[0].id).1.map(|d| d.id), Some(pair[1].id));
        assert_eq!(course_neighbours(pair[1].id).0.map(|d| d.id), Some(pair[0].id));
    }
    let (before, after) = course_neighbours("no-such-scenario");
    assert!(before.is_none() && after.is_none());
}

#[test]
fn every_scenario_states_two_or_three_objectives_and_asks_one_answerable_question() {
    for def in registry() {
        let notes = def
            .course
            .unwrap_or_else(|| panic!("{} has no course notes", def.id));
        assert!((2..=3).contains(&notes.objectives.len()), "{}", def.id);
        let q = notes.question;
        assert!((2..=4).contains(&q.answers.len()), "{}", def.id);
        assert!(q.correct < q.answers.len(), "{}", def.id);
        assert!(!q.prompt.is_empty() && !q.why.is_empty(), "{}", def.id);
        // One sentence: the why ends the only sentence it has.
        assert_eq!(
            q.why.matches(". ").count(),
            0,
            "{}: the why is one sentence",
            def.id
        );
    }
}

#[test]
fn every_chapter_opens_with_a_short_introduction_and_ends_with_its_rules() {
    let numbers: Vec<u8> = CHAPTER_NOTES.iter().map(|c| c.number).collect();
    assert_eq!(numbers, CHAPTERS.iter().map(|c| c.number).collect::<Vec<_>>());
    for chapter in CHAPTER_NOTES {
        let sentences = chapter.intro.matches(". ").count() + 1;
        assert!(
            (2..=4).contains(&sentences),
            "chapter {}: {sentences} sentences",
            chapter.number
        );
        assert!(!chapter.rules.is_empty(), "chapter {}", chapter.number);
    }
}

/// The site's course lesson is generated from the scenarios' notes: `lessons/course.json`
/// must equal `course_lesson()` (rewrite it with `COORDLAB_BLESS=1 cargo test -p
/// coordlab-sim --test course`).
#[test]
fn the_shipped_course_lesson_is_the_one_the_notes_make() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../lessons/course.json");
    let made = serde_json::to_string_pretty(&coordlab_sim::scenarios::course_lesson()).expect("json") + "\n";
    if std::env::var_os("COORDLAB_BLESS").is_some() {
        std::fs::write(path, &made).expect("write lessons/course.json");
    }
    let shipped = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        shipped == made,
        "lessons/course.json is out of date: COORDLAB_BLESS=1 cargo test -p coordlab-sim --test course"
    );
    let stops = coordlab_sim::scenarios::course_lesson()["stops"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(stops, registry().len(), "one stop per scenario");
}
