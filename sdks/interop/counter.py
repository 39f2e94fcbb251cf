"""The one place every execution is counted, whichever guard let it run.

POST /execute?k=KEY&guard=NAME&run=RUN_KEY   a guarded handler reports that
    it is executing KEY; the answer says whether this execution is to fail
    ({"outcome": "fail"}: the first execution of a key starting "fail-") or
    succeed. Deciding here, under one lock, makes "the first time" mean the
    first time across all guards.
ANY /upstream/...?k=KEY&ms=N                  the handler behind `idem proxy`:
    reports itself as guard "rust", sleeps N ms, answers 500 or 200.
GET /executions                               every execution, in order.

Usage: counter.py PORT
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

lock = threading.Lock()
executions: list[dict] = []


def record(key: str, guard: str, run_key: str) -> str:
    with lock:
        first = not any(e["key"] == key for e in executions)
        outcome = "fail" if key.startswith("fail-") and first else "ok"
        executions.append({"key": key, "guard": guard, "run_key": run_key, "outcome": outcome, "at": time.monotonic()})
        return outcome


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        if url.path == "/execute":
            self.answer(200, {"outcome": record(query["k"], query["guard"], query["run"])})
        elif url.path.startswith("/upstream/"):
            # The proxy replaces the sender's Idempotency-Key with the run key it claimed.
            outcome = record(query["k"], "rust", self.headers.get("idempotency-key", ""))
            time.sleep(int(query["ms"]) / 1000)
            self.answer(500 if outcome == "fail" else 200, {"guard": "rust", "outcome": outcome})
        elif url.path == "/executions":
            with lock:
                self.answer(200, list(executions))
        else:
            self.answer(404, {"error": "no such path"})

    do_GET = do_POST = do_PUT = handle_any


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()
