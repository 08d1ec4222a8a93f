#!/usr/bin/env bash
# Runs every test: native unit/scenario/golden/CLI tests, the conformance tests against a real
# PostgreSQL and Redis (scripts/conformance.sh), the wasm32 determinism test, the
# release build of the site, its size report, and the browser end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/ensure-tools.sh --test
tools_s=$((SECONDS - start))
source scripts/env.sh

# Each step's wall-clock time, printed as a table at the end (where CI's time goes).
timings=""
step_name="" step_start=$SECONDS
end_step() {
    if [ -n "$step_name" ]; then timings+=$(printf '%5ds  %s' $((SECONDS - step_start)) "$step_name")$'\n'; fi
}
step() {
    end_step
    step_name="$*" step_start=$SECONDS
    printf '\n\033[1m== %s\033[0m\n' "$*"
}

step "format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "native tests (with 20,000-input fuzz runs of each parser; scripts/fuzz.sh runs a million)"
cargo test --workspace --quiet
# The workspace's programs (the command line and xtask), built with the features this test
# build resolved, so they link the simulator it just compiled. `cargo run -p <one package>`
# resolves that package's features alone (no `pair`, no dev-dependencies' serde and syn
# features) and compiles the simulator and its dependencies again: about 50 s each for the
# command line and xtask in CI. `--tests` keeps the dev-dependencies' features in (the test
# build's artifacts are then fresh); only xtask's binary is new. The steps below run these
# binaries: `cargo xtask dist` runs this same xtask program.
cargo build --workspace --tests --bin coordlab --bin xtask --quiet
bin="${CARGO_TARGET_DIR:-target}/debug"

step "conformance: the scenarios' SQL and Redis commands on a real PostgreSQL and Redis"
COORDLAB_WORKSPACE_TESTS_BUILT=1 scripts/conformance.sh

# The test build's binary: the simulator is optimized in it (profile.dev.package.coordlab-sim),
# so the 10,000 runs take as long as in a release build, without a release build's minute
# of compiling.
step "Raft: 10,000 random storms, each safe and converging after the heal"
"$bin/coordlab" check raft-chaos --seeds 0..10000

step "wasm32: same fingerprints as natively"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test -p coordlab-wasm-check --target wasm32-unknown-unknown --test wasm_fingerprint

step "release build of the site (one bundle per chapter group): cargo xtask dist"
"$bin/xtask" dist

step "size of the first download of each bundle (fails past 101,200 bytes gzipped for the home bundle, 240,000 for a scenario bundle)"
scripts/size-report.sh dist

step "browser end-to-end tests (headless Chromium)"
# Two test files at a time (each has its own server and browser): measured on two cores, this
# took the step from 715 s to 635 s, so the files are mostly busy, not waiting. The longest
# start first (scripts/browser-tests.mjs; `node --test` would start them in name order). The
# files that time the page (long tasks, the diagram's redraw, the choosing page's load) run
# after, alone.
# The xtask program built above, for the test of the stylesheet minifier.
export COORDLAB_XTASK
COORDLAB_XTASK="$(realpath "$bin/xtask")"
timed=(tests/search.test.mjs tests/spacetime.test.mjs tests/choose.test.mjs)
shared=()
for file in tests/*.test.mjs; do
    [[ " ${timed[*]} " == *" $file "* ]] || shared+=("$file")
done
node scripts/browser-tests.mjs 2 "${shared[@]}"
node --test "${timed[@]}"

end_step
printf '\n\033[1m== time per step\033[0m\n%5ds  tools (scripts/ensure-tools.sh)\n%s%5ds  in all\n' \
    "$tools_s" "$timings" $((SECONDS - start))
