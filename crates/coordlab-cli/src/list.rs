//! `coordlab list`: the scenario library, one aligned line per scenario.

use coordlab_sim::catalog;
use coordlab_sim::scenarios::{site_bundles, CHAPTERS};

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

/// `coordlab bundles`: the browser build's bundles (see [`site_bundles`]), as JSON.
pub fn bundles() -> String {
    format!(
        "{}\n",
        serde_json::to_string_pretty(&site_bundles()).unwrap_or_default()
    )
}
