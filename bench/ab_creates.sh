#!/usr/bin/env bash
# Builds of `idem` side by side: task creates (AB_TOTAL, default 10,000, one
# in four a duplicate ID) from CONCURRENCY clients on STORE (`sqlite` or
# `postgres`), a fresh server and store for each run, the builds alternating
# for three rounds so that the machine's drift falls on all of them.
# Usage: bench/ab_creates.sh BEFORE_DIR AFTER_DIR [CONCURRENCY] [STORE] [MORE_DIRS…]
#   (BEFORE_DIR holding `idem` and `idem-bench`, the others `idem`: one load
#   generator drives every build; CONCURRENCY defaults to 1, STORE to
#   sqlite; PostgreSQL from IDEM_BENCH_DATABASE_URL, default
#   postgres://postgres@127.0.0.1:5432/test, in a scratch database per run,
#   the server's URL ending in IDEM_BENCH_PG_PARAMS, default ?sslmode=disable:
#   plaintext, as builds from before TLS support speak; '' for libpq's prefer)
# With AB_BATCH=N the load is batch creates instead (`tasks:batch`, N tasks
# a request, every task new) from CONCURRENCY clients; with AB_KEYS=1 every
# create carries an Idempotency-Key of its own; with AB_REPLAY=1 the keyed
# creates run first, untimed, and the line is the same requests again,
# each answered from its key's record (the duplicates' 409s, which are not
# recorded, run again). After each run the line
# `cpu` gives the server's CPU seconds for the run (user + system, from
# /proc, from the start of the timed load), on SQLite those of its writer
# thread alone, and the whole machine's (server, PostgreSQL and the load
# generator together: what a change of the statements costs PostgreSQL
# shows there).
set -euo pipefail
before=$1 after=$2
concurrency=${3:-1}
store=${4:-sqlite}
more=("${@:5}")
total=${AB_TOTAL:-10000}
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
  "$2/idem" serve --listen 127.0.0.1:0 --bootstrap-key "$key" "${flags[@]}" >"$work/out" 2>"$work/err" &
  pid=$!
  for _ in $(seq 1 100); do
    if addr=$(grep -o 'http://[^ ]*' "$work/out" 2>/dev/null); then break; fi
    sleep 0.1
  done
  creates() {
    "$before/idem-bench" creates --addr "${addr#http://}" --key "$key" --total "$total" --concurrency "$concurrency" --prefix ab "$@"
  }
  # The replays' records, made before the timed load.
  if [ -n "${AB_REPLAY:-}" ]; then creates --with-keys >/dev/null; fi
  printf '%-7s %-9s ' "$1" "$store"
  cpu_mark "$pid"
  if [ -n "${AB_BATCH:-}" ]; then
    "$before/idem-bench" batch-creates --addr "${addr#http://}" --key "$key" --total "$total" --batch "$AB_BATCH" --concurrency "$concurrency"
  else
    keyed=${AB_KEYS:-${AB_REPLAY:-}}
    creates ${keyed:+--with-keys}
  fi
  cpu_line "$pid"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  if [ -n "$db" ]; then psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; fi
  rm -rf "$work"
}
cpu_s() { # /proc/…/stat: CPU seconds (utime + stime)
  awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz}' "$1"
}
writer_stat() { # pid: the stat file of SQLite's writer thread, if any
  local t
  for t in /proc/"$1"/task/*; do
    if [ "$(cat "$t/comm")" = idem-sqlite-wri ]; then echo "$t/stat"; fi
  done
}
machine_s() { # CPU seconds of the whole machine so far (user + nice + system)
  awk -v hz="$(getconf CLK_TCK)" '/^cpu / {printf "%.2f", ($2 + $3 + $4) / hz}' /proc/stat
}
cpu_mark() { # pid: the CPU seconds so far, which cpu_line subtracts
  local w
  cpu0=$(cpu_s /proc/"$1"/stat) writer0=0 machine0=$(machine_s)
  w=$(writer_stat "$1")
  if [ -n "$w" ]; then writer0=$(cpu_s "$w"); fi
}
cpu_line() { # pid: CPU seconds since cpu_mark
  local writer="" w
  w=$(writer_stat "$1")
  if [ -n "$w" ]; then writer=$(awk -v a="$(cpu_s "$w")" -v b="$writer0" 'BEGIN {printf " writer_s=%.2f", a - b}'); fi
  awk -v a="$(cpu_s /proc/"$1"/stat)" -v b="$cpu0" -v w="$writer" -v m="$(machine_s)" -v m0="$machine0" \
    'BEGIN {printf "        cpu server_s=%.2f%s machine_s=%.2f\n", a - b, w, m - m0}'
}
for _ in 1 2 3; do
  one before "$before"
  one after "$after"
  for dir in "${more[@]}"; do one "$(basename "$dir")" "$dir"; done
done
