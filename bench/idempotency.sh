#!/usr/bin/env bash
# What Idempotency-Key costs on a create, and what a replay costs, on both
# stores: the same 20,000 creates without keys, with keys, and again with
# the same keys (replays), from 1 and 16 clients.
# Usage: bench/idempotency.sh  (PostgreSQL from IDEM_BENCH_DATABASE_URL)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

run() {
  local label=$1; shift
  addr=$(start_server "$@")
  for c in 1 16; do
    load() { "$bin/idem-bench" creates --addr "$addr" --key "$key" --total 20000 --concurrency "$c" "$@"; }
    printf '%-9s c=%-3s %-10s ' "$label" "$c" "no-key"; load --prefix "n$c"
    printf '%-9s c=%-3s %-10s ' "$label" "$c" "key"; load --prefix "k$c" --with-keys
    printf '%-9s c=%-3s %-10s ' "$label" "$c" "replay"; load --prefix "k$c" --with-keys
  done
  stop_server
}

run sqlite --data-dir "$work/sqlite"
db="idem_bench_$$"
psql -q "$admin_url" -c "CREATE DATABASE $db"
run postgres --database-url "${admin_url%/*}/$db"
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
