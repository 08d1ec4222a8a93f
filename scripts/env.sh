# Sourced by the other scripts: puts the project's tools on PATH.
export PATH="$HOME/.cargo/bin:$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/node_modules/.bin:$PATH"
