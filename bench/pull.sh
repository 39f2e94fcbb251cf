#!/usr/bin/env bash
# Pull-queue drain beside push dispatch, same node and run, both stores,
# release build. Usage: bench/pull.sh [tasks] [workers] [claim-batch]
# PostgreSQL: IDEM_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idem-target}"
tasks=${1:-20000}
workers=${2:-16}
batch=${3:-32}
cargo build --release -p idem --bin idem --example pull_bench
export IDEM_BIN="$CARGO_TARGET_DIR/release/idem"
for store in sqlite postgres; do
  echo "== $store"
  "$CARGO_TARGET_DIR/release/examples/pull_bench" "$store" "$tasks" "$workers" "$batch"
done
