//! The documentation's links and coordlab addresses, checked: every relative link in
//! `README.md` and `docs/*.md` names a file that exists (and, for a Markdown file with a
//! `#fragment`, a heading in it), and every `#/play/`, `#/embed/` and `#/compare/` address
//! opens as written — the run builds, and neither the router nor the player drops any part of
//! it with a notice. A reader who follows a link or pastes an address from the docs gets what
//! the text says. Every live embed (`<iframe src="../#/embed/…">`, which the site's build of
//! the docs plays and GitHub strips) opens without a notice and is followed by a link to the
//! same run in the player. Templates (`#/embed/<scenario>?…`) are not addresses and are passed over.
//!
//! Natively, in the web crate's unit tests: `cargo test -p coordlab-web doc_links`.

use crate::heading_slug::slug;
use crate::route::{parse, Route};
use crate::state::Player;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `README.md` and every Markdown file in `docs/`, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let mut files = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

/// The targets of Markdown links `[text](target)` and of `src="…"` / `href="…"` in HTML.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].trim().to_string());
        }
    }
    for attr in ["src=\"", "href=\""] {
        let mut rest = text;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            if let Some(end) = rest.find('"') {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

fn headings(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// What is wrong with a relative link from `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    let external = ["http://", "https://", "mailto:"];
    if external.iter().any(|p| target.starts_with(p)) || target.starts_with("#/") {
        return None;
    }
    let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
    let dir = page.parent().expect("a page is in a folder");
    let path = if file.is_empty() {
        page.to_path_buf()
    } else {
        dir.join(file)
    };
    if !path.exists() {
        return Some(format!("{target}: no file {}", path.display()));
    }
    if !fragment.is_empty() && path.extension().is_some_and(|x| x == "md") {
        let text = std::fs::read_to_string(&path).ok()?;
        if !headings(&text).iter().any(|h| h == fragment) {
            return Some(format!("{target}: {} has no heading #{fragment}", path.display()));
        }
    }
    None
}

/// Every `#/play/…`, `#/embed/…` and `#/compare/…` address in the text, up to the first
/// character that cannot be part of one in prose (space, quote, backtick, bracket).
fn addresses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("#/") {
        let rest = &text[i..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ')' | '>' | ']' | '|'))
            .unwrap_or(rest.len());
        let address = &rest[..end];
        let kinds = ["#/play/", "#/embed/", "#/compare/"];
        let template = address.contains('<') || address.contains('…') || rest[end..].starts_with('<');
        if kinds.iter().any(|k| address.starts_with(k)) && !template {
            out.push(address.trim_end_matches(['.', ',', ';', ':']).to_string());
        }
    }
    out
}

/// What a reader would be told on opening the address: the router's and the player's
/// notices, or why nothing could be shown.
fn notices_of(address: &str) -> Vec<String> {
    let parsed = parse(address);
    let mut notices = parsed.notices.clone();
    match &parsed.route {
        Route::Play(play) => match Player::from_route(play, Vec::new()) {
            Some(p) => notices.extend(p.notices),
            None => notices.push("the run could not be built".to_string()),
        },
        Route::Embed(embed) => match Player::for_embed(embed, Vec::new()) {
            Some(p) => notices.extend(p.notices),
            None => notices.push("the run could not be built".to_string()),
        },
        Route::Compare(_) => {}
        other => notices.push(format!("opens {other:?}, not a run")),
    }
    notices
}

#[test]
fn every_relative_link_in_the_docs_names_a_file_and_heading_that_exist() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        for target in link_targets(&text) {
            checked += 1;
            if let Some(p) = broken(&page, &target) {
                problems.push(format!("{}: {p}", page.display()));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: is the extraction broken?"
    );
    assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
}

#[test]
fn every_coordlab_address_in_the_docs_opens_without_a_notice() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        for address in addresses(&text) {
            checked += 1;
            let notices = notices_of(&address);
            if !notices.is_empty() {
                problems.push(format!("{}: {address}: {}", page.display(), notices.join(" / ")));
            }
        }
    }
    assert!(
        checked >= 5,
        "only {checked} addresses found: is the extraction broken?"
    );
    assert!(
        problems.is_empty(),
        "addresses that do not open as written:\n{}",
        problems.join("\n")
    );
}

/// A live embed in a page: an `<iframe>`'s `src`, whether it has a `title` (screen readers
/// announce it), `loading="lazy"`, a `width` and a `height`, and the target of the first
/// Markdown link after it (what a reader on GitHub, which strips iframes, gets instead).
#[derive(Debug, PartialEq)]
struct Embed {
    src: String,
    described: bool,
    link: Option<String>,
}

/// The live embeds of a page: the `<iframe` that starts a line outside code blocks (one in a
/// code block or in backticks is an example to copy, not a run on the page).
fn embeds(text: &str) -> Vec<Embed> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut starts = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && trimmed.starts_with("<iframe") {
            starts.push(offset + line.len() - trimmed.len());
        }
        offset += line.len();
    }
    for i in starts {
        let rest = &text[i..];
        let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
        let attr = |name: &str| {
            let (_, value) = tag.split_once(&format!(" {name}=\""))?;
            value.split_once('"').map(|(v, _)| v.to_string())
        };
        let after = &rest[rest.find("</iframe>").unwrap_or(0)..];
        let link = after
            .split_once("](")
            .and_then(|(_, l)| l.split_once(')'))
            .map(|(l, _)| l.to_string());
        out.push(Embed {
            src: attr("src").unwrap_or_default(),
            described: attr("title").is_some_and(|t| !t.trim().is_empty())
                && attr("loading").as_deref() == Some("lazy")
                && attr("width").is_some()
                && attr("height").is_some(),
            link,
        });
    }
    out
}

/// What is wrong with a live embed in a page of `docs/`, if anything. The docs are built into
/// the site as `DIST/docs/NAME.html` (xtask/src/docs.rs), so `../#/embed/…` is the site's
/// embed; the address must open without a notice, and the link after it must open the same
/// run (scenario, parameters, seed and faults) in the player.
fn embed_problems(embed: &Embed) -> Vec<String> {
    let Some(address) = embed
        .src
        .strip_prefix("../#/embed/")
        .map(|a| format!("#/embed/{a}"))
    else {
        return vec![format!(
            "{}: not `../#/embed/…`, the site's embed as seen from docs/",
            embed.src
        )];
    };
    let mut problems: Vec<String> = notices_of(&address)
        .into_iter()
        .map(|n| format!("{}: {n}", embed.src))
        .collect();
    if !embed.described {
        problems.push(format!(
            "{}: needs a title, loading=\"lazy\", a width and a height",
            embed.src
        ));
    }
    let run = |address: &str| {
        match parse(address).route {
            Route::Embed(e) => Some(e.play),
            Route::Play(p) => Some(p),
            _ => None,
        }
        .map(|p| (p.scenario, p.params, p.seed, p.actions))
    };
    let link = embed.link.as_deref().and_then(|l| l.strip_prefix("../"));
    match link {
        Some(link) if link.starts_with("#/play/") => {
            if run(link) != run(&address) {
                problems.push(format!(
                    "{}: the link after it, {link}, opens another run",
                    embed.src
                ));
            }
        }
        _ => problems.push(format!(
            "{}: the link after it ({:?}) is not `../#/play/…` of the same run",
            embed.src, embed.link
        )),
    }
    problems
}

#[test]
fn every_live_embed_in_the_docs_opens_its_run_and_links_to_it() {
    let mut problems = Vec::new();
    let mut checked = Vec::new();
    for (page, text) in pages() {
        let name = page.file_name().unwrap_or_default().to_string_lossy().to_string();
        for embed in embeds(&text) {
            if page.ends_with("README.md") && page.parent() == Some(repo().as_path()) {
                problems.push(format!(
                    "README.md: {}: the README is not built into the site",
                    embed.src
                ));
            }
            problems.extend(embed_problems(&embed).into_iter().map(|p| format!("{name}: {p}")));
            checked.push(name.clone());
        }
    }
    for page in ["learner.md", "trainer.md", "embedding.md", "cli.md"] {
        assert!(
            checked.iter().any(|p| p == page),
            "{page} embeds no run: {checked:?}"
        );
    }
    assert!(
        problems.is_empty(),
        "live embeds that do not open as written:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checks_catch_a_missing_file_a_missing_heading_and_a_bad_address() {
    let readme = repo().join("README.md");
    assert!(broken(&readme, "docs/no-such-page.md").is_some());
    assert!(broken(&readme, "docs/learner.md#no-such-heading").is_some());
    assert!(broken(&readme, "docs/learner.md").is_none());
    assert!(!notices_of("#/play/lost-update?lock=no-such-lock").is_empty());
    assert!(!notices_of("#/embed/zombie-worker?from=no-such-beat").is_empty());
    assert!(!notices_of("#/play/no-such-scenario").is_empty());
    assert!(notices_of("#/play/lost-update?lock=row-lock&seed=7").is_empty());
    let embed = |src: &str, link: &str| Embed {
        src: src.to_string(),
        described: true,
        link: Some(link.to_string()),
    };
    assert!(embed_problems(&embed(
        "../#/embed/lost-update?seed=3",
        "../#/play/lost-update?seed=3&step=5"
    ))
    .is_empty());
    assert!(!embed_problems(&embed(
        "../#/embed/lost-update?seed=3&from=no-such-beat",
        "../#/play/lost-update?seed=3"
    ))
    .is_empty());
    assert!(!embed_problems(&embed("#/embed/lost-update", "../#/play/lost-update")).is_empty());
    assert!(!embed_problems(&embed(
        "../#/embed/lost-update?seed=3",
        "../#/play/lost-update?seed=4"
    ))
    .is_empty());
    assert!(!embed_problems(&Embed {
        described: false,
        ..embed("../#/embed/lost-update", "../#/play/lost-update")
    })
    .is_empty());
    assert_eq!(
        embeds("<iframe src=\"../#/embed/x\" width=\"1\" height=\"1\" loading=\"lazy\"\n  title=\"X\"></iframe>\n\n[it](../#/play/x)"),
        vec![embed("../#/embed/x", "../#/play/x")]
    );
    assert_eq!(
        addresses("see `#/embed/<scenario>?…` and `#/play/lost-update?seed=3`."),
        vec!["#/play/lost-update?seed=3".to_string()]
    );
    assert_eq!(
        slug("Checked against real PostgreSQL and Redis"),
        "checked-against-real-postgresql-and-redis"
    );
    assert_eq!(
        slug("The trace file (JSONL) schema"),
        "the-trace-file-jsonl-schema"
    );
}

/// The first ```rust block after `heading` in `doc`, and the first backquoted or linked
/// `crates/….rs` path before that block.
fn rust_example<'a>(doc: &'a str, heading: &str) -> (&'a str, &'a str) {
    let section = doc
        .split_once(heading)
        .unwrap_or_else(|| panic!("a \"{heading}\" section"))
        .1;
    let (prose, rest) = section.split_once("```rust\n").expect("a rust block");
    let file = prose
        .split(['`', '(', ')'])
        .find(|s| s.starts_with("crates/") && s.ends_with(".rs"))
        .expect("the section names its file");
    let block = rest.split_once("\n```").expect("the rust block ends").0;
    (file, block)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The contributor's example scenario in docs/architecture.md ("Adding a scenario") is the
/// whole file it names, line for line, and has the length the text gives, so the example
/// cannot drift from the code.
#[test]
fn the_adding_a_scenario_example_is_the_current_file() {
    let doc = read("docs/architecture.md");
    let (file, block) = rust_example(&doc, "### Adding a scenario");
    let source = read(file);
    let stated: usize = doc
        .split_once("### Adding a scenario")
        .and_then(|(_, section)| section.split_once(" lines in all)"))
        .and_then(|(before, _)| before.rsplit('(').next())
        .and_then(|n| n.trim().parse().ok())
        .expect("the section gives the file's length as “(N lines in all)”");
    assert_eq!(
        stated,
        source.lines().count(),
        "{file}'s length in docs/architecture.md"
    );
    for (i, (shown, real)) in block.lines().zip(source.lines()).enumerate() {
        assert_eq!(shown, real, "line {} of {file} in docs/architecture.md", i + 1);
    }
    assert_eq!(
        block.lines().count(),
        source.lines().count(),
        "{file} shown whole"
    );
    let registry = read("crates/coordlab-sim/src/scenarios/mod.rs");
    // The registry names a scenario by its chapter folder and file: `ch3_late_holders::lease_stampede`.
    let module = file
        .trim_end_matches(".rs")
        .split_once("/scenarios/")
        .map(|(_, path)| path.replace('/', "::"))
        .unwrap_or_default();
    let line = doc
        .split_once(block)
        .and_then(|(_, after)| after.split_once("```rust\n"))
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("a block with the registry line after the file")
        .0;
    assert!(
        line.contains(&format!(", {module})")),
        "the registry line registers {module}"
    );
    assert!(
        registry.lines().any(|l| l == line),
        "{line:?} is not in scenarios/mod.rs"
    );
}

/// The README's "Adding a scenario" links the same file that docs/architecture.md shows, and
/// its example is a run of real lines, of that file or of the registry.
#[test]
fn the_readme_example_is_the_current_file() {
    let readme = read("README.md");
    let (file, block) = rust_example(&readme, "## Adding a scenario");
    assert_eq!(
        file,
        rust_example(&read("docs/architecture.md"), "### Adding a scenario").0,
        "the README and docs/architecture.md show the same scenario"
    );
    let shown: Vec<&str> = block.lines().collect();
    let quoted = |path: &str| {
        let source = read(path);
        let lines: Vec<&str> = source.lines().collect();
        lines.windows(shown.len()).any(|w| w == shown.as_slice())
    };
    assert!(
        quoted(file) || quoted("crates/coordlab-sim/src/scenarios/mod.rs"),
        "the README's example is not lines of {file} or of the registry:\n{block}"
    );
}
