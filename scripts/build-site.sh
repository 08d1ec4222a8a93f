#!/usr/bin/env bash
# Builds the site into dist/ (or $DIST): one WebAssembly bundle per group of chapters, a
# loader that picks the bundle a URL needs, the stylesheet and index.html. Every asset path is
# relative, so dist/ can be served from / or from any sub-path. File names carry a content
# hash, so a new build never mixes with a cached old one.
#
#   scripts/build-site.sh            # all bundles, into dist/
#   BUNDLES="locks" scripts/build-site.sh  # only some, and the home bundle (quicker while working on one chapter)
#   WASM_PROFILE=wasm-dev BUNDLES="locks" scripts/build-site.sh  # a quick build while working:
#                                          # no LTO, no wasm-opt; bigger files, so never for size
#
# Needs: cargo with the wasm32-unknown-unknown target, wasm-bindgen (the version pinned in
# web/Cargo.toml), wasm-opt (npm binaryen), node. scripts/ensure-tools.sh installs them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

dist="${DIST:-dist}"
profile="${WASM_PROFILE:-wasm-release}"
work="target/site"
rm -rf "$work" "$dist"
mkdir -p "$work" "$dist"

# The bundles and which scenarios each holds, as the simulator's registry says.
# The command line's test build: its binary is usually built already (by `cargo test`), and
# a release build would cost a minute of compiling for one line of JSON.
cargo run --quiet -p coordlab-cli -- bundles >"$work/bundles.json"
all_bundles=$(node -e 'const b=require(process.argv[1]); console.log(Object.keys(b.bundles).join(" "))' "$PWD/$work/bundles.json")
home_bundle=$(node -e 'console.log(require(process.argv[1]).home)' "$PWD/$work/bundles.json")
wanted="${BUNDLES:-$all_bundles}"
# The home bundle (the library) comes with any selection: it is the site's front page.
if [[ " $wanted " != *" $home_bundle "* ]]; then wanted="$home_bundle $wanted"; fi
# A chapter's embed bundle comes with it (scripts/size-report.sh compares the two).
for bundle in $wanted; do
    if [[ " $all_bundles " == *" $bundle-embed "* && " $wanted " != *" $bundle-embed "* ]]; then
        wanted+=" $bundle-embed"
    fi
done

hashed() { # hashed FILE NAME EXT -> copies FILE to dist as NAME-<hash>.EXT, prints the new name
    local h
    h=$(sha256sum "$1" | cut -c1-16)
    cp "$1" "$dist/$2-$h.$3"
    printf '%s' "$2-$h.$3"
}

# Building a bundle is mostly one long single-threaded step (the whole-program LTO of one
# crate graph), so the bundles are built in two lanes at once, each with its own target
# directory (two cargo builds cannot share one). The second lane starts from a copy of the
# first lane's compiled dependencies once the first bundle is done, so they compile once.
build_bundle() { # build_bundle BUNDLE TARGET_DIR
    local bundle=$1 target_dir=$2 features
    features=$(node -e 'const b=require(process.argv[1]); console.log(b.bundles[process.argv[2]].features.join(","))' "$PWD/$work/bundles.json" "$bundle")
    printf '\033[1m[build-site]\033[0m bundle %s (features: %s)\n' "$bundle" "$features"
    CARGO_TARGET_DIR="$target_dir" cargo build --quiet --profile "$profile" --target wasm32-unknown-unknown \
        -p coordlab-web --no-default-features --features "$features"
    cp "$target_dir/wasm32-unknown-unknown/$profile/coordlab-web.wasm" "$work/coordlab-$bundle.raw.wasm"
    wasm-bindgen --target web --no-typescript --out-dir "$work" --out-name "coordlab-$bundle" \
        "$work/coordlab-$bundle.raw.wasm"
    if [ "$profile" != wasm-release ]; then
        cp "$work/coordlab-${bundle}_bg.wasm" "$work/coordlab-${bundle}.opt.wasm"
        return
    fi
    # The producers and target-features sections name the compiler and its settings: no browser
    # reads them. The features are those every browser we target has had since 2021 (Chromium,
    # Firefox, Safari). --low-memory-unused: the stack comes first in memory and grows down
    # from 1 MiB, so addresses under 1024 are used only by a stack about to overflow; it lets
    # wasm-opt fold constant offsets into loads and stores (1.5 KB of the fencing bundle).
    wasm-opt -Oz --converge --low-memory-unused --strip-producers --strip-target-features --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
        --enable-mutable-globals --enable-reference-types --enable-multivalue \
        "$work/coordlab-${bundle}_bg.wasm" -o "$work/coordlab-${bundle}.opt.wasm"
    # wasm-bindgen's hashed import and export names, shortened in both files (4.3 KB of fencing).
    node scripts/minify-wasm-names.mjs "$work/coordlab-${bundle}.opt.wasm" "$work/coordlab-$bundle.js"
}
# Each lane takes the next bundle nobody has claimed (mkdir is atomic), so the two stay
# busy until the list runs out whatever each bundle costs.
claim_and_build() { # claim_and_build TARGET_DIR
    local bundle
    for bundle in $wanted; do
        if mkdir "$work/claim-$bundle" 2>/dev/null; then build_bundle "$bundle" "$1"; fi
    done
}
first_target="${CARGO_TARGET_DIR:-target}"
second_target="$first_target/site-lane-2"
first_bundle=${wanted%% *}
mkdir "$work/claim-$first_bundle"
build_bundle "$first_bundle" "$first_target"
# The copy is made before either lane goes on: a lane building its next bundle rewrites files
# in its target directory, and a copy taken meanwhile can lose one ("cannot stat").
mkdir -p "$second_target/wasm32-unknown-unknown"
rm -rf "$second_target/wasm32-unknown-unknown/$profile"
cp -a "$first_target/wasm32-unknown-unknown/$profile" "$second_target/wasm32-unknown-unknown/"
claim_and_build "$second_target" &
second_lane=$!
trap 'kill "$second_lane" 2>/dev/null || true' EXIT # a failed first lane stops the second
claim_and_build "$first_target"
wait "$second_lane"

# The JavaScript goes out minified (terser, from npm): wasm-bindgen's glue and the loader are
# written for people to read, and about 2 KB of every first load is their whitespace and long
# names. Every browser test runs against the minified files.
minify_js() { # minify_js FILE
    [ "$profile" = wasm-release ] || return 0
    terser "$1" --module --compress --mangle --output "$1.min" && mv "$1.min" "$1"
}
manifest="{"
for bundle in $wanted; do
    minify_js "$work/coordlab-$bundle.js"
    js=$(hashed "$work/coordlab-$bundle.js" "coordlab-$bundle" js)
    wasm=$(hashed "$work/coordlab-${bundle}.opt.wasm" "coordlab-$bundle" wasm)
    manifest+="\"$bundle\":{\"js\":\"./$js\",\"wasm\":\"./$wasm\"},"
done
manifest="${manifest%,}}"

# The loader: the bundle table, the scenario-to-bundle table, the bundle for pages that
# name no scenario (the library), and the embeds' stylesheet.
# The stylesheets go out without their comments and layout whitespace (about 2 KB less of
# every first load, gzipped); tests/minify-css.test.mjs checks Chromium reads the same rules.
node scripts/minify-css.mjs web/style.css "$work/style.css"
node scripts/minify-css.mjs web/embed.css "$work/embed.css"
embed_style=$(hashed "$work/embed.css" embed css)
node -e '
const fs = require("fs");
const [bundlesFile, manifest, out, embedStyle] = process.argv.slice(1);
const b = JSON.parse(fs.readFileSync(bundlesFile, "utf8"));
const built = JSON.parse(manifest);
const scenarios = Object.fromEntries(Object.entries(b.scenarios).filter(([, v]) => built[v]));
const routes = Object.fromEntries(Object.entries(b.routes).filter(([, v]) => built[v]));
const home = built[b.home] ? b.home : Object.keys(built)[0];
let js = fs.readFileSync("web/loader.js", "utf8")
  .replace("/*@BUNDLES@*/ {}", JSON.stringify(built))
  .replace("/*@SCENARIOS@*/ {}", JSON.stringify(scenarios))
  .replace("/*@ROUTES@*/ {}", JSON.stringify(routes))
  .replace("/*@HOME@*/ \x27\x27", JSON.stringify(home))
  .replace("/*@EMBED_STYLE@*/ \x27\x27", JSON.stringify("./" + embedStyle));
fs.writeFileSync(out, js);
' "$work/bundles.json" "$manifest" "$work/loader.js" "$embed_style"
minify_js "$work/loader.js"
loader=$(hashed "$work/loader.js" loader js)
printf '%s\n' "$manifest" >"$work/manifest.json"
style=$(hashed "$work/style.css" style css)
cp web/favicon.svg "$dist/favicon.svg"
# The Content Security Policy every page declares (a <meta>, so it holds on any static host):
# scripts, styles, images, fetches and frames only from the site's own origin, WebAssembly
# compiled from its own bundles ('wasm-unsafe-eval'), no inline script or style, no eval, no
# plugins, no forms. A meta cannot set frame-ancestors, so any page may frame an embed.
csp="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'none'"
# An example documentation page with three embeds (linked from docs/embedding.md).
cp web/example/embed-example.css web/example/embed-example.js "$dist/"
sed -e "s|@CSP@|$csp|" web/example/embed-example.html >"$dist/embed-example.html"
sed -e "s|@LOADER@|$loader|" -e "s|@STYLE@|$style|" -e "s|@CSP@|$csp|" web/index.html >"$dist/index.html"
printf '\033[1m[build-site]\033[0m built %s\n' "$dist"
