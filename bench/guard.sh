#!/usr/bin/env bash
# Guard store throughput (claim+finish pairs/s) and the proxy's added latency
# against a same-run direct baseline, release build.
# Usage: bench/guard.sh [seconds-per-store] [concurrency] [latency-samples] [stores] [via]
#   stores: comma-separated, default memory,sqlite,postgres,redis; latency-samples 0
#   skips the proxy latency part; via: store (claim and finish called directly, the
#   default) or layer (each pair a request through Guard::layer, lease renewal included). Group commit check (16 workers, three stores, one run):
#   bench/guard.sh 5 16 0 sqlite,postgres,redis
# PostgreSQL: IDEM_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
# Redis: IDEM_TEST_REDIS_URL (default redis://127.0.0.1:6379).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idem-target}"
seconds=${1:-5}
concurrency=${2:-16}
samples=${3:-2000}
stores=${4:-memory,sqlite,postgres,redis}
via=${5:-store}
cargo build --release -p idem-guard --example guard_bench
"$CARGO_TARGET_DIR/release/examples/guard_bench" "$seconds" "$concurrency" "$samples" "$stores" "$via"
