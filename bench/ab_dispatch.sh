#!/usr/bin/env bash
# Two builds of `idem` side by side: dispatch throughput and create-to-
# delivery latency on both stores, the builds alternating for two rounds so
# that the machine's drift falls on both.
# Usage: bench/ab_dispatch.sh BEFORE_DIR AFTER_DIR [tasks] [latency-samples]
#   (each a folder holding `idem` and the `dispatch_bench` example)
# PostgreSQL: IDEM_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
set -euo pipefail
before=$1 after=$2
tasks=${3:-10000}
samples=${4:-200}
one() { # label dir store
  printf '%-7s %-9s ' "$1" "$3"
  IDEM_BIN="$2/idem" "$2/dispatch_bench" "$3" "$tasks" "$samples" | tr '\n' ' '
  echo
}
for _ in 1 2; do
  for store in sqlite postgres; do
    one before "$before" "$store"
    one after "$after" "$store"
  done
done
