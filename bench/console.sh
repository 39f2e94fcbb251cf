#!/usr/bin/env bash
# The console with 100,000 tasks in one queue, on SQLite: a queue's page
# (the queue and its first 50 tasks), a state tab, the next page, and a task
# ID prefix, each from 4 concurrent clients with one session.
# Usage: bench/console.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

addr=$(start_server --data-dir "$work/sqlite")
# The bench's tasks are scheduled far ahead: none is dispatched meanwhile.
printf 'seed      '
"$bin/idem-bench" creates --addr "$addr" --key "$key" --total 100000 --concurrency 16 \
  --duplicate-every 1000000 --prefix t
# The login form's token comes with its cookie, as a browser gets them.
login=$(curl -sf -c "$work/jar" "http://$addr/ui/login" | sed -n 's/.*name="login" value="\([^"]*\)".*/\1/p')
session=$(curl -s -D - -o /dev/null -b "$work/jar" -X POST "http://$addr/ui/login" \
  --data-urlencode "key=$key" --data-urlencode "login=$login" \
  | sed -n 's/^set-cookie: \(idem_console=[^;]*\).*/\1/ip')
token=$(curl -sf "http://$addr/v1/queues/bench/tasks?limit=50" -H "Authorization: Bearer $key" \
  | sed -n 's/.*"next_page_token":"\([^"]*\)".*/\1/p')
for path in "/ui/queues/bench" "/ui/queues/bench?state=scheduled" \
  "/ui/queues/bench?page_token=$token" "/ui/queues/bench?id_prefix=t-9999" "/ui/queues"; do
  printf '%-48s ' "$path" | cut -c1-49 | tr -d '\n'
  "$bin/idem-bench" get --addr "$addr" --path "$path" --cookie "$session" --total 2000 --concurrency 4
done
