//! `coordlab list`: the scenario library, one aligned line per scenario.

use coordlab_sim::catalog;
use coordlab_sim::scenarios::{registry, BUNDLES, CHAPTERS};
use serde_json::json;

/// `N. Title` of a chapter number.
pub fn chapter_text(number: u8) -> String {
    match CHAPTERS.iter().find(|c| c.number == number) {
        Some(c) => format!("{}. {}", c.number, c.title),
        None => format!("{number}."),
    }
}

pub fn list() -> String {
    let rows: Vec<[String; 3]> = catalog()
        .iter()
        .map(|s| [s.id.to_string(), chapter_text(s.chapter), s.title.to_string()])
        .collect();
    let header = ["ID".to_string(), "CHAPTER".to_string(), "TITLE".to_string()];
    let width = |col: usize| {
        std::iter::once(&header)
            .chain(&rows)
            .map(|r| r[col].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1) = (width(0), width(1));
    std::iter::once(&header)
        .chain(&rows)
        .map(|[id, chapter, title]| format!("{id:<w0$}  {chapter:<w1$}  {title}\n"))
        .collect()
}

/// `coordlab bundles`: the browser build's bundles, each a cargo feature of the simulator,
/// with its chapters and scenarios; `home` serves the pages that name no scenario.
pub fn bundles() -> String {
    let scenarios: serde_json::Map<String, serde_json::Value> = registry()
        .iter()
        .map(|d| ((d.info)().id.to_string(), json!(d.bundle)))
        .collect();
    let bundles: serde_json::Map<String, serde_json::Value> = BUNDLES
        .iter()
        .map(|(name, chapters)| {
            let ids: Vec<&str> = registry()
                .iter()
                .filter(|d| d.bundle == *name)
                .map(|d| (d.info)().id)
                .collect();
            (
                name.to_string(),
                json!({"features": [name], "chapters": chapters, "scenarios": ids}),
            )
        })
        .collect();
    let out = json!({"home": BUNDLES[0].0, "bundles": bundles, "scenarios": scenarios});
    format!("{}\n", serde_json::to_string_pretty(&out).unwrap_or_default())
}
