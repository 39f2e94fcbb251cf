#!/usr/bin/env bash
# Everything CI needs for the Python client library, from a clean checkout:
# a venv with the pinned tools (reused while requirements-dev.txt is
# unchanged), the wheel built and used from a fresh virtualenv, the
# generated models checked against the document the binary serves, and the
# tests against the real binary on SQLite and on PostgreSQL, with the guard
# on PostgreSQL and Redis.
#
#   IDEM_BIN                 the idem binary (default: ${CARGO_TARGET_DIR:-<repo>/target}/debug/idem)
#   IDEM_TEST_DATABASE_URL   a PostgreSQL user that may CREATE DATABASE
#                            (default: postgres://postgres@127.0.0.1:5432/test)
#   IDEM_TEST_REDIS_URL      default: redis://127.0.0.1:6379
#   IDEM_SDK_VENV            the tools' venv (default: ~/.cache/idem-sdk-python)
#
# Extra arguments go to pytest (./test.sh -k guard).
set -euo pipefail
cd "$(dirname "$0")"
repo="$(cd ../.. && pwd)"

export IDEM_BIN="${IDEM_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/idem}"
export IDEM_TEST_DATABASE_URL="${IDEM_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
export IDEM_TEST_REDIS_URL="${IDEM_TEST_REDIS_URL:-redis://127.0.0.1:6379}"
if [ ! -x "$IDEM_BIN" ]; then
  echo "no idem binary at $IDEM_BIN: build it (cargo build -p idem) or set IDEM_BIN" >&2
  exit 2
fi

venv="${IDEM_SDK_VENV:-$HOME/.cache/idem-sdk-python}"
if [ ! -x "$venv/bin/python" ] || ! cmp -s requirements-dev.txt "$venv/.requirements-dev.txt"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r requirements-dev.txt
  cp requirements-dev.txt "$venv/.requirements-dev.txt"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== building the wheel"
"$venv/bin/python" -m build --wheel --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
IDEM_SDK_WHEEL="$(ls "$work"/dist/idem_client-*.whl)"
export IDEM_SDK_WHEEL
echo "$IDEM_SDK_WHEEL"

# tests/test_wheel.py installs it into a fresh virtualenv; test_models.py
# is the staleness check; the rest run on both stores.
echo "== pytest"
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
