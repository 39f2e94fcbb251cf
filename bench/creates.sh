#!/usr/bin/env bash
# Task-create throughput over HTTP on both stores: 20,000 creates from 1 and
# from 16 concurrent clients, one in four repeating a task ID (answered 409).
# Usage: bench/creates.sh   (PostgreSQL from IDEM_BENCH_DATABASE_URL, default
# postgres://postgres@127.0.0.1:5432/test; a scratch database is created)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

run() { # $1: label; rest: store flags
  local label=$1; shift
  addr=$(start_server "$@")
  printf '%-10s baseline GET /healthz clients=16 ' "$label"
  "$bin/idem-bench" get --addr "$addr" --total 20000 --concurrency 16
  stop_server
  for c in 1 16; do
    addr=$(start_server "$@")
    printf '%-10s clients=%-3s ' "$label" "$c"
    "$bin/idem-bench" creates --addr "$addr" --key "$key" --total 20000 --concurrency "$c" --prefix "c$c"
    stop_server
  done
}

run sqlite --data-dir "$work/sqlite"
db="idem_bench_$$"
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
run postgres --database-url "${admin_url%/*}/$db"
# Baseline: what this PostgreSQL does with single-row inserts of a task's
# size from 1 and from 16 clients, no HTTP (pgbench-1 and pgbench-16 in
# docs/BENCHMARKS.md).
psql -q "${admin_url%/*}/$db" -c "CREATE TABLE bench_insert (id BIGINT PRIMARY KEY, payload TEXT)"
printf '\\set id random(1, 1000000000)\nINSERT INTO bench_insert VALUES (:id, repeat(%s, 400)) ON CONFLICT DO NOTHING;\n' "'x'" >"$work/insert.sql"
for c in 1 16; do
  printf 'postgres   baseline pgbench INSERT … ON CONFLICT clients=%-3s ' "$c"
  pgbench -n -c "$c" -j "$((c < 2 ? 1 : 2))" -T 10 -r -f "$work/insert.sql" "${admin_url%/*}/$db" 2>/dev/null |
    awk '/^tps/ {tps=$3} /INSERT/ {lat=$1} END {printf "tps=%s mean_latency_ms=%s\n", tps, lat}'
done
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
