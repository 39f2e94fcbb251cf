#!/usr/bin/env bash
# Groups inside a queue beside the same workload without groups, same node
# and run, both stores, release build.
# Usage: bench/groups.sh [tasks] [groups] [limit] [workers] [claim-batch] [large] [large-groups] [pairs]
# PostgreSQL: IDEM_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idem-target}"
cargo build --release -p idem --bin idem --example group_bench
export IDEM_BIN="$CARGO_TARGET_DIR/release/idem"
for store in sqlite postgres; do
  echo "== $store"
  "$CARGO_TARGET_DIR/release/examples/group_bench" "$store" "${1:-20000}" "${2:-1000}" \
    "${3:-4}" "${4:-16}" "${5:-32}" "${6:-1000000}" "${7:-10000}" "${8:-3}"
done
