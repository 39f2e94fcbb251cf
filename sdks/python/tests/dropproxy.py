"""A TCP proxy that loses answers: the first ``drop`` connections reach the
server, which does the work, but the client sees its connection closed as
soon as the answer starts. What a client meets when a response is lost."""

from __future__ import annotations

import re
import socket
import threading


class DropProxy:
    def __init__(self, upstream_port: int, drop: int = 1):
        self.upstream = ("127.0.0.1", upstream_port)
        self.drop = drop
        self.requests: list[bytes] = []
        self._lock = threading.Lock()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def idempotency_keys(self) -> list[str]:
        with self._lock:
            seen = b"".join(self.requests)
        return [k.decode() for k in re.findall(rb"(?im)^idempotency-key:\s*(.+?)\r$", seen)]

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                drop = self.drop > 0
                self.drop -= 1 if drop else 0
            threading.Thread(target=self._serve, args=(client, drop), daemon=True).start()

    def _serve(self, client: socket.socket, drop: bool) -> None:
        upstream = socket.create_connection(self.upstream)

        def forward_requests() -> None:
            try:
                while data := client.recv(65536):
                    with self._lock:
                        self.requests.append(data)
                    upstream.sendall(data)
            except OSError:
                pass
            finally:
                try:
                    upstream.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

        threading.Thread(target=forward_requests, daemon=True).start()
        try:
            while data := upstream.recv(65536):
                if drop:
                    # The server answered, so the work is done; the client
                    # never hears of it.
                    break
                client.sendall(data)
        except OSError:
            pass
        finally:
            for s in (client, upstream):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
