#!/usr/bin/env bash
# The reads of one full queue on SQLite: 100,000 tasks in a paused queue
# (half due, half scheduled ahead, the worst case for the scheduled count),
# then p50/p99 of GET /v1/queues/{q} (with its stats), of the first page of
# its tasks, of a page from the middle (through page tokens) and of the first
# page of its queued tasks, 2,000 requests each from 4 clients.
# Usage: bench/queue_reads.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

addr=$(start_server --data-dir "$work/sqlite")
auth="authorization: Bearer $key"
curl -sf -X POST -H "$auth" -H 'content-type: application/json' \
  -d '{"name": "big"}' "http://$addr/v1/queues" >/dev/null
curl -sf -X POST -H "$auth" "http://$addr/v1/queues/big/pause" >/dev/null
printf 'fill due       '
"$bin/idem-bench" creates --addr "$addr" --key "$key" --queue big --total 50000 \
  --concurrency 16 --duplicate-every 0 --prefix due --schedule-time now
printf 'fill scheduled '
"$bin/idem-bench" creates --addr "$addr" --key "$key" --queue big --total 50000 \
  --concurrency 16 --duplicate-every 0 --prefix ahead
"$bin/idem-bench" queue-reads --addr "$addr" --key "$key" --queue big --total 2000 --concurrency 4
