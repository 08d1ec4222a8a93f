#!/usr/bin/env bash
# Builds the site (release) and serves it at http://127.0.0.1:8080/ (PORT and ADDRESS to change).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-tools.sh
cargo xtask dist
exec node tests/serve.mjs dist "${PORT:-8080}" "${ADDRESS:-127.0.0.1}"
