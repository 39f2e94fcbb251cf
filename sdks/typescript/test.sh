#!/usr/bin/env bash
# Everything CI needs for the TypeScript library, from a clean checkout:
# install, build, check the generated types against the server's OpenAPI
# document, pack, and run the tests against the real server on SQLite and
# PostgreSQL (and the guard on PostgreSQL and Redis).
#
#   IDEM_BIN                 the server binary (default ${CARGO_TARGET_DIR:-<repo>/target}/debug/idem)
#   IDEM_TEST_DATABASE_URL   a PostgreSQL server the tests make (and drop) databases on
#                            (default postgres://postgres@127.0.0.1:5432/test)
#   IDEM_TEST_REDIS_URL      a Redis server (default redis://127.0.0.1:6379)
set -euo pipefail
cd "$(dirname "$0")"
repo="$(cd ../.. && pwd)"
export IDEM_BIN="${IDEM_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/idem}"
export IDEM_TEST_DATABASE_URL="${IDEM_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
export IDEM_TEST_REDIS_URL="${IDEM_TEST_REDIS_URL:-redis://127.0.0.1:6379}"
if [ ! -x "$IDEM_BIN" ]; then
  echo "test.sh: no idem binary at $IDEM_BIN (cargo build -p idem, or set IDEM_BIN)" >&2
  exit 1
fi

npm ci --no-audit --no-fund
npm run build
npm run check-types

packed="$(mktemp -d)"
trap 'rm -rf "$packed"' EXIT
npm pack --ignore-scripts --pack-destination "$packed" --silent >/dev/null
IDEM_TS_TARBALL="$(ls "$packed"/*.tgz)"
export IDEM_TS_TARBALL

node --test --test-concurrency=2 test/
