#!/usr/bin/env bash
# Scheduler lag on both stores, release build: N jobs due every minute, the
# time from each scheduled instant to the target receiving the run.
# Usage: bench/scheduler.sh [jobs] [rounds]
# PostgreSQL: IDEM_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idem-target}"
jobs=${1:-10000}
rounds=${2:-2}
cargo build --release -p idem --bin idem --example scheduler_bench
export IDEM_BIN="$CARGO_TARGET_DIR/release/idem"
for store in sqlite postgres; do
  echo "== $store"
  "$CARGO_TARGET_DIR/release/examples/scheduler_bench" "$store" "$jobs" "$rounds"
done
