"""A local HTTP server that records what it receives: a target for Idem's
deliveries, or an issuer serving a discovery document and JWKS."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Received:
    method: str
    path: str  # path and query, as on the request line
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


class Receiver:
    def __init__(self, answer: Callable[[Received], tuple[int, Any]] | None = None):
        self.received: list[Received] = []
        self.arrived = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                got = Received(self.command, self.path, list(self.headers.items()), self.rfile.read(length))
                status, body = (answer or (lambda r: (200, {"ok": True})))(got)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                with outer.arrived:
                    outer.received.append(got)
                    outer.arrived.notify_all()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, n: int, timeout: float = 20) -> list[Received]:
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.received) >= n, timeout):
                raise TimeoutError(f"{len(self.received)} of {n} requests arrived")
            return list(self.received)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
