#!/usr/bin/env bash
# Builds of `idem` side by side: job creates in one organization (JOBS,
# default 10,000, from CLIENTS, default 16) on STORE (`sqlite` or
# `postgres`), a fresh server and store for each run, the builds
# alternating for ROUNDS rounds (default 3, the pair's order swapped every
# other round) so that the machine's drift falls on both. Each line is
# idem-bench's: the rate of the first 100 jobs, of each following 1,000,
# and of all. The jobs quota allows exactly the jobs the bench makes.
# Usage: bench/ab_jobs.sh BEFORE_DIR AFTER_DIR [STORE] [JOBS] [CLIENTS] [ROUNDS]
#   (BEFORE_DIR holding `idem` and `idem-bench`, AFTER_DIR `idem`;
#   PostgreSQL from IDEM_BENCH_DATABASE_URL, default
#   postgres://postgres@127.0.0.1:5432/test, a scratch database per run,
#   with IDEM_BENCH_PG_PARAMS appended to its URL, default ?sslmode=disable)
set -euo pipefail
before=$1 after=$2
store=${3:-postgres}
total=${4:-10000}
clients=${5:-16}
rounds=${6:-3}
admin_url="${IDEM_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
key="ab-admin-key-0123456789-abcdefghijklmnop"
one() { # label release-dir
  local work addr pid flags db=""
  work=$(mktemp -d)
  if [ "$store" = postgres ]; then
    db="idem_ab_$$_$RANDOM"
    psql -q "$admin_url" -c "CREATE DATABASE $db"
    flags=(--database-url "${admin_url%/*}/$db${IDEM_BENCH_PG_PARAMS-?sslmode=disable}")
  else
    flags=(--data-dir "$work/data")
  fi
  "$2/idem" serve --listen 127.0.0.1:0 --bootstrap-key "$key" --max-jobs-per-org "$total" \
    "${flags[@]}" >"$work/out" 2>"$work/err" &
  pid=$!
  for _ in $(seq 1 100); do
    if addr=$(grep -o 'http://[^ ]*' "$work/out" 2>/dev/null); then break; fi
    sleep 0.1
  done
  echo "== $1 $store"
  "$before/idem-bench" job-creates --addr "${addr#http://}" --key "$key" --total "$total" --concurrency "$clients"
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  if [ -n "$db" ]; then psql -q "$admin_url" -c "DROP DATABASE $db WITH (FORCE)"; fi
  rm -rf "$work"
}
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then
    one before "$before"; one after "$after"
  else
    one after "$after"; one before "$before"
  fi
done
