#!/usr/bin/env bash
# What one-client task creates cost PostgreSQL, per request, for builds side
# by side: the WAL records and bytes (full-page images left out) the
# database of the run received, read back with pg_walinspect, and the CPU
# time of its backends. The WAL figures are counts, the same from run to
# run, so they compare builds on a machine too noisy to time them; the CPU
# figure is a time and as noisy as the machine.
# Usage: bench/pg_cost.sh N DIR [DIR…]   (each DIR holding a release `idem`;
#   the first also `idem-bench`, which drives every build; N creates, one in
#   four a duplicate ID, after 300 to warm up; PostgreSQL from
#   IDEM_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test,
#   a superuser (pg_walinspect), in a scratch database per build; the
#   server connects without TLS unless IDEM_BENCH_PG_PARAMS says otherwise
#   ('' for libpq's prefer, as bench/ab_creates.sh);
#   with PG_COST_KEYS=1 every create carries an Idempotency-Key of its own;
#   PG_COST_CLIENTS=C sends the creates from C clients instead of one)
set -euo pipefail
n=$1
shift
dirs=("$@")
admin_url="${IDEM_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
params="${IDEM_BENCH_PG_PARAMS-?sslmode=disable}"
key="ab-admin-key-0123456789-abcdefghijklmnop"
for dir in "${dirs[@]}"; do
  work=$(mktemp -d)
  db="idem_cost_$$_$RANDOM"
  url="${admin_url%/*}/$db"
  psql -q "$admin_url" -c "CREATE DATABASE $db"
  psql -q "$url" -c "CREATE EXTENSION pg_walinspect"
  "$dir/idem" serve --listen 127.0.0.1:0 --bootstrap-key "$key" --database-url "$url$params" >"$work/out" 2>"$work/err" &
  pid=$!
  for _ in $(seq 1 100); do
    if addr=$(grep -o 'http://[^ ]*' "$work/out" 2>/dev/null); then break; fi
    sleep 0.1
  done
  creates() {
    "${dirs[0]}/idem-bench" creates --addr "${addr#http://}" --key "$key" --concurrency "${PG_COST_CLIENTS:-1}" ${PG_COST_KEYS:+--with-keys} "$@"
  }
  creates --total 300 --prefix warm >/dev/null
  backends=$(psql -qAt "$url" -c "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE datname = '$db'")
  ticks() {
    local t=0 p
    for p in $backends; do
      if [ -r "/proc/$p/stat" ]; then t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); fi
    done
    echo "$t"
  }
  t0=$(ticks)
  lsn=$(psql -qAt "$url" -c "SELECT pg_current_wal_insert_lsn()")
  line=$(creates --total "$n" --prefix cost)
  t1=$(ticks)
  wal=$(psql -qAt "$url" -c "SELECT round(count(*)::numeric / $n, 2) || ' ' || round(sum(record_length - fpi_length)::numeric / $n, 1)
    FROM pg_get_wal_records_info('$lsn', pg_current_wal_flush_lsn())
    WHERE block_ref ~ ('/' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/')
       OR (resource_manager = 'Transaction' AND xid IN (SELECT xid FROM pg_get_wal_records_info('$lsn', pg_current_wal_flush_lsn())
           WHERE block_ref ~ ('/' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/')))")
  printf '%-24s wal_records_per_req=%s wal_bytes_per_req=%s backend_cpu_ms_per_req=%s %s\n' \
    "$(basename "$dir")" "${wal% *}" "${wal#* }" \
    "$(awk -v a="$t0" -v b="$t1" -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", (b - a) * 1000 / hz / n}')" \
    "$(echo "$line" | grep -o 'requests_per_s=[0-9]*')"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
  rm -rf "$work"
done
