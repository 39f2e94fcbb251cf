#!/usr/bin/env bash
# Batch-create throughput over HTTP on both stores: one client sending
# batches of 1,000 new tasks (`POST /v1/queues/{queue}/tasks:batch`), each
# batch one durable commit; beside it, in the same run, pgbench loading the
# same number of rows of a task's size with `COPY` (one COPY of 1,000 rows
# per transaction), what PostgreSQL itself does with bulk rows.
# Usage: bench/batch.sh [TASKS]   (default 200,000; PostgreSQL from
# IDEM_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
# a scratch database is created)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
total=${1:-200000}

run() { # $1: label; rest: store flags
  local label=$1; shift
  addr=$(start_server "$@")
  printf '%-10s batch create clients=1 ' "$label"
  "$bin/idem-bench" batch-creates --addr "$addr" --key "$key" --total "$total" --batch 1000 --concurrency 1
  stop_server
}

run sqlite --data-dir "$work/sqlite"
db="idem_bench_$$"
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
run postgres --database-url "${admin_url%/*}/$db"
# Baseline: the same number of rows of a task's size (its key columns
# indexed as the tasks' primary key is, a target of the same bytes) loaded by
# one client with COPY, 1,000 rows per transaction, synchronous_commit on as
# Idem's commits are. The rows come from a file the PostgreSQL server reads
# (so the database must run on this machine); a serial key keeps them
# distinct.
psql -q "${admin_url%/*}/$db" -c "CREATE TABLE bench_copy (id BIGSERIAL PRIMARY KEY, org TEXT, queue TEXT, task_id TEXT, target TEXT, created_at BIGINT)" \
  -c "CREATE INDEX ON bench_copy (org, queue, task_id)"
chmod o+rx "$work"
for n in $(seq 1 1000); do
  printf 'default\tbench\tb-%s\t{"url":"http://127.0.0.1:9/hook","json":{"n":%s}}\t0\n' "$n" "$n"
done >"$work/rows.tsv"
chmod o+r "$work/rows.tsv"
echo "COPY bench_copy (org, queue, task_id, target, created_at) FROM '$work/rows.tsv';" >"$work/copy.sql"
batches=$(( (total + 999) / 1000 ))
printf 'postgres   baseline pgbench COPY of 1000 rows clients=1 transactions=%s ' "$batches"
pgbench -n -c 1 -j 1 -t "$batches" -f "$work/copy.sql" "${admin_url%/*}/$db" 2>/dev/null \
  | awk '/^tps/ { printf "rows_per_s=%.0f (%s)\n", $3 * 1000, $0 }'
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
