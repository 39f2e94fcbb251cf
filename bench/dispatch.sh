#!/usr/bin/env bash
# Dispatch throughput and create-to-delivery latency on both stores, release
# build. Usage: bench/dispatch.sh [tasks] [latency-samples]
# PostgreSQL: IDEM_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idem-target}"
tasks=${1:-20000}
samples=${2:-300}
cargo build --release -p idem --bin idem --example dispatch_bench
export IDEM_BIN="$CARGO_TARGET_DIR/release/idem"
for store in sqlite postgres; do
  echo "== $store"
  "$CARGO_TARGET_DIR/release/examples/dispatch_bench" "$store" "$tasks" "$samples"
done
