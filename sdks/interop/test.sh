#!/usr/bin/env bash
# A Rust `idem proxy`, a TypeScript guard and a Python guard on one
# PostgreSQL store, then on one Redis, see each other's claims: each run
# executes once whichever guard gets each retry.
#
# Needs what sdks/typescript/test.sh and sdks/python/test.sh leave behind
# (CI runs them just before): the TypeScript package built in
# sdks/typescript/dist with its node_modules, and the Python tools' venv.
#
#   IDEM_BIN                 the idem binary (default ${CARGO_TARGET_DIR:-<repo>/target}/debug/idem)
#   IDEM_TEST_DATABASE_URL   a PostgreSQL user that may CREATE DATABASE
#                            (default postgres://postgres@127.0.0.1:5432/test)
#   IDEM_TEST_REDIS_URL      default redis://127.0.0.1:6379
#   IDEM_SDK_VENV            the Python venv (default ~/.cache/idem-sdk-python)
set -euo pipefail
cd "$(dirname "$0")"
here="$(pwd)"
repo="$(cd ../.. && pwd)"

IDEM_BIN="${IDEM_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/idem}"
database_url="${IDEM_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
redis_url="${IDEM_TEST_REDIS_URL:-redis://127.0.0.1:6379}"
venv="${IDEM_SDK_VENV:-$HOME/.cache/idem-sdk-python}"
ts="$repo/sdks/typescript"

missing() {
  echo "interop/test.sh: $1" >&2
  exit 2
}
[ -x "$IDEM_BIN" ] || missing "no idem binary at $IDEM_BIN (cargo build -p idem, or set IDEM_BIN)"
[ -f "$ts/dist/index.js" ] && [ -d "$ts/node_modules/express" ] ||
  missing "the TypeScript package is not built in $ts (run sdks/typescript/test.sh first)"
[ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import psycopg, redis, uvicorn, httpx" 2>/dev/null ||
  missing "no usable Python venv at $venv (run sdks/python/test.sh first, or set IDEM_SDK_VENV)"

py="$venv/bin/python"
# The Python package is used from its source, as its own tests use it.
export PYTHONPATH="$repo/sdks/python/src"
work="$(mktemp -d)"
pids=()
database=""

stop_all() {
  local pid i
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  pids=()
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_all
  if [ -n "$database" ]; then
    "$py" stores.py dropdb "$database_url" "$database" || echo "interop/test.sh: could not drop database $database" >&2
  fi
  if [ -s "$work/keys.redis" ]; then
    "$py" stores.py redis-clean "$redis_url" "$work/keys.redis" || echo "interop/test.sh: could not remove the Redis keys in $work/keys.redis" >&2
  fi
  if [ "$status" -ne 0 ]; then
    for log in "$work"/*.log; do
      if [ -s "$log" ]; then echo "--- $(basename "$log")"; tail -n 30 "$log"; fi
    done >&2
  fi
  rm -rf "$work"
  exit "$status"
}
interrupted() { exit 130; }
trap cleanup EXIT
trap interrupted INT TERM

free_port() {
  "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start NAME PORT COMMAND...: runs it in the background, logging to NAME.log,
# and waits until it accepts connections on PORT.
start() {
  local name=$1 port=$2 i
  shift 2
  "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  for i in $(seq 150); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "interop/test.sh: $name exited at start" >&2; return 1; }
    sleep 0.1
  done
  echo "interop/test.sh: $name did not listen on $port within 15 s" >&2
  return 1
}

# on_store NAME STORE_URL: the three guards on that store, then the driver.
on_store() {
  local name=$1 store=$2
  local counter_port proxy_port ts_port py_port
  counter_port=$(free_port)
  proxy_port=$(free_port)
  ts_port=$(free_port)
  py_port=$(free_port)
  local counter="http://127.0.0.1:$counter_port"
  start "$name-counter" "$counter_port" "$py" counter.py "$counter_port"
  # warn: at info the proxy logs every 409, burying what matters in the log printed on failure.
  start "$name-proxy" "$proxy_port" env IDEM_LOG=warn "$IDEM_BIN" proxy --listen "127.0.0.1:$proxy_port" \
    --upstream "$counter/upstream" --store "$store" --insecure-no-auth
  start "$name-typescript" "$ts_port" node app.mjs "$ts_port" "$store" "$counter"
  start "$name-python" "$py_port" "$py" app.py "$py_port" "$store" "$counter"
  "$py" driver.py "$name" "$counter" "$work/keys.$name" \
    rust="http://127.0.0.1:$proxy_port" \
    typescript="http://127.0.0.1:$ts_port" \
    python="http://127.0.0.1:$py_port"
  stop_all
}

database="idem_interop_$("$py" -c 'import secrets; print(secrets.token_hex(6))')"
postgres_url="$("$py" stores.py createdb "$database_url" "$database")"
on_store postgres "$postgres_url"
on_store redis "$redis_url"
