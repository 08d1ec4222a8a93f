#!/usr/bin/env bash
# Installs whatever the build and the tests need and this machine lacks, at the versions the
# project pins. Safe to run again: every step checks first. Nothing here downloads outside
# the package registries (crates, npm, Debian/Ubuntu packages).
#
#   scripts/ensure-tools.sh          # build tools: wasm target, wasm-bindgen, wasm-opt, terser, node
#   scripts/ensure-tools.sh --test   # also Chromium + chromedriver for the browser tests
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen version in Cargo.lock

say() { printf '\033[1m[ensure-tools]\033[0m %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif have sudo; then sudo "$@"; else say "need root for: $*"; return 1; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

export PATH="$HOME/.cargo/bin:$PATH"
have cargo || { say "cargo not found: install Rust with rustup first (https://rustup.rs)"; exit 1; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if ! have cc; then
  say "installing a C toolchain (needed to compile wasm-bindgen-cli)"
  apt_install build-essential pkg-config
fi

# Packages and npm tools install in the background while wasm-bindgen-cli compiles: the one
# waits on the network and the disk, the other on the CPU (on a fresh 2-core machine this
# saves about a minute).
packages_and_npm() {
  local wanted=()
  if ! have node || ! have npm; then wanted+=(nodejs npm); fi
  if [ "${1:-}" = "--test" ]; then
    # One apt transaction for everything the tests need: Chromium for the browser tests,
    # PostgreSQL and Redis for the conformance tests (scripts/conformance.sh would install the
    # servers itself, at the cost of a second package-index update).
    if ! have chromium || ! have chromedriver; then wanted+=(chromium chromium-driver); fi
    if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then wanted+=(postgresql); fi
    if ! have redis-server; then wanted+=(redis-server); fi
  fi
  if ((${#wanted[@]} > 0)); then
    say "installing ${wanted[*]}"
    apt_install "${wanted[@]}" || { [[ " ${wanted[*]} " == *" chromium "* ]] && apt_install chromium-browser chromium-chromedriver; }
  fi
  if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -x node_modules/.bin/terser ] || [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
    say "installing npm tools (binaryen's wasm-opt, terser, playwright-core, axe-core)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}
packages_and_npm "${1:-}" &
background=$!

if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  # Not --locked: the registry mirror lacks one of its locked dependencies.
  cargo install --quiet wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi
wait "$background" || { say "installing packages or npm tools failed (see above)"; exit 1; }
say "tools ready"
