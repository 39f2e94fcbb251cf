#!/usr/bin/env bash
# What Idempotency-Key costs on a create, and what a replay costs, on both
# stores: the same 20,000 creates without keys, with keys, and again with
# the same keys (replays), from 1 and 16 clients.
# Usage: bench/idempotency.sh  (PostgreSQL from IDEM_BENCH_DATABASE_URL)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idem-target}"
cargo build --release -q -p idem -p idem-bench
bin="$CARGO_TARGET_DIR/release"
admin_url="${IDEM_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
key="bench-admin-key-$(date +%s)"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

start_server() {
  "$bin/idem" serve --listen 127.0.0.1:0 --bootstrap-key "$key" "$@" >"$work/out" 2>"$work/err" &
  for _ in $(seq 1 100); do
    if addr=$(grep -o 'http://[^ ]*' "$work/out" 2>/dev/null); then echo "${addr#http://}"; return; fi
    sleep 0.1
  done
  cat "$work/err" >&2; exit 1
}

run() {
  local label=$1; shift
  addr=$(start_server "$@")
  for c in 1 16; do
    load() { "$bin/idem-bench" creates --addr "$addr" --key "$key" --total 20000 --concurrency "$c" "$@"; }
    printf '%-9s c=%-3s %-10s ' "$label" "$c" "no-key"; load --prefix "n$c"
    printf '%-9s c=%-3s %-10s ' "$label" "$c" "key"; load --prefix "k$c" --with-keys
    printf '%-9s c=%-3s %-10s ' "$label" "$c" "replay"; load --prefix "k$c" --with-keys
  done
  kill %1 2>/dev/null || true; wait 2>/dev/null || true
}

run sqlite --data-dir "$work/sqlite"
db="idem_bench_$$"
psql -q "$admin_url" -c "CREATE DATABASE $db"
run postgres --database-url "${admin_url%/*}/$db"
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
