#!/usr/bin/env bash
# Fuzzes the parsers of user input with a million seeded inputs each (see "Fuzzing the
# parsers" in docs/testing.md): the router and the seed field, the action-script parser, the
# run-request line, and the command line's --set. Fails on any panic or broken property and
# prints, per parser, the inputs run, accepted, rejected, panics and the seed.
#
#   scripts/fuzz.sh                                  a fresh seed, 1,000,000 inputs per parser
#   COORDLAB_FUZZ_SEED=42 scripts/fuzz.sh            that seed again
#   COORDLAB_FUZZ_INPUTS=100000 scripts/fuzz.sh      a shorter run
#
# `cargo test` runs the same harnesses with 20,000 inputs each and seed 1.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

export COORDLAB_FUZZ_INPUTS="${COORDLAB_FUZZ_INPUTS:-1000000}"
# A fresh seed by default, so each long run explores new inputs; it is printed to reproduce.
export COORDLAB_FUZZ_SEED="${COORDLAB_FUZZ_SEED:-$(date +%s)}"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# One test thread: the timings printed are one parser's alone.
fuzz() { cargo test --release --quiet "$@" -- --nocapture --test-threads 1; }

echo "seed $COORDLAB_FUZZ_SEED, $COORDLAB_FUZZ_INPUTS inputs per parser"
started=$SECONDS
step "router (#/play, #/compare, #/embed links) and the seed field"
fuzz -p coordlab-web --bin coordlab-web route_fuzz::
step "action scripts"
fuzz -p coordlab-sim --test fuzz_action_script
step "run-request lines"
fuzz -p coordlab-sim --test fuzz_run_request_line
step "the command line's --set"
fuzz -p coordlab-cli --bin coordlab args_fuzz::
echo
echo "fuzzing done in $((SECONDS - started)) s (building included); seed $COORDLAB_FUZZ_SEED"
