# Sourced by the other scripts: puts the project's tools on PATH.
export PATH="$HOME/.cargo/bin:$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/node_modules/.bin:$PATH"
# Trunk 0.21 rejects NO_COLOR=1 and boolean TRUNK_* values of 1.
unset NO_COLOR
