#!/usr/bin/env bash
# Cron-job creates in one organization on both stores: JOBS creates from
# CLIENTS concurrent clients, the rate of the first 100 and of each
# following 1,000, which stays flat when a quota check costs the same
# however many jobs the organization holds.
# Usage: bench/jobs.sh [JOBS] [CLIENTS]   (default 10,000 and 16; PostgreSQL
# from IDEM_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
# a scratch database is created)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
total=${1:-10000}
clients=${2:-16}

run() { # $1: label; rest: store flags
  local label=$1; shift
  # The jobs quota is checked at every create; it is set to allow exactly
  # the jobs the bench makes.
  addr=$(start_server --max-jobs-per-org "$total" "$@")
  echo "== $label: $total job creates, clients=$clients"
  printf 'baseline GET /healthz clients=16 '
  "$bin/idem-bench" get --addr "$addr" --total 20000 --concurrency 16
  "$bin/idem-bench" job-creates --addr "$addr" --key "$key" --total "$total" --concurrency "$clients"
  stop_server
}

run sqlite --data-dir "$work/sqlite"
db="idem_bench_$$"
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
run postgres --database-url "${admin_url%/*}/$db"
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
