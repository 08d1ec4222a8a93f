//! `coordlab list`: the scenario library, one aligned line per scenario.

use coordlab_sim::catalog;
use coordlab_sim::scenarios::{registry, BUNDLES, CHAPTERS, COMPARE_PAIR};
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

/// `coordlab bundles`: the browser build's bundles. Each scenario bundle is a cargo feature
/// of the simulator and holds the scenarios registered under it with the player;
/// `<name>-embed` holds the same scenarios with the
/// embed view instead of the player (`"embed": true`); `compare` holds the
/// side-by-side view with both scenarios of its pair; the bundle `home` (named by `home`)
/// serves the pages that name no scenario (the library, the glossary); `routes` sends whole
/// routes to a bundle.
pub fn bundles() -> String {
    let scenarios: serde_json::Map<String, serde_json::Value> = registry()
        .iter()
        .map(|d| (d.id.to_string(), json!(d.bundle)))
        .collect();
    let mut bundles = serde_json::Map::new();
    for name in BUNDLES {
        let ids: Vec<&str> = registry()
            .iter()
            .filter(|d| d.bundle == *name)
            .map(|d| d.id)
            .collect();
        bundles.insert(
            name.to_string(),
            json!({"features": [name, "player"], "scenarios": ids}),
        );
        // The same chapter for embeds: its simulations with the embed view, no player.
        bundles.insert(
            format!("{name}-embed"),
            json!({"features": [name, "embed"], "scenarios": ids, "embed": true}),
        );
    }
    // The side-by-side view names the simulator features of its pair itself (web/Cargo.toml).
    bundles.insert(
        "compare".into(),
        json!({"features": ["compare"], "scenarios": [COMPARE_PAIR.0, COMPARE_PAIR.1]}),
    );
    // The site's first download: the library and the glossary with every scenario's info but
    // no simulation and no player, so the first page costs what the library needs (a
    // scenario's link loads its chapter's bundle, as every chapter's did but the first).
    bundles.insert("home".into(), json!({"features": ["library"], "scenarios": []}));
    // A trace file opened in the browser: the reader and the space-time view, no simulations.
    bundles.insert("trace".into(), json!({"features": ["trace"], "scenarios": []}));
    // The choosing page and the consensus-throughput chart: no player, no scenario.
    bundles.insert(
        "choosing".into(),
        json!({"features": ["choosing"], "scenarios": []}),
    );
    let out = json!({
        "home": "home",
        "bundles": bundles,
        "scenarios": scenarios,
        "routes": {"compare": "compare", "trace": "trace", "choose": "choosing", "experiment": "choosing"},
    });
    format!("{}\n", serde_json::to_string_pretty(&out).unwrap_or_default())
}
