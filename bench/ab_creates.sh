#!/usr/bin/env bash
# Two builds of `idem` side by side: 1-client SQLite task creates (10,000,
# one in four a duplicate ID), a fresh server for each run, the builds
# alternating for three rounds so that the machine's drift falls on both.
# Usage: bench/ab_creates.sh BEFORE_RELEASE_DIR AFTER_RELEASE_DIR
#   (each a target/release folder holding `idem` and `idem-bench`)
set -euo pipefail
before=$1 after=$2
key="ab-admin-key-0123456789-abcdefghijklmnop"
one() { # label release-dir
  local work addr pid
  work=$(mktemp -d)
  "$2/idem" serve --listen 127.0.0.1:0 --bootstrap-key "$key" --data-dir "$work/data" >"$work/out" 2>"$work/err" &
  pid=$!
  for _ in $(seq 1 100); do
    if addr=$(grep -o 'http://[^ ]*' "$work/out" 2>/dev/null); then break; fi
    sleep 0.1
  done
  printf '%-7s ' "$1"
  "$2/idem-bench" creates --addr "${addr#http://}" --key "$key" --total 10000 --concurrency 1 --prefix ab
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
for _ in 1 2 3; do
  one before "$before"
  one after "$after"
done
