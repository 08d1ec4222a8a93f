//! `cargo xtask dist`: the site in dist/ (or elsewhere): one WebAssembly bundle per group of
//! chapters, a loader that picks the bundle a URL needs, the stylesheets and index.html. Every
//! asset path is relative, so the site can be served from / or from any sub-path. File names
//! carry a content hash, so a new build never mixes with a cached old one.

use coordlab_sim::scenarios::{site_bundles, SiteBundle, SiteLayout};
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

pub struct Options {
    /// The bundles to build (`None`: all); the home bundle and each chapter's embed bundle
    /// come with any selection.
    pub bundles: Option<Vec<String>>,
    /// The cargo profile: `wasm-release` for the real site, anything else for a quick build
    /// without wasm-opt and terser.
    pub profile: String,
    pub dist: PathBuf,
    /// How many bundles build at once.
    pub lanes: usize,
}

/// Where the intermediate files go; scripts/size-report.sh reads `bundles.json`,
/// `manifest.json` and the raw WebAssembly from here.
const WORK: &str = "target/site";

/// The Content Security Policy every page declares (a <meta>, so it holds on any static host):
/// scripts, styles, images, fetches and frames only from the site's own origin, WebAssembly
/// compiled from its own bundles ('wasm-unsafe-eval'), no inline script or style, no eval, no
/// plugins, no forms. `default-src` stands for `frame-src`: the guides in docs/ frame the
/// site's own embeds and nothing else. A meta cannot set frame-ancestors, so any page (the
/// guides, and a documentation site elsewhere) may frame an embed.
const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'none'";

/// wasm-opt's optimizing passes for a page's bundle: `--flatten --rereloop` first rebuilds
/// the control flow, which the two `-Oz` passes then shrink further: 1.2 KB gzipped off the
/// consensus bundle for about 3 s more CPU a bundle (15.7 s against 12–13 s). `-Oz` twice
/// instead of `-Oz --converge`: the same bytes within 0.1 KB either way on every bundle tried
/// (fencing, consensus, home, raft-embed), at half the CPU time.
const PAGE_PASSES: &[&str] = &["--flatten", "--rereloop", "-Oz", "-Oz"];

/// An embed bundle gets one -Oz pass: about 1.4 KB larger than a page's passes would make
/// it (the cap is the player's first load, which an embed stays well under) for ~7 s less CPU
/// a bundle.
const EMBED_PASSES: &[&str] = &["-Oz"];

/// wasm-opt's settings for every release bundle, after its passes. The producers and
/// target-features sections name the compiler and its settings: no browser reads them. The
/// features are those every browser we target has had since 2021 (Chromium, Firefox,
/// Safari). `--low-memory-unused`: the stack comes first in memory and grows down from 1 MiB,
/// so addresses under 1024 are used only by a stack about to overflow; it lets wasm-opt fold
/// constant offsets into loads and stores (1.5 KB of the fencing bundle).
/// `--reorder-functions-by-name` last: it lays the functions out in the order of the keys
/// `function_order::sort_keys` wrote, which gzip compresses better (3.6–4.9 KB of a page's
/// bundle; the home bundle's 0.2 KB larger).
const WASM_OPT_SETTINGS: &[&str] = &[
    "--low-memory-unused",
    "--strip-producers",
    "--strip-target-features",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-mutable-globals",
    "--enable-reference-types",
    "--enable-multivalue",
    "--reorder-functions-by-name",
];

pub fn build(options: &Options) -> Result<(), String> {
    let started = Instant::now();
    enter_root()?;
    let release = options.profile == "wasm-release";
    let (work, dist) = (Path::new(WORK), options.dist.as_path());
    for dir in [work, dist] {
        if dir.exists() {
            fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }

    let layout = site_bundles();
    let bundles_json = serde_json::to_string_pretty(&layout).map_err(|e| e.to_string())?;
    write(&work.join("bundles.json"), &format!("{bundles_json}\n"))?;
    let wanted = wanted_bundles(&layout, options.bundles.as_deref())?;
    build_bundles(&layout, &wanted, options)?;

    // The stylesheets go out without their comments and layout whitespace (about 2 KB less of
    // every first load, gzipped); tests/minify-css.test.mjs checks Chromium reads the same
    // rules.
    let minified_style = |name: &str| -> Result<String, String> {
        let css = read(Path::new(&format!("web/{name}.css")))?;
        let minified = work.join(format!("{name}.css"));
        write(&minified, &minify_css(&css)?)?;
        hashed(&minified, name, "css", dist)
    };
    let (style, embed_style) = (&minified_style("style")?, &minified_style("embed")?);

    // Each bundle's files, hashed: a chapter's player bundle and its embed bundle share one
    // hash, of all four files, so the loader's table names the pair once.
    // (A release bundle's JavaScript was minified in its lane: build_bundle.)
    let has_embed = |bundle: &str| wanted.iter().any(|b| *b == format!("{bundle}-embed"));
    let mut hashes: Vec<(String, String)> = Vec::new();
    for bundle in &wanted {
        let embed_of = bundle.strip_suffix("-embed");
        if embed_of.is_some_and(|page| wanted.iter().any(|b| b == page)) {
            continue; // hashed with its chapter's bundle
        }
        let mut group = vec![bundle.clone()];
        if has_embed(bundle) {
            group.push(format!("{bundle}-embed"));
        }
        let hash = hashed_bundles(&group, work, dist)?;
        hashes.extend(group.into_iter().map(|b| (b, hash.clone())));
    }
    // The manifest, in build order: each bundle's JavaScript and WebAssembly and the
    // stylesheet of the page it draws if that is not the player. The loader's table says the
    // same in short: each bundle's hash, and its stylesheet, for every bundle but the embeds.
    let (mut manifest, mut loader_table) = (Vec::new(), Vec::new());
    for bundle in &wanted {
        let hash = hashes
            .iter()
            .find(|(b, _)| b == bundle)
            .map(|(_, h)| h.clone())
            .ok_or_else(|| format!("bundle {bundle} was not hashed"))?;
        let css = match page_style(&layout, bundle)? {
            Some(name) => vec![minified_style(name)?],
            None => Vec::new(),
        };
        let stem = format!("coordlab-{bundle}-{hash}");
        manifest.push((
            bundle.as_str(),
            bundle_files(&format!("{stem}.js"), &format!("{stem}.wasm"), &css),
        ));
        if !bundle.ends_with("-embed") {
            loader_table.push((bundle.as_str(), loader_entry(&hash, &css, has_embed(bundle))?));
        }
    }
    let manifest_json = json_object(manifest);
    write(&work.join("manifest.json"), &format!("{manifest_json}\n"))?;

    // The loader: the bundle table, the scenario-to-bundle table, the routes, the bundle for
    // pages that name no scenario, and the embeds' stylesheet.
    let loader = work.join("loader.js");
    let filled = fill_loader(
        &read(Path::new("web/loader.js"))?,
        &layout,
        &json_object(loader_table),
        &wanted,
        embed_style,
    )?;
    let side_files = hashed_side_files(&manifest_json, work, dist)?;
    write(&loader, &renamed(&filled, "web/loader.js", &side_files)?)?;
    if release {
        minify_js(&loader)?;
    }
    let loader = hashed(&loader, "loader", "js", dist)?;

    copy(Path::new("web/favicon.svg"), &dist.join("favicon.svg"))?;
    // Lessons: the player's part (web/loader.js imports it after the app starts) and the
    // lesson files the site ships (`#/lesson?src=lessons/locks-101.json`); "Find a failure",
    // imported the same way, with the bundle table its worker picks the embed bundle from.
    // (Both are in `side_files`, above, with the glossary and the library's first picture.)
    fs::create_dir_all(dist.join("lessons")).map_err(|e| e.to_string())?;
    for entry in fs::read_dir("lessons").map_err(|e| format!("lessons/: {e}"))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|x| x == "json") {
            copy(
                &path,
                &dist.join("lessons").join(path.file_name().unwrap_or_default()),
            )?;
        }
    }
    // The library's picture of the course's first run: a poster (an <img>, so no bytes in any
    // bundle; the home bundle names it, so it keeps its name) and the script that puts the run
    // itself, playing in an embed, in its place (in `side_files`).
    copy(Path::new("web/start.svg"), &dist.join("start.svg"))?;
    // An example documentation page with three embeds (linked from the README).
    for file in ["embed-example.css", "embed-example.js"] {
        copy(&Path::new("web/example").join(file), &dist.join(file))?;
    }
    let example = read(Path::new("web/example/embed-example.html"))?;
    write(&dist.join("embed-example.html"), &example.replace("@CSP@", CSP))?;
    // The guides (docs/*.md and the README) as pages of the site, with their embeds live.
    crate::docs::build(Path::new("."), dist, CSP)?;
    let index = release_page(&read(Path::new("index.html"))?, style, &loader);
    write(&dist.join("index.html"), &index)?;
    say(&format!("built {} in {:.0?}", dist.display(), started.elapsed()));
    Ok(())
}

/// The pages other than the player and their stylesheets (`web/<name>.css`), by the bundle
/// that draws them: the library (the home bundle), the side by side, the choosing page and the
/// throughput chart, and the trace viewer. No scenario page downloads their rules.
const PAGE_STYLES: [(&str, &str); 4] = [
    ("home", "library"),
    ("compare", "compare"),
    ("choosing", "choose"),
    ("trace", "trace"),
];

/// The stylesheet of the page `bundle` draws, if it draws one other than the player. A bundle
/// the table names must be the layout's home bundle or a route's, so the two cannot drift.
fn page_style(layout: &SiteLayout, bundle: &str) -> Result<Option<&'static str>, String> {
    let Some(&(_, name)) = PAGE_STYLES.iter().find(|(b, _)| *b == bundle) else {
        return Ok(None);
    };
    if bundle != layout.home && !layout.routes.values().any(|b| *b == bundle) {
        return Err(format!(
            "PAGE_STYLES names `{bundle}`, which draws no page of its own"
        ));
    }
    Ok(Some(name))
}

/// A bundle's entry in the loader's table: its JavaScript, its WebAssembly and the stylesheets
/// its pages add (web/loader.js adds them in this order).
fn bundle_files(js: &str, wasm: &str, css: &[String]) -> String {
    let mut files = vec![
        ("js", quoted(&format!("./{js}"))),
        ("wasm", quoted(&format!("./{wasm}"))),
    ];
    if !css.is_empty() {
        let sheets: Vec<String> = css.iter().map(|c| quoted(&format!("./{c}"))).collect();
        files.push(("css", format!("[{}]", sheets.join(","))));
    }
    json_object(files)
}

/// A bundle in the loader's table: the hash its two files are named with
/// (`coordlab-<bundle>-<hash>.js` and `.wasm`). A chapter's player bundle is its bare hash,
/// which its embed bundle's files carry too (the embed has no entry of its own); any other
/// bundle is `[hash, sheets…]`, with the stylesheets of the page it draws. Written out in
/// full (`{"js":…,"wasm":…}`, as in manifest.json) every bundle's entry cost every page's
/// first download about 440 bytes gzipped in the full build; an entry for each embed, 150.
fn loader_entry(hash: &str, css: &[String], has_embed: bool) -> Result<String, String> {
    if has_embed {
        if !css.is_empty() {
            return Err(
                "a chapter's bundle with an embed draws the player, which has no stylesheet of its own"
                    .into(),
            );
        }
        return Ok(quoted(hash));
    }
    let mut parts = vec![quoted(hash)];
    parts.extend(css.iter().map(|c| quoted(&format!("./{c}"))));
    Ok(format!("[{}]", parts.join(",")))
}

/// The bundle `trunk serve` builds: the web crate's default features, every chapter.
const DEV_BUNDLE: &str = "all";

/// `cargo xtask dev-loader`, Trunk.toml's post-build hook: the loader in trunk's staging
/// directory, with every scenario and route sent to the one bundle trunk built (named after
/// the crate, without a hash: Trunk.toml turns hashing off).
pub fn dev_loader() -> Result<(), String> {
    let staging = std::env::var_os("TRUNK_STAGING_DIR")
        .ok_or("TRUNK_STAGING_DIR is not set (this runs as trunk's hook)")?;
    enter_root()?;
    let mut layout = site_bundles();
    layout.home = DEV_BUNDLE;
    for bundle in layout.scenarios.values_mut().chain(layout.routes.values_mut()) {
        *bundle = DEV_BUNDLE;
    }
    // The one bundle draws every page, so it adds every page's stylesheet (index.html has trunk
    // copy them).
    let sheets: Vec<String> = PAGE_STYLES
        .iter()
        .map(|(_, name)| format!("{name}.css"))
        .collect();
    let files = bundle_files("coordlab-web.js", "coordlab-web_bg.wasm", &sheets);
    let manifest_json = json_object([(DEV_BUNDLE, files)]);
    let loader = fill_loader(
        &read(Path::new("web/loader.js"))?,
        &layout,
        &manifest_json,
        &[DEV_BUNDLE.to_string()],
        "embed.css",
    )?;
    write(&Path::new(&staging).join("loader.js"), &loader)?;
    write(&Path::new(&staging).join("glossary.json"), &glossary_json())?;
    // "Find a failure" searches in the one bundle too: it has the embed's exports.
    let embed = json_object([(
        format!("{DEV_BUNDLE}-embed").as_str(),
        bundle_files("coordlab-web.js", "coordlab-web_bg.wasm", &[]),
    )]);
    write(&Path::new(&staging).join("search.js"), &fill_search(&embed)?)
}

/// The files web/loader.js imports or fetches once the app is up — the glossary's
/// definitions, the lessons' and "Find a failure"'s scripts, the library's first picture — and
/// the files those load in turn, copied into `dist` under hashed names as the bundles are. A
/// browser holding one from an earlier build must not pair it with this build's bundles:
/// search.js names this build's embed bundles. Each file names its children's hashed copies
/// (so it is hashed after them); returns the renaming the loader needs.
fn hashed_side_files(manifest_json: &str, work: &Path, dist: &Path) -> Result<Vec<(String, String)>, String> {
    let side = work.join("side");
    fs::create_dir_all(&side).map_err(|e| format!("{}: {e}", side.display()))?;
    // `text` written as `file` and copied into dist hashed: (file, its hashed name).
    let put = |file: &str, text: &str| -> Result<(String, String), String> {
        let (stem, ext) = file.rsplit_once('.').ok_or("a side file has no extension")?;
        let path = side.join(file);
        write(&path, text)?;
        Ok((file.to_string(), hashed(&path, stem, ext, dist)?))
    };
    // web/<file>, naming `children` by their hashed copies.
    let put_web = |file: &str, children: &[(String, String)]| {
        let text = read(&Path::new("web").join(file))?;
        put(file, &renamed(&text, &format!("web/{file}"), children)?)
    };
    let glossary = put("glossary.json", &glossary_json())?;
    let lessons = put_web("lessons.js", &[put_web("lessons.css", &[])?])?;
    let search_children = [put_web("search.css", &[])?, put_web("search-worker.js", &[])?];
    let search = put(
        "search.js",
        &renamed(&fill_search(manifest_json)?, "web/search.js", &search_children)?,
    )?;
    let start = put_web("start.js", &[put_web("start.css", &[])?])?;
    Ok(vec![glossary, lessons, search, start])
}

/// `text` (the file `what`) with each `'name'` written in it as `'hashed name'`. Each must be
/// there: a file that stopped naming one would otherwise load the unhashed name, which the
/// release site does not have.
fn renamed(text: &str, what: &str, names: &[(String, String)]) -> Result<String, String> {
    let mut out = text.to_string();
    for (name, hashed) in names {
        let quoted_name = format!("'{name}'");
        if !out.contains(&quoted_name) {
            return Err(format!("{what} does not name {quoted_name} to rename"));
        }
        out = out.replace(&quoted_name, &format!("'{hashed}'"));
    }
    Ok(out)
}

/// web/search.js with the bundle table its worker picks a chapter's embed bundle from.
fn fill_search(manifest_json: &str) -> Result<String, String> {
    let search = read(Path::new("web/search.js"))?;
    if !search.contains("/*@BUNDLES@*/ {}") {
        return Err("web/search.js has no `/*@BUNDLES@*/ {}` to fill in".to_string());
    }
    Ok(search.replacen("/*@BUNDLES@*/ {}", manifest_json, 1))
}

/// Works from the repository's root, with the project's tools on PATH.
fn enter_root() -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask/ has no parent")?;
    std::env::set_current_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    put_tools_on_path(root);
    Ok(())
}

/// The bundles to build, in build order: the home bundle first (the library: the site's front
/// page, in any selection), then the selection (or all, by name), then the embed bundle of
/// each chapter chosen without its own (scripts/size-report.sh compares the two).
fn wanted_bundles(layout: &SiteLayout, selection: Option<&[String]>) -> Result<Vec<String>, String> {
    let mut wanted: Vec<String> = match selection {
        Some(names) => names.to_vec(),
        None => layout.bundles.keys().cloned().collect(),
    };
    if let Some(unknown) = wanted.iter().find(|b| !layout.bundles.contains_key(*b)) {
        let known: Vec<&str> = layout.bundles.keys().map(String::as_str).collect();
        return Err(format!(
            "no bundle `{unknown}`; the bundles are {}",
            known.join(" ")
        ));
    }
    if !wanted.iter().any(|b| b == layout.home) {
        wanted.insert(0, layout.home.to_string());
    }
    for bundle in wanted.clone() {
        let embed = format!("{bundle}-embed");
        if layout.bundles.contains_key(&embed) && !wanted.contains(&embed) {
            wanted.push(embed);
        }
    }
    Ok(wanted)
}

/// Builds every wanted bundle into `target/site/coordlab-<bundle>.opt.wasm` and `.js`.
///
/// A bundle's release build is mostly one long single-threaded step (the whole-program LTO of
/// one crate graph), so with two lanes two bundles build at once, each in its own target
/// directory (two cargo builds cannot share one). The other lanes start from a copy of the
/// first lane's compiled dependencies once the first bundle is done, so they compile once.
fn build_bundles(layout: &SiteLayout, wanted: &[String], options: &Options) -> Result<(), String> {
    let first_target = PathBuf::from(std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into()));
    let profile_dir = |target: &Path| target.join("wasm32-unknown-unknown").join(&options.profile);
    let (first, rest) = wanted.split_first().ok_or("no bundle to build")?;
    build_bundle(first, &layout.bundles[first], &first_target, &options.profile)?;

    // Each lane takes the next group nobody has claimed, so the lanes stay busy until the list
    // runs out whatever each bundle costs. A chapter's player and embed bundles are one group,
    // built one after the other in the same lane: they enable the same simulator features, so
    // the second reuses the simulator and renderer the first compiled (an embed built so took
    // 22 s in CI, against about 40 s in the other lane). The layout pairs them: the two run the
    // same scenarios. Pairs go first, singles fill the end.
    let mut groups: Vec<Vec<&String>> = Vec::new();
    for bundle in rest {
        let scenarios = &layout.bundles[bundle].scenarios;
        let pair = groups
            .iter_mut()
            .find(|g| !scenarios.is_empty() && layout.bundles[g[0]].scenarios == *scenarios);
        match pair {
            Some(group) => group.push(bundle),
            None => groups.push(vec![bundle]),
        }
    }
    groups.sort_by_key(|group| std::cmp::Reverse(group.len()));
    let lanes = options.lanes.min(groups.len()).max(1);
    let queue = Mutex::new(groups.into_iter().collect::<VecDeque<_>>());
    let mut targets = vec![first_target.clone()];
    for lane in 2..=lanes {
        let target = first_target.join(format!("site-lane-{lane}"));
        // Both halves of the first lane's build: the wasm32 crates and the host's (the proc
        // macros and build scripts they were compiled with, in `<target>/<profile>`). A lane
        // that kept host crates of an earlier run of its own (the same names, built at another
        // path) has cargo take the copied wasm32 crates as fresh while rustc finds they were
        // built against other macros: "can't find crate for `yew`".
        let host_dir = |target: &Path| target.join(&options.profile);
        for (from, to) in [
            (profile_dir(&first_target), profile_dir(&target)),
            (host_dir(&first_target), host_dir(&target)),
        ] {
            let _ = fs::remove_dir_all(&to);
            let parent = to.parent().ok_or("a lane's directory has no parent")?;
            fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            // Taken before any lane goes on: a lane building its next bundle rewrites files in
            // its target directory, and a copy taken meanwhile can lose one.
            if from.exists() {
                run(Command::new("cp").arg("-a").arg(&from).arg(parent))?;
            }
        }
        targets.push(target);
    }
    std::thread::scope(|scope| {
        let lanes: Vec<_> = targets
            .iter()
            .map(|target| {
                let queue = &queue;
                scope.spawn(move || -> Result<(), String> {
                    loop {
                        let Some(group) = queue.lock().map_err(|e| e.to_string())?.pop_front() else {
                            return Ok(());
                        };
                        for bundle in group {
                            if let Err(e) =
                                build_bundle(bundle, &layout.bundles[bundle], target, &options.profile)
                            {
                                // A failed lane stops the others at their next group.
                                queue.lock().map_err(|e| e.to_string())?.clear();
                                return Err(e);
                            }
                        }
                    }
                })
            })
            .collect();
        // The scope waits for every lane; the first error is the one reported.
        lanes.into_iter().try_for_each(|lane| {
            lane.join()
                .unwrap_or_else(|_| Err("a build lane panicked".into()))
        })
    })
}

/// `glossary.json`: each term's name → its definition, which the player bundles leave out and
/// fetch when a narration first shows (web/src/glossary.rs).
fn glossary_json() -> String {
    let definitions: serde_json::Map<String, serde_json::Value> = coordlab_sim::glossary::TERMS
        .iter()
        .map(|t| (t.name.to_string(), t.definition.into()))
        .collect();
    serde_json::Value::Object(definitions).to_string()
}

/// One bundle: cargo, wasm-bindgen, and for a release build wasm-opt.
fn build_bundle(bundle: &str, spec: &SiteBundle, target_dir: &Path, profile: &str) -> Result<(), String> {
    let features = spec.features.join(",");
    say(&format!("bundle {bundle} (features: {features})"));
    let started = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo)
        .env("CARGO_TARGET_DIR", target_dir)
        .args(["--config", &remap_paths_config()])
        .args([
            "build",
            "--quiet",
            "--profile",
            profile,
            "--target",
            "wasm32-unknown-unknown",
        ])
        .args([
            "-p",
            "coordlab-web",
            "--no-default-features",
            "--features",
            &features,
        ]))?;
    let work = Path::new(WORK);
    let raw = work.join(format!("coordlab-{bundle}.raw.wasm"));
    copy(
        &target_dir
            .join("wasm32-unknown-unknown")
            .join(profile)
            .join("coordlab-web.wasm"),
        &raw,
    )?;
    run(Command::new("wasm-bindgen")
        .args([
            "--target",
            "web",
            "--no-typescript",
            "--out-dir",
            WORK,
            "--out-name",
        ])
        .arg(format!("coordlab-{bundle}"))
        .arg(&raw))?;
    let bound = work.join(format!("coordlab-{bundle}_bg.wasm"));
    let optimized = work.join(format!("coordlab-{bundle}.opt.wasm"));
    if profile == "wasm-release" {
        let passes = if spec.embed { EMBED_PASSES } else { PAGE_PASSES };
        let keyed = work.join(format!("coordlab-{bundle}.keyed.wasm"));
        let module = fs::read(&bound).map_err(|e| format!("{}: {e}", bound.display()))?;
        let module =
            crate::function_order::sort_keys(&module).map_err(|e| format!("{}: {e}", bound.display()))?;
        fs::write(&keyed, module).map_err(|e| format!("{}: {e}", keyed.display()))?;
        run(Command::new("wasm-opt")
            .args(passes)
            .args(WASM_OPT_SETTINGS)
            .arg(&keyed)
            .arg("-o")
            .arg(&optimized))?;
        // wasm-bindgen's hashed import and export names, shortened in both files (4.3 KB of
        // the fencing bundle): scripts/minify-wasm-names.mjs.
        let js = work.join(format!("coordlab-{bundle}.js"));
        run(Command::new("node")
            .arg("scripts/minify-wasm-names.mjs")
            .arg(&optimized)
            .arg(&js))?;
        // Here rather than after every lane is done: the lanes minify side by side, and the
        // build's serial tail is shorter by about 10 s.
        minify_js(&js)?;
    } else {
        copy(&bound, &optimized)?;
    }
    say(&format!("bundle {bundle} done in {:.0?}", started.elapsed()));
    Ok(())
}

/// A cargo `--config` giving rustc `--remap-path-prefix` for the wasm32 target: the source paths
/// of crates.io dependencies, which the bundles carry in their panic locations
/// (`$CARGO_HOME/registry/src/index.crates.io-<hash>/yew-0.21.0/src/…`), become relative
/// (`yew-0.21.0/src/…`), as the workspace's own already are: 60–110 bytes gzipped off a
/// bundle, and the bundles no longer depend on where $CARGO_HOME is (CI's differs from a
/// laptop's). The standard library's `/rustc/<commit>/library/…` paths come precompiled in its
/// metadata, and remapping them here changes nothing, so they stay. A RUSTFLAGS in the
/// environment takes precedence over this (cargo's rule for any configured rustflags).
fn remap_paths_config() -> String {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    // One directory per registry (`index.crates.io-<hash>`, named by cargo): cargo fetched them
    // before this runs (xtask itself depends on crates.io). Sorted, so the flags, and with them
    // cargo's fingerprints, are the same from one run to the next.
    let mut registries: Vec<PathBuf> = cargo_home
        .and_then(|home| fs::read_dir(home.join("registry/src")).ok())
        .map(|dirs| dirs.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    registries.sort();
    let flags: Vec<String> = registries
        .iter()
        .map(|dir| quoted(&format!("--remap-path-prefix={}=", dir.display())))
        .collect();
    format!("target.wasm32-unknown-unknown.rustflags=[{}]", flags.join(","))
}

/// The loader with its tables filled in, for the bundles built: a scenario or route whose
/// bundle was left out of the build has no entry (the home bundle says so), and the home
/// bundle is the registry's if built, else the first built.
fn fill_loader(
    loader: &str,
    layout: &SiteLayout,
    manifest_json: &str,
    built: &[String],
    embed_style: &str,
) -> Result<String, String> {
    let is_built = |bundle: &&str| built.iter().any(|b| b == bundle);
    let table = |entries: &std::collections::BTreeMap<&str, &str>| {
        json_object(
            entries
                .iter()
                .filter(|(_, b)| is_built(b))
                .map(|(k, b)| (*k, quoted(b))),
        )
    };
    // The home bundle comes with every selection (wanted_bundles).
    let home = layout.home;
    let mut out = loader.to_string();
    for (placeholder, value) in [
        ("/*@BUNDLES@*/ {}", manifest_json.to_string()),
        ("/*@SCENARIOS@*/ {}", table(&layout.scenarios)),
        ("/*@ROUTES@*/ {}", table(&layout.routes)),
        ("/*@HOME@*/ ''", quoted(home)),
        ("/*@EMBED_STYLE@*/ ''", quoted(&format!("./{embed_style}"))),
    ] {
        if !out.contains(placeholder) {
            return Err(format!("web/loader.js has no `{placeholder}` to fill in"));
        }
        out = out.replacen(placeholder, &value, 1);
    }
    Ok(out)
}

/// The site's page from the one `trunk serve` builds (index.html at the top level): trunk's
/// own links go, its stylesheet becomes the hashed one, the loader gets its hashed name, and
/// the Content Security Policy comes first after the charset, before anything it governs.
fn release_page(trunk_page: &str, style: &str, loader: &str) -> String {
    let mut page = String::new();
    for line in trunk_page.lines() {
        let indent = &line[..line.len() - line.trim_start().len()];
        if line.contains("data-trunk rel=\"css\"") {
            page += &format!("{indent}<link rel=\"stylesheet\" href=\"./{style}\" />\n");
            continue;
        }
        if line.contains("data-trunk") {
            continue;
        }
        page += &line.replace("\"./loader.js\"", &format!("\"./{loader}\""));
        page.push('\n');
        if line.trim() == "<meta charset=\"utf-8\" />" {
            page += &format!("{indent}<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\" />\n");
        }
    }
    page
}

/// A stylesheet without its comments and layout whitespace, by `scripts/minify-css.mjs`.
///
/// Not the `minifier` crate (rustdoc's), tried in issue 29: it writes `clamp(13px,0.6vw+11px,17px)`
/// for `clamp(13px, 0.6vw + 11px, 17px)`, and CSS needs the spaces around `+` in math, so
/// Chromium dropped the embed's font size and the 400×300 raft-figure-8 embed drew its text at
/// 5.7 px. Ours keeps every space that can carry meaning, and `tests/minify-css.test.mjs`
/// checks that Chromium reads the same declarations from both.
pub fn minify_css(css: &str) -> Result<String, String> {
    let dir = Path::new(WORK).join("minify-css");
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (input, output) = (dir.join("in.css"), dir.join("out.css"));
    write(&input, css)?;
    run(Command::new("node")
        .arg("scripts/minify-css.mjs")
        .arg(&input)
        .arg(&output))?;
    fs::read_to_string(&output).map_err(|e| format!("{}: {e}", output.display()))
}

/// The JavaScript goes out minified (terser, from npm): wasm-bindgen's glue and the loader are
/// written for people to read, and about 2 KB of every first load is their whitespace and
/// long names. Every browser test runs against the minified files.
fn minify_js(file: &Path) -> Result<(), String> {
    let out = file.with_extension("js.min");
    run(Command::new("terser")
        .arg(file)
        .args(["--module", "--compress", "--mangle", "--output"])
        .arg(&out))?;
    fs::rename(&out, file).map_err(|e| format!("{}: {e}", file.display()))
}

/// Copies `file` into `dist` as `<name>-<hash>.<ext>` (the first 8 hex digits of its
/// SHA-256) and returns the new name. Eight digits are plenty to tell a changed file from its
/// last version (a stale cache hit is a 1 in 4 billion chance), and the loader's table names
/// a hash per bundle: 16 digits cost every page's first download about 270 bytes gzipped (hex
/// digits barely compress) when it named two a bundle.
pub(crate) fn hashed(file: &Path, name: &str, ext: &str, dist: &Path) -> Result<String, String> {
    let bytes = fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let hashed = format!("{name}-{}.{ext}", short_hash(&[&bytes]));
    fs::write(dist.join(&hashed), bytes).map_err(|e| format!("{hashed}: {e}"))?;
    Ok(hashed)
}

/// Copies the JavaScript and WebAssembly of each bundle of `group` (a chapter's player and
/// embed bundles, or one bundle) from `work` into `dist` as `coordlab-<bundle>-<hash>.js` and
/// `.wasm`, one hash of all the files together, and returns the hash: the loader's table names
/// the group by one hash. A change to any of them renames them all (an embed unchanged is
/// fetched again once).
fn hashed_bundles(group: &[String], work: &Path, dist: &Path) -> Result<String, String> {
    let mut files = Vec::new();
    for bundle in group {
        for (from, ext) in [
            (format!("coordlab-{bundle}.js"), "js"),
            (format!("coordlab-{bundle}.opt.wasm"), "wasm"),
        ] {
            let path = work.join(from);
            let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            files.push((bundle, ext, bytes));
        }
    }
    let parts: Vec<&[u8]> = files.iter().map(|(_, _, bytes)| bytes.as_slice()).collect();
    let hash = short_hash(&parts);
    for (bundle, ext, bytes) in &files {
        let name = format!("coordlab-{bundle}-{hash}.{ext}");
        fs::write(dist.join(&name), bytes).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(hash)
}

/// The first 8 hex digits of the SHA-256 of `parts` one after the other.
fn short_hash(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `{"k":v,...}` in the order given (serde_json's own maps sort their keys).
fn json_object<'a>(entries: impl IntoIterator<Item = (&'a str, String)>) -> String {
    let fields: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{}:{v}", quoted(k)))
        .collect();
    format!("{{{}}}", fields.join(","))
}

fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// Puts the project's tools first on PATH for the commands run here, as scripts/env.sh does
/// for the scripts: cargo-installed wasm-bindgen, npm's wasm-opt and terser.
fn put_tools_on_path(root: &Path) {
    let mut dirs = vec![root.join("node_modules/.bin")];
    if let Some(home) = std::env::var_os("HOME") {
        dirs.insert(0, PathBuf::from(home).join(".cargo/bin"));
    }
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    if let Ok(path) = std::env::join_paths(dirs) {
        std::env::set_var("PATH", path);
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("{command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed ({status})"))
    }
}

/// A line of progress, with the seconds since the first (where a build's time goes, in CI's log).
pub(crate) fn say(message: &str) {
    static FIRST: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let at = FIRST.get_or_init(Instant::now).elapsed().as_secs();
    eprintln!("\x1b[1m[xtask dist {at:>3}s]\x1b[0m {message}");
}

pub(crate) fn read(file: &Path) -> Result<String, String> {
    fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))
}

pub(crate) fn write(file: &Path, text: &str) -> Result<(), String> {
    fs::write(file, text).map_err(|e| format!("{}: {e}", file.display()))
}

pub(crate) fn copy(from: &Path, to: &Path) -> Result<(), String> {
    fs::copy(from, to)
        .map(drop)
        .map_err(|e| format!("{} -> {}: {e}", from.display(), to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The release page is the page the site had before trunk's page replaced its template.
    #[test]
    fn release_page_is_the_sites_page() {
        let trunk_page = read(Path::new("../index.html")).expect("index.html");
        let expected = format!(
            r#"<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="Content-Security-Policy" content="{CSP}" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>coordlab — see distributed coordination</title>
    <meta name="description" content="Deterministic, steppable simulations of locks, leases, fencing tokens and consensus." />
    <link rel="icon" href="./favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="./style-0.css" />
    <script type="module" src="./loader-1.js"></script>
  </head>
  <body>
    <noscript>coordlab needs JavaScript and WebAssembly to run its simulations.</noscript>
  </body>
</html>
"#
        );
        assert_eq!(release_page(&trunk_page, "style-0.css", "loader-1.js"), expected);
    }

    /// Each page other than the player gets its stylesheet, and a scenario's bundle gets none:
    /// the table names real pages' bundles, and each sheet exists.
    #[test]
    fn only_the_pages_other_than_the_player_add_a_stylesheet() {
        let layout = site_bundles();
        for (bundle, name) in PAGE_STYLES {
            assert_eq!(page_style(&layout, bundle), Ok(Some(name)));
            let sheet = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../web/{name}.css"));
            assert!(sheet.is_file(), "{} is missing", sheet.display());
        }
        // The player's bundles (a scenario's, and its chapter's embeds) bring no sheet.
        for (bundle, spec) in &layout.bundles {
            if spec.embed || layout.scenarios.values().any(|b| b == bundle) {
                assert_eq!(page_style(&layout, bundle), Ok(None), "{bundle}");
            }
        }
        let mut wrong = site_bundles();
        wrong.routes.retain(|_, b| *b != "trace");
        assert!(
            page_style(&wrong, "trace").is_err(),
            "a table naming a bundle with no page fails"
        );
    }

    /// A chapter's player and embed bundles carry one hash of their four files, which changes
    /// when any file does; the loader's entry is that hash alone for a chapter, and `[hash,
    /// sheets…]` for any other bundle.
    #[test]
    fn a_chapters_bundles_share_one_hash_of_their_files() {
        let dir = std::env::temp_dir().join(format!("coordlab-xtask-hash-{}", std::process::id()));
        let (work, dist) = (dir.join("work"), dir.join("dist"));
        fs::create_dir_all(&work).unwrap();
        fs::create_dir_all(&dist).unwrap();
        let group = ["locks".to_string(), "locks-embed".to_string()];
        let hash_of = |texts: [&str; 4]| {
            let names = [
                "locks.js",
                "locks.opt.wasm",
                "locks-embed.js",
                "locks-embed.opt.wasm",
            ];
            for (name, text) in names.iter().zip(texts) {
                fs::write(work.join(format!("coordlab-{name}")), text).unwrap();
            }
            hashed_bundles(&group, &work, &dist).unwrap()
        };
        let first = hash_of(["js", "wasm", "ejs", "ewasm"]);
        assert_eq!(first.len(), 8);
        for (bundle, ext, text) in [("locks", "js", "js"), ("locks-embed", "wasm", "ewasm")] {
            let copy = fs::read_to_string(dist.join(format!("coordlab-{bundle}-{first}.{ext}"))).unwrap();
            assert_eq!(copy, text);
        }
        assert_ne!(hash_of(["js2", "wasm", "ejs", "ewasm"]), first);
        assert_ne!(hash_of(["js", "wasm", "ejs", "ewasm2"]), first);
        assert_eq!(hash_of(["js", "wasm", "ejs", "ewasm"]), first);
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(loader_entry("0123abcd", &[], true).unwrap(), "\"0123abcd\"");
        assert_eq!(loader_entry("0123abcd", &[], false).unwrap(), "[\"0123abcd\"]");
        assert_eq!(
            loader_entry("0123abcd", &["library-00ff00ff.css".to_string()], false).unwrap(),
            "[\"0123abcd\",\"./library-00ff00ff.css\"]"
        );
        assert!(loader_entry("0123abcd", &["x.css".to_string()], true).is_err());
    }

    /// A side file names its children by their hashed copies, every time it names them; a
    /// child it no longer names stops the build rather than ship a name the site lacks.
    #[test]
    fn renamed_names_hashed_copies_and_refuses_a_missing_name() {
        let names = [("search.css".to_string(), "search-0123abcd.css".to_string())];
        let text = "a('search.css'); b('search.css'); c('search.css.map')";
        assert_eq!(
            renamed(text, "web/search.js", &names).as_deref(),
            Ok("a('search-0123abcd.css'); b('search-0123abcd.css'); c('search.css.map')")
        );
        let err = renamed("nothing here", "web/search.js", &names).unwrap_err();
        assert!(
            err.contains("web/search.js") && err.contains("'search.css'"),
            "{err}"
        );
    }

    /// `glossary.json` has every term's definition, under the name the player looks it up by.
    #[test]
    fn glossary_json_defines_every_term() {
        let json: serde_json::Value = serde_json::from_str(&glossary_json()).expect("JSON");
        for term in coordlab_sim::glossary::TERMS {
            let definition = json[term.name].as_str().unwrap_or_default();
            assert!(
                !definition.is_empty() && definition == term.definition,
                "{}",
                term.name
            );
        }
    }
}
