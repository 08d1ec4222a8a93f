#!/usr/bin/env bash
# Size report for the web build: what a visitor downloads on first load.
#
# Usage: scripts/size-report.sh [DIST_DIR]      (default: dist)
#
# Run it after `trunk build --release`. For every .wasm, .js, .css and .html file in
# DIST_DIR (searched recursively, e.g. snippets/), prints its size in bytes and its size
# after `gzip -9`, then a total for all of them: the whole first download.
# Needs only bash, coreutils and gzip.
set -euo pipefail

dist="${1:-dist}"
while [[ "$dist" == */ && "$dist" != / ]]; do dist="${dist%/}"; done
if [[ ! -d "$dist" ]]; then
    echo "size-report: no such directory: $dist (run \`trunk build --release\` first?)" >&2
    exit 1
fi
command -v gzip >/dev/null || { echo "size-report: gzip not found" >&2; exit 1; }

# Files, sorted by path for a stable report (NUL-separated: safe for any file name).
files=()
while IFS= read -r -d '' f; do
    files+=("$f")
done < <(find "$dist" -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' -o -name '*.html' \) -print0 | LC_ALL=C sort -z)

if [[ ${#files[@]} -eq 0 ]]; then
    echo "size-report: no .wasm, .js, .css or .html files in $dist" >&2
    exit 1
fi

# Human-readable size, integer arithmetic only: 1234567 -> "1.18 MiB".
human() {
    local b=$1
    if (( b >= 1048576 )); then
        printf '%d.%02d MiB' $(( b / 1048576 )) $(( b % 1048576 * 100 / 1048576 ))
    elif (( b >= 1024 )); then
        printf '%d.%01d KiB' $(( b / 1024 )) $(( b % 1024 * 10 / 1024 ))
    else
        printf '%d B' "$b"
    fi
}

names=()
raws=()
gzs=()
width=4 # "file"
total_raw=0
total_gz=0
for f in "${files[@]}"; do
    name="${f#"$dist"/}"
    raw=$(wc -c <"$f")
    gz=$(gzip -9 -n -c -- "$f" | wc -c) # -n: no name/mtime in the header, as in HTTP gzip
    raw=$(( raw + 0 )) # strip wc's padding
    gz=$(( gz + 0 ))
    names+=("$name")
    raws+=("$raw")
    gzs+=("$gz")
    (( ${#name} > width )) && width=${#name}
    total_raw=$(( total_raw + raw ))
    total_gz=$(( total_gz + gz ))
done
plural=s; (( ${#files[@]} == 1 )) && plural=
total_name="total (${#files[@]} file${plural}, first download)"
(( ${#total_name} > width )) && width=${#total_name}

row() { printf "%-${width}s  %12s  %12s  %10s  %10s\n" "$@"; }
rule() { printf '%*s\n' $(( width + 54 )) '' | tr ' ' '-'; }

echo "size report for $dist"
row "file" "bytes" "gzip -9" "size" "gzipped"
rule
for i in "${!names[@]}"; do
    row "${names[$i]}" "${raws[$i]}" "${gzs[$i]}" "$(human "${raws[$i]}")" "$(human "${gzs[$i]}")"
done
rule
row "$total_name" "$total_raw" "$total_gz" "$(human "$total_raw")" "$(human "$total_gz")"
