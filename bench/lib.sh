# Shared by the benchmark scripts: builds the release binaries, sets up a
# scratch folder and starts `idem serve` on a free port.
# Sourced with the repository root as the working directory. With
# IDEM_BENCH_BIN set to a folder holding `idem` and `idem-bench` (a release
# build of another revision), those run instead and nothing is built.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idem-target}"
if [ -n "${IDEM_BENCH_BIN:-}" ]; then
  bin=$IDEM_BENCH_BIN
else
  cargo build --release -q -p idem -p idem-bench
  bin="$CARGO_TARGET_DIR/release"
fi
admin_url="${IDEM_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
key="bench-admin-key-$(date +%s)-0123456789abcdef"
work=$(mktemp -d)
trap 'stop_server; rm -rf "$work"' EXIT

# Starts `idem serve` with the given store flags; prints its host:port. It
# runs inside a command substitution, so its PID goes to a file for
# stop_server rather than into this shell's job table.
start_server() {
  # Emptied here, not only by the redirection below, which the background
  # child makes later: the loop could read the previous server's address.
  : >"$work/out"
  "$bin/idem" serve --listen 127.0.0.1:0 --bootstrap-key "$key" "$@" >"$work/out" 2>"$work/err" &
  echo $! >"$work/pid"
  for _ in $(seq 1 100); do
    if addr=$(grep -o 'http://[^ ]*' "$work/out" 2>/dev/null); then echo "${addr#http://}"; return; fi
    sleep 0.1
  done
  cat "$work/err" >&2
  exit 1
}

# Stops the server start_server started, and waits for it to exit.
stop_server() {
  if [ -f "$work/pid" ]; then
    pid=$(cat "$work/pid")
    kill "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    rm -f "$work/pid"
  fi
}
