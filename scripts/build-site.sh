#!/usr/bin/env bash
# The site is built by `cargo xtask dist` (xtask/src/dist.rs); this name is kept for habits.
# It reads BUNDLES, WASM_PROFILE and DIST as it always did, and takes the same flags:
#
#   scripts/build-site.sh                      # all bundles, release, into dist/
#   BUNDLES="locks" scripts/build-site.sh      # only some, and the home bundle
#   WASM_PROFILE=wasm-dev BUNDLES="locks" scripts/build-site.sh  # quick: no LTO, no wasm-opt
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo xtask dist "$@"
