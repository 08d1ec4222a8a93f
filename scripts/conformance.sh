#!/usr/bin/env bash
# Checks the model against real servers: starts a throw-away PostgreSQL and a Redis primary
# and two replicas on loopback ports, runs the conformance tests (crates/coordlab-conformance)
# against them, and stops and deletes the servers on exit. Installs Debian's `postgresql`
# and `redis-server` first if they are missing. Redis is three servers, the scenario's
# store-1 (primary), store-2 and store-3 (replicas). Fails, never skips, if a server is missing.
#
#   scripts/conformance.sh            # both suites
#   scripts/conformance.sh postgres   # or one test file: postgres, postgres_advisory, postgres_locks, redis
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

say() { printf '\033[1m[conformance]\033[0m %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif have sudo; then sudo "$@"; else say "need root for: $*"; return 1; fi; }
apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
if [ ! -x "$(pg_bin)/initdb" ]; then
  say "installing PostgreSQL (Debian's postgresql)"
  apt_install postgresql
fi
if ! have redis-server; then
  say "installing Redis (Debian's redis-server)"
  apt_install redis-server
fi
PG_BIN=$(pg_bin)
[ -x "$PG_BIN/initdb" ] || { say "no initdb under /usr/lib/postgresql/*/bin"; exit 1; }

# A free loopback port at or above $1, below the ephemeral range (32768-) so no client
# socket holds it (our own ports: a cluster or service the packages
# started on the default ports is left alone).
free_port() {
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

work=$(mktemp -d /tmp/coordlab-conformance.XXXXXX)
chmod 755 "$work"
# PostgreSQL refuses to run as root: as root, its files and process belong to `postgres`.
if [ "$(id -u)" = 0 ]; then as_pg() { runuser -u postgres -- "$@"; }; else as_pg() { "$@"; }; fi
cleanup() {
  [ -f "$work/pg/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  for pidfile in "$work"/redis-*.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  done
  rm -rf "$work"
}
trap cleanup EXIT

pg_port=$(free_port 25432)
mkdir "$work/pg"
[ "$(id -u)" = 0 ] && chown postgres: "$work/pg"
say "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (data in $work/pg)"
as_pg "$PG_BIN/initdb" -D "$work/pg" -A trust -U postgres -E UTF8 --no-sync >"$work/initdb.log" 2>&1 ||
  { cat "$work/initdb.log"; exit 1; }
as_pg "$PG_BIN/pg_ctl" -D "$work/pg" -l "$work/pg/server.log" -w -o \
  "-c listen_addresses=127.0.0.1 -p $pg_port -k $work/pg -c fsync=off" start >/dev/null ||
  { cat "$work/pg/server.log"; exit 1; }

redis_start() { # name port
  redis-server --bind 127.0.0.1 --port "$2" --save '' --appendonly no --repl-diskless-sync-delay 0 --daemonize yes \
    --dir "$work" --pidfile "$work/redis-$1.pid" --logfile "$work/redis-$1.log"
  for _ in $(seq 100); do
    [ "$(redis-cli -p "$2" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.05
  done
  cat "$work/redis-$1.log"; return 1
}
primary_port=$(free_port 26379)
redis_start primary "$primary_port"
replica_port=$(free_port $((primary_port + 1)))
redis_start replica "$replica_port"
replica_2_port=$(free_port $((replica_port + 1)))
redis_start replica-2 "$replica_2_port"
say "Redis $(redis-server --version | awk '{print $3}' | tr -d v=) primary on 127.0.0.1:$primary_port, replicas on $replica_port and $replica_2_port"

export COORDLAB_PG_URL="postgresql://postgres@127.0.0.1:$pg_port/postgres"
export COORDLAB_REDIS_PRIMARY="127.0.0.1:$primary_port"
export COORDLAB_REDIS_REPLICA="127.0.0.1:$replica_port"
export COORDLAB_REDIS_REPLICA_2="127.0.0.1:$replica_2_port"
export COORDLAB_CONFORMANCE_REQUIRED=1
# The conformance test binaries, from cargo's build of them. Inside scripts/test.sh, right after
# `cargo test --workspace`, the same selection (`--workspace --tests`) finds them built: with
# `-p coordlab-conformance` alone, shared dependencies get other features and about 50 s of
# them compiled again. Run alone, only this package's tests are built.
if [ -n "${COORDLAB_WORKSPACE_TESTS_BUILT:-}" ]; then scope=(--workspace --tests); else scope=(-p coordlab-conformance --tests); fi
# cargo's messages are kept whole first, so a failed build stops here with cargo's own error.
built=$(cargo test "${scope[@]}" --quiet --no-run --message-format=json)
mapfile -t binaries < <(grep '"src_path":"[^"]*/coordlab-conformance/tests/' <<<"$built" |
  grep -o '"executable":"[^"]*"' | cut -d'"' -f4 | sort)
[ "${#binaries[@]}" -gt 0 ] || { say "cargo built no conformance test"; exit 1; }
ran=0
for binary in "${binaries[@]}"; do
  name=$(basename "$binary"); name=${name%-*}
  [ -z "${1:-}" ] || [ "$name" = "$1" ] || continue
  # One test at a time: the PostgreSQL cases share the database's tables.
  "$binary" --quiet --test-threads=1 ${COORDLAB_CONFORMANCE_SHOW:+--nocapture}
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { say "no conformance test named $1"; exit 1; }
