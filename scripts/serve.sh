#!/usr/bin/env bash
# Builds the site (release) and serves it at http://127.0.0.1:8080/ (PORT and ADDRESS to change).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-tools.sh
source scripts/env.sh
exec trunk serve --release --address "${ADDRESS:-127.0.0.1}" --port "${PORT:-8080}"
