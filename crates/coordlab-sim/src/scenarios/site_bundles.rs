//! How the browser build splits the library into bundles: the table `coordlab bundles`
//! prints and `cargo xtask dist` builds from, kept here beside the registry it is made of.

use super::{registry, BUNDLES, COMPARE_PAIR};
use serde::Serialize;
use std::collections::BTreeMap;

/// One WebAssembly bundle of the site: the web crate's cargo features it is built with and
/// the scenarios it can run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteBundle {
    /// A chapter's embed bundle (`<chapter>-embed`): its simulations with the embed view
    /// instead of the player.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub embed: bool,
    pub features: Vec<&'static str>,
    pub scenarios: Vec<&'static str>,
}

/// Every bundle of the site and what sends a page to each. Fields in the order the JSON
/// has always listed them (alphabetical), so `coordlab bundles` prints what it printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteLayout {
    pub bundles: BTreeMap<String, SiteBundle>,
    /// The bundle of the pages that name no scenario (the library, the glossary).
    pub home: &'static str,
    /// Whole routes sent to one bundle (`#/compare`, `#/trace`, ...).
    pub routes: BTreeMap<&'static str, &'static str>,
    /// Each scenario id and the player bundle that runs it.
    pub scenarios: BTreeMap<&'static str, &'static str>,
}

/// The site's bundles. Each scenario bundle is a cargo feature of the simulator and holds
/// the scenarios registered under it with the player; `<name>-embed` holds the same
/// scenarios with the embed view instead; `compare` holds the side-by-side view with both
/// scenarios of its pair; `home` serves the pages that name no scenario.
pub fn site_bundles() -> SiteLayout {
    let scenarios = registry().iter().map(|d| (d.id, d.bundle)).collect();
    let mut bundles = BTreeMap::new();
    let mut add = |name: String, embed: bool, features: Vec<&'static str>, scenarios| {
        bundles.insert(
            name,
            SiteBundle {
                embed,
                features,
                scenarios,
            },
        );
    };
    for name in BUNDLES {
        let ids: Vec<&'static str> = registry()
            .iter()
            .filter(|d| d.bundle == *name)
            .map(|d| d.id)
            .collect();
        add(name.to_string(), false, vec![name, "player"], ids.clone());
        // The same chapter for embeds: its simulations with the embed view, no player.
        add(format!("{name}-embed"), true, vec![name, "embed"], ids);
    }
    // The side-by-side view names the simulator features of its pair itself (web/Cargo.toml).
    add(
        "compare".into(),
        false,
        vec!["compare"],
        vec![COMPARE_PAIR.0, COMPARE_PAIR.1],
    );
    // The site's first download: the library and the glossary with every scenario's info but
    // no simulation and no player, so the first page costs what the library needs.
    add("home".into(), false, vec!["library"], Vec::new());
    // A trace file opened in the browser: the reader and the space-time view, no simulations;
    // and a lesson file read and checked (`#/lesson`), which needs JSON too.
    add("trace".into(), false, vec!["trace", "lesson"], Vec::new());
    // The choosing page and the consensus-throughput chart: no player, no scenario.
    add("choosing".into(), false, vec!["choosing"], Vec::new());
    SiteLayout {
        bundles,
        home: "home",
        routes: BTreeMap::from([
            ("compare", "compare"),
            ("trace", "trace"),
            ("lesson", "trace"),
            ("choose", "choosing"),
            ("experiment", "choosing"),
        ]),
        scenarios,
    }
}
