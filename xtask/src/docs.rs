//! The documentation built into the site: every page of `docs/` as `DIST/docs/<name>.html`
//! (`docs/README.md` as `index.html`) and the top-level `README.md` as `docs/readme.html`, so
//! a reader of the site has the guides beside the runs they explain, and the live embeds in
//! them (raw `<iframe>`s in the Markdown, which GitHub strips) play.
//!
//! Links are rewritten to what the site ships: a page to its `.html`, a picture to its copy
//! in `DIST/docs/`, a lesson file to the site's `lessons/`, a coordlab address (`../#/play/…`)
//! to the site's root. A link to anything else (a source file) fails the build, so no page of
//! the built docs links to a file that is not there. Headings get GitHub's ids, so the
//! `#fragment`s written for GitHub work here too.

// The heading-id rule the web crate's link checker holds the Markdown to, shared by path.
#[path = "../../web/src/heading_slug.rs"]
mod heading_slug;
use crate::dist::{copy, hashed, read, say, write};
use heading_slug::slug;
use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Builds the pages from the repository at `root` into `dist/docs/`, each declaring `csp`.
pub fn build(root: &Path, dist: &Path, csp: &str) -> Result<(), String> {
    let out = dist.join("docs");
    fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let style = hashed(&root.join("web/docs.css"), "docs", "css", &out)?;
    let mut pictures = BTreeSet::new();
    let pages = sources(root)?;
    for source in &pages {
        let markdown = read(&root.join(source))?;
        let page = render(source, &markdown, csp, &style, &mut pictures)?;
        write(&out.join(html_name(source)), &page)?;
    }
    for picture in &pictures {
        let name = picture.file_name().ok_or("a picture without a name")?;
        copy(&root.join(picture), &out.join(name))?;
    }
    say(&format!(
        "docs: {} pages and {} pictures in {}",
        pages.len(),
        pictures.len(),
        out.display()
    ));
    Ok(())
}

/// The pages, as paths from the repository's root: `README.md`, then `docs/*.md` by name.
fn sources(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .map_err(|e| format!("docs/: {e}"))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .filter_map(|p| p.file_name().map(|n| Path::new("docs").join(n)))
        .collect();
    docs.sort();
    docs.insert(0, PathBuf::from("README.md"));
    Ok(docs)
}

/// The built page's file name in `DIST/docs/` for a Markdown file of the repository.
fn html_name(source: &Path) -> String {
    match source.to_str() {
        Some("README.md") => "readme.html".into(),
        Some("docs/README.md") => "index.html".into(),
        _ => {
            let stem = source.file_stem().and_then(|s| s.to_str()).unwrap_or("page");
            format!("{stem}.html")
        }
    }
}

/// One page: the Markdown's HTML inside the site's header, with links rewritten and headings
/// given ids; the pictures it shows are added to `pictures` (paths from the root).
fn render(
    source: &Path,
    markdown: &str,
    csp: &str,
    style: &str,
    pictures: &mut BTreeSet<PathBuf>,
) -> Result<String, String> {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut events: Vec<Event> = Parser::new_ext(markdown, options).collect();
    let title = heading_ids(&mut events);
    for event in &mut events {
        let dest = match event {
            Event::Start(Tag::Link { dest_url, .. }) => dest_url,
            Event::Start(Tag::Image { dest_url, .. }) => dest_url,
            _ => continue,
        };
        let (target, picture) =
            site_target(source, dest).map_err(|e| format!("{}: a link to `{dest}` {e}", source.display()))?;
        pictures.extend(picture);
        *dest = CowStr::from(target);
    }
    let mut body = String::new();
    html::push_html(&mut body, events.into_iter());
    // The policy refuses style attributes: a table column's alignment becomes a class. Code
    // and tables scroll sideways on a phone, so they take the focus (the keyboard scrolls
    // them).
    for align in ["left", "center", "right"] {
        body = body.replace(
            &format!(" style=\"text-align: {align}\""),
            &format!(" class=\"align-{align}\""),
        );
    }
    let body = body
        .replace("<pre>", "<pre tabindex=\"0\">")
        .replace("<table>", "<table tabindex=\"0\">");
    let title = title.ok_or(format!("{}: no `# title` heading", source.display()))?;
    let title = escape(&if title.contains("coordlab") {
        title
    } else {
        format!("{title} · coordlab")
    });
    Ok(format!(
        r#"<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="Content-Security-Policy" content="{csp}" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>{title}</title>
    <link rel="icon" href="../favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="./{style}" />
  </head>
  <body>
    <header>
      <nav aria-label="coordlab">
        <a href="../">coordlab: the library</a>
        <a href="./index.html">Guides</a>
      </nav>
    </header>
    <main>
{body}    </main>
  </body>
</html>
"#
    ))
}

/// Gives every heading GitHub's id for it (a repeated one gets `-1`, `-2`…), and returns the
/// text of the first top-level heading, the page's title.
fn heading_ids(events: &mut [Event]) -> Option<String> {
    let mut title = None;
    let mut seen = BTreeSet::new();
    let mut i = 0;
    while i < events.len() {
        if let Event::Start(Tag::Heading { level, .. }) = &events[i] {
            let level = *level;
            let mut text = String::new();
            let mut j = i + 1;
            while j < events.len() && !matches!(events[j], Event::End(TagEnd::Heading(_))) {
                if let Event::Text(t) | Event::Code(t) = &events[j] {
                    text.push_str(t);
                }
                j += 1;
            }
            let base = slug(&text);
            let mut unique = base.clone();
            for n in 1.. {
                if seen.insert(unique.clone()) {
                    break;
                }
                unique = format!("{base}-{n}");
            }
            if let Event::Start(Tag::Heading { id, .. }) = &mut events[i] {
                *id = Some(CowStr::from(unique));
            }
            if level == pulldown_cmark::HeadingLevel::H1 && title.is_none() {
                title = Some(text);
            }
            i = j;
        }
        i += 1;
    }
    title
}

/// Where a link written in `source` (a path from the root) points in the built docs, seen
/// from `DIST/docs/`, and the picture to copy there if it is one; an error says why the site
/// has no such file.
fn site_target(source: &Path, target: &str) -> Result<(String, Option<PathBuf>), String> {
    let external = ["http://", "https://", "mailto:"];
    if target.starts_with("#/") {
        // A coordlab address written without a path: the site's root.
        return Ok((format!("../{target}"), None));
    }
    if external.iter().any(|p| target.starts_with(p)) || target.starts_with('#') {
        return Ok((target.to_string(), None));
    }
    let (file, fragment) = match target.split_once('#') {
        Some((file, fragment)) => (file, format!("#{fragment}")),
        None => (target, String::new()),
    };
    let path = normalize(&source.parent().unwrap_or(Path::new("")).join(file))?;
    let ext = path.extension().and_then(|x| x.to_str()).unwrap_or("");
    let under_docs = path.parent() == Some(Path::new("docs"));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let (built, picture) = if path.as_os_str().is_empty() && fragment.starts_with("#/") {
        // A coordlab address (`../#/play/…`): the site's root.
        ("../".to_string(), None)
    } else if ext == "md" && (under_docs || path == Path::new("README.md")) {
        (html_name(&path), None)
    } else if matches!(ext, "png" | "svg") && under_docs {
        (name.to_string(), Some(path.clone()))
    } else if ext == "json" && path.parent() == Some(Path::new("lessons")) {
        (format!("../lessons/{name}"), None)
    } else {
        return Err(format!(
            "names {}, which the built site does not have (a page, a picture in docs/, a lesson, or a coordlab address)",
            path.display()
        ));
    };
    Ok((format!("{built}{fragment}"), picture))
}

/// `path` with its `.` and `..` resolved, or an error if it climbs out of the repository.
fn normalize(path: &Path) -> Result<PathBuf, String> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if !out.pop() => {
                return Err("climbs out of the repository".to_string());
            }
            Component::ParentDir => {}
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => {
                return Err("is not relative".to_string());
            }
        }
    }
    Ok(out)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_go_where_the_site_has_them() {
        let learner = Path::new("docs/learner.md");
        let target = |t: &str| site_target(learner, t).map(|(t, _)| t);
        assert_eq!(
            target("trainer.md#lessons").as_deref(),
            Ok("trainer.html#lessons")
        );
        assert_eq!(target("README.md").as_deref(), Ok("index.html"));
        assert_eq!(
            target("../README.md#the-two-commands").as_deref(),
            Ok("readme.html#the-two-commands")
        );
        assert_eq!(
            target("../lessons/course.json").as_deref(),
            Ok("../lessons/course.json")
        );
        assert_eq!(
            target("../#/play/lost-update?seed=3").as_deref(),
            Ok("../#/play/lost-update?seed=3")
        );
        assert_eq!(target("#choosing-a-design").as_deref(), Ok("#choosing-a-design"));
        assert_eq!(
            site_target(learner, "library-390x844.png"),
            Ok((
                "library-390x844.png".into(),
                Some(PathBuf::from("docs/library-390x844.png"))
            ))
        );
        assert!(target("../crates/coordlab-sim/src/choosing.rs").is_err());
        assert!(target("../../outside.md").is_err());
        let readme = Path::new("README.md");
        assert_eq!(
            site_target(readme, "docs/testing.md#fuzzing-the-parsers")
                .map(|(t, _)| t)
                .as_deref(),
            Ok("testing.html#fuzzing-the-parsers")
        );
    }

    /// Every page of the repository's docs builds: no link to a file the site lacks, a title,
    /// no style attribute, and an id for every `#fragment` a page links to.
    #[test]
    fn every_page_of_the_docs_builds() {
        let root = Path::new("..");
        let mut pictures = BTreeSet::new();
        let pages = sources(root).expect("docs/");
        assert!(pages.len() > 8, "{pages:?}");
        let mut built = Vec::new();
        for source in &pages {
            let markdown = read(&root.join(source)).expect("a page");
            let page =
                render(source, &markdown, "CSP", "docs.css", &mut pictures).unwrap_or_else(|e| panic!("{e}"));
            let styled = page
                .split('<')
                .filter_map(|tag| tag.split('>').next())
                .find(|tag| tag.starts_with(|c: char| c.is_ascii_alphabetic()) && tag.contains(" style="));
            assert_eq!(styled, None, "{}: a style attribute", source.display());
            built.push((html_name(source), page));
        }
        for (name, page) in &built {
            for link in page.split("href=\"").skip(1).filter_map(|l| l.split('"').next()) {
                let Some((file, fragment)) = link.split_once('#') else {
                    continue;
                };
                if fragment.starts_with('/') || link.starts_with("http") {
                    continue;
                }
                let file = if file.is_empty() { name.as_str() } else { file };
                let target = &built
                    .iter()
                    .find(|(n, _)| n == file)
                    .unwrap_or_else(|| panic!("{name}: {link}"))
                    .1;
                assert!(
                    target.contains(&format!(" id=\"{fragment}\"")),
                    "{name}: {link} has no heading"
                );
            }
        }
        assert!(pictures.iter().all(|p| root.join(p).exists()), "{pictures:?}");
    }
}
